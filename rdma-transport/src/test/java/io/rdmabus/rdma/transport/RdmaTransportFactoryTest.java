package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmabus.Bus;
import io.rdmabus.BusConfigurationException;
import io.rdmabus.Delivery;
import io.rdmabus.spi.StaticSeedDiscovery;
import io.rdmabus.spi.Transport;
import io.rdmabus.spi.TransportFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Host-side checks (no RDMA device needed): discovery through ServiceLoader, availability probing, property validation. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RdmaTransportFactoryTest {
    private final RdmaTransportFactory factory = new RdmaTransportFactory();

    @Test
    void serviceLoaderFindsTheRdmaFactoryWithTheHighestPriority() {
        TransportFactory found = ServiceLoader.load(TransportFactory.class).stream().map(ServiceLoader.Provider::get)
                .filter(f -> f.name().equals("rdma")).findFirst().orElseThrow(() -> new AssertionError("no 'rdma' TransportFactory"));
        assertEquals(RdmaTransportFactory.class, found.getClass());
        assertTrue(found.priority() > 50, "rdma must rank above aeron (50) and tcp (10) for 'auto'");
    }

    @Test
    void withoutSysfsInfinibandTheFactoryIsUnavailableWithAClearReasonAndNoNativeLoad() {
        // On the build host /sys/class/infiniband does not exist (RXE-LAB.md); inside the rxe lab it does.
        String reason = factory.unavailableReason();
        if (!Files.isDirectory(RdmaDevices.SYSFS)) {
            assertNotNull(reason, "no /sys/class/infiniband but the factory says it is available");
            assertTrue(reason.contains("no RDMA device") && reason.contains("/sys/class/infiniband"), reason);
        } else if (RdmaDevices.ports().stream().anyMatch(RdmaDevices.DevicePort::active)) {
            assertNull(reason, "an ACTIVE port exists: " + RdmaDevices.ports());
        } else {
            assertNotNull(reason);
            assertTrue(reason.contains("ACTIVE"), reason);
        }
    }

    @Test
    void selectingRdmaOnAHostWithoutDeviceFailsAtBuildWithTheReason() {
        if (Files.isDirectory(RdmaDevices.SYSFS)) {
            return; // only meaningful without RDMA; the lab runs the TCK instead
        }
        BusConfigurationException e = assertThrows(BusConfigurationException.class,
                () -> Bus.builder().name("no-rdma").transport("rdma").discovery(StaticSeedDiscovery.none()).build());
        assertTrue(e.getMessage().contains("rdma") && e.getMessage().contains("no RDMA device"), e.getMessage());
    }

    @Test
    void sysfsProbeReadsDevicesPortsStatesAndNetdevs(@TempDir final Path root) throws IOException {
        write(root.resolve("rxe0/ports/1/state"), "4: ACTIVE\n");
        write(root.resolve("rxe0/ports/1/gid_attrs/ndevs/0"), "eth0\n");
        write(root.resolve("mlx5_0/ports/1/state"), "1: DOWN\n");
        List<RdmaDevices.DevicePort> ports = RdmaDevices.ports(root);
        assertEquals(List.of(new RdmaDevices.DevicePort("mlx5_0", 1, false, null), new RdmaDevices.DevicePort("rxe0", 1, true, "eth0")),
                ports);
        assertEquals(List.of(), RdmaDevices.ports(root.resolve("absent")));
    }

    @Test
    void unknownPropertiesAreRejectedListingTheKnownOnes() {
        BusConfigurationException e = assertThrows(BusConfigurationException.class, () -> factory.create(Map.of("rdma.devcie", "rxe0")));
        assertTrue(e.getMessage().contains("rdma.devcie"), e.getMessage());
        for (String key : RdmaTransportConfig.knownProperties().keySet()) {
            assertTrue(e.getMessage().contains(key), "message does not list " + key + ": " + e.getMessage());
        }
    }

    @Test
    void badValuesFailFastSayingWhatIsAccepted() {
        assertBad(Map.of(RdmaTransportConfig.PORT, "0"), "rdma.port");
        assertBad(Map.of(RdmaTransportConfig.PORT, "one"), "integer");
        assertBad(Map.of(RdmaTransportConfig.BIND, "eth0"), "IPv4");
        assertBad(Map.of(RdmaTransportConfig.CM_PORT_BASE, "70000"), "rdma.cm.port.base");
        assertBad(Map.of(RdmaTransportConfig.FRAME_BYTES, "64"), "256..1048576");
        assertBad(Map.of(RdmaTransportConfig.RECV_BUFFERS, "16"), "rdma.recv.buffers");
        assertBad(Map.of(RdmaTransportConfig.SEND_BUFFERS, "1"), "rdma.send.buffers");
        assertBad(Map.of(RdmaTransportConfig.UD_PAYLOAD_BYTES, "9000"), "rdma.ud.payload.bytes");
        // the retention window must hold at least the in-flight send slots, and stay a bounded amount of registered memory
        assertBad(Map.of(RdmaTransportConfig.RETENTION_FRAMES, "64"), "rdma.retention.frames");
        assertBad(Map.of(RdmaTransportConfig.RETENTION_FRAMES, "64"), "rdma.send.buffers (128)");
        assertBad(Map.of(RdmaTransportConfig.RETENTION_FRAMES, "70000"), "rdma.retention.frames");
        assertBad(Map.of(RdmaTransportConfig.RETENTION_FRAMES, "65536", RdmaTransportConfig.FRAME_BYTES, "65536"), "rdma.frame.bytes");
        assertBad(Map.of(RdmaTransportConfig.RETENTION_RESUME_MS, "-1"), "rdma.retention.resume.ms");
        assertBad(Map.of(RdmaTransportConfig.KEEPALIVE_MS, "5"), "0 (never) or 10..600000");
        assertBad(Map.of(RdmaTransportConfig.SEND_STALL_MS, "500"), "rdma.send.stall.ms");
        assertBad(Map.of(RdmaTransportConfig.SEND_STALL_MS, "500"), "0 (never) or 1000..3600000");
        assertBad(Map.of(RdmaTransportConfig.COMMAND_TIMEOUT_MS, "50"), "rdma.command.timeout.ms");
        assertBad(Map.of(RdmaTransportConfig.COMMAND_TIMEOUT_MS, "600001"), "100..600000");
        assertBad(Map.of(RdmaTransportConfig.ACK_TIMEOUT_EXP, "32"), "rdma.ack.timeout.exp");
        assertBad(Map.of(RdmaTransportConfig.ACK_TIMEOUT_EXP, "-1"), "0 (the kernel's) or 1..31");
        RdmaTransportConfig defaults = RdmaTransportConfig.parse(Map.of());
        assertEquals(0, defaults.ackTimeoutExp(), "the kernel chooses unless set");
        assertEquals(14, RdmaTransportConfig.parse(Map.of(RdmaTransportConfig.ACK_TIMEOUT_EXP, "14")).ackTimeoutExp());
        assertEquals(1024, defaults.retentionFrames());
        assertEquals(30_000, defaults.retentionResumeMs());
        assertEquals(1000, defaults.keepaliveMs());
        assertEquals(10_000, defaults.sendStallMs());
        assertEquals(3000, defaults.commandTimeoutMs());
        assertEquals(0, RdmaTransportConfig.parse(Map.of(RdmaTransportConfig.SEND_STALL_MS, "0")).sendStallMs());
        assertEquals(0, RdmaTransportConfig.parse(Map.of(RdmaTransportConfig.KEEPALIVE_MS, "0")).keepaliveMs());
        assertEquals(16, RdmaTransportConfig.parse(Map.of(RdmaTransportConfig.RETENTION_FRAMES, "16", RdmaTransportConfig.SEND_BUFFERS, "16"))
                .retentionFrames());
    }

    @Test
    void theBusSecretIsValidatedAndTheHandshakeProofsAreBoundToRoleIdsAndNonces(@TempDir final Path dir)
            throws Exception {
        assertBad(Map.of(AuthConfig.SECRET, "short"), "at least 16");
        assertBad(Map.of(AuthConfig.SECRET, "0123456789abcdef", AuthConfig.SECRET_FILE, "/x"), "only one of");
        assertBad(Map.of(AuthConfig.SECRET_FILE, dir.resolve("absent").toString()), "rdma.secret.file");
        Path file = dir.resolve("secret");
        Files.writeString(file, "0123456789abcdef0123\n");
        io.rdmabus.spi.BusSecret fromFile = RdmaTransportConfig.parse(Map.of(AuthConfig.SECRET_FILE, file.toString())).auth();
        assertTrue(fromFile.enabled());
        assertEquals(20, fromFile.key().length, "the trailing newline is not part of the secret");
        assertFalse(fromFile.toString().contains("0123"), "toString must not reveal the secret");
        assertTrue(RdmaTransportConfig.parse(Map.of()).auth().unset());
        io.rdmabus.spi.BusSecret none = RdmaTransportConfig.parse(Map.of(AuthConfig.SECRET, "none")).auth();
        assertFalse(none.enabled());
        assertFalse(none.unset());

        io.rdmabus.spi.BusSecret key = fromFile;
        byte[] n1 = PeerAuth.nonce();
        byte[] n2 = PeerAuth.nonce();
        byte[] p = PeerAuth.proof(key, PeerAuth.ROLE_CONNECTOR, 1, 2, n1, n2);
        // the wire proof is unchanged by the move to BusSecret: HMAC-SHA256(secret, label | role | prover id | verifier id | nonces)
        javax.crypto.Mac mac = javax.crypto.Mac.getInstance("HmacSHA256");
        mac.init(new javax.crypto.spec.SecretKeySpec("0123456789abcdef0123".getBytes(java.nio.charset.StandardCharsets.UTF_8), "HmacSHA256"));
        mac.update("rdma-bus auth v1".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        mac.update(PeerAuth.ROLE_CONNECTOR);
        mac.update(java.nio.ByteBuffer.allocate(16).order(java.nio.ByteOrder.LITTLE_ENDIAN).putLong(1).putLong(2).array());
        mac.update(n1);
        mac.update(n2);
        assertTrue(java.util.Arrays.equals(mac.doFinal(), p), "the proof's bytes are those of the rdma wire exchange");
        assertTrue(PeerAuth.matches(p, PeerAuth.proof(key, PeerAuth.ROLE_CONNECTOR, 1, 2, n1, n2)));
        assertFalse(PeerAuth.matches(p, PeerAuth.proof(key, PeerAuth.ROLE_ACCEPTOR, 1, 2, n1, n2)), "role must be bound");
        assertFalse(PeerAuth.matches(p, PeerAuth.proof(key, PeerAuth.ROLE_CONNECTOR, 2, 1, n1, n2)), "ids must be bound");
        assertFalse(PeerAuth.matches(p, PeerAuth.proof(key, PeerAuth.ROLE_CONNECTOR, 1, 2, n2, n1)), "nonces must be bound");
        assertFalse(PeerAuth.matches(p, PeerAuth.proof(io.rdmabus.spi.BusSecret.parse("rdma",
                Map.of(AuthConfig.SECRET, "another secret of enough bytes")),
                PeerAuth.ROLE_CONNECTOR, 1, 2, n1, n2)), "the secret must be bound");
        PeerAuth.Request req = PeerAuth.parseRequest(PeerAuth.request(PeerAuth.FLAG_SECRET, -5L, new byte[] {10, 77, 0, 11}, 7801, n1));
        assertEquals("10.77.0.11:7801", req.listenEndpoint());
        assertEquals(-5L, req.nodeId());
        assertTrue(PeerAuth.REQUEST_BYTES <= 56, "an RC connect request carries at most 56 bytes of private data");
        PeerAuth.Reply rep = PeerAuth.parseReply(java.util.Arrays.copyOf(PeerAuth.reply(0, 9L, n2, p), 196)); // IB CM pads the REP
        assertEquals(9L, rep.nodeId());
        assertTrue(PeerAuth.matches(p, rep.proof()));
        assertNull(PeerAuth.parseRequest("RBUS1xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx".getBytes(java.nio.charset.StandardCharsets.US_ASCII)));
    }

    @Test
    void capabilitiesFollowTheConfigurationBeforeStart() {
        Transport t = factory.create(Map.of(RdmaTransportConfig.FRAME_BYTES, "8192", RdmaTransportConfig.UD_PAYLOAD_BYTES, "1024"));
        try {
            assertEquals("rdma", t.name());
            assertEquals(8192, t.capabilities().maxFrameLength(Delivery.RELIABLE));
            assertEquals(1024 - Wire.ENVELOPE_BYTES, t.capabilities().maxFrameLength(Delivery.BEST_EFFORT));
            assertTrue(t.capabilities().crossHost());
            assertFalse(t.capabilities().multicast(), "best effort is unicast per subscriber in this slice");
        } finally {
            t.close(); // closing an unstarted transport is allowed and idempotent
            t.close();
        }
    }

    private void assertBad(final Map<String, String> props, final String expectedInMessage) {
        BusConfigurationException e = assertThrows(BusConfigurationException.class, () -> factory.create(props), props.toString());
        assertTrue(e.getMessage().contains(expectedInMessage), e.getMessage());
    }

    private static void write(final Path file, final String content) throws IOException {
        Files.createDirectories(file.getParent());
        Files.writeString(file, content);
    }
}
