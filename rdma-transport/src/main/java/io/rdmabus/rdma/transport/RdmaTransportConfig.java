package io.rdmabus.rdma.transport;

import io.rdmabus.BusConfigurationException;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeSet;

/**
 * Validated settings of the RDMA transport, parsed from {@code Bus.builder().transportProperty(k, v)}.
 * Unknown keys and bad values fail fast with a message that lists what is accepted.
 *
 * @param device              RDMA device name, or null for the first device with an ACTIVE port
 * @param port                device port number (1-based)
 * @param bindAddress         IPv4 address rdma_cm binds/listens on, or null for the device's netdev address
 * @param cmPortBase          first rdma_cm (TCP port space) port tried for listening
 * @param cmPortRange         how many ports from {@code cmPortBase} are tried (several buses on one host)
 * @param maxFrameBytes       largest reliable frame (bus header included) = receive buffer size minus the envelope
 * @param recvBuffers         receive buffers pre-posted per connection (the credit window)
 * @param sendBuffers         registered send slots per publication
 * @param udPayloadBytes      largest datagram payload (path MTU) that bounds best-effort frames
 * @param connectTimeoutMs    bound on one rdma_cm connect/accept attempt
 * @param commandTimeoutMs    bound on an application thread's wait for the poller to take its command (a subscription, an
 *                            announcement, the goodbye at close)
 * @param retentionFrames     frames each RELIABLE publication retains for a reconnecting subscriber to resume from
 *                            (its send-slot ring is this long; at least {@code sendBuffers})
 * @param retentionResumeMs   how long a subscriber keeps its resume state after a connection is lost
 * @param keepaliveMs         a connection with nothing in flight for this long gets a signalled control message, so a
 *                            peer that vanished without a word (link down, host gone) fails the send after the RC retries
 *                            and the connection is closed instead of waiting forever for credits; 0 = never
 * @param sendStallMs         a connection with a signalled send in flight and no send completion for this long is closed
 *                            (the device neither completed nor failed it), so the redial and resume take over; 0 = never
 * @param ackTimeoutExp       the RC local ACK timeout of every connection, as the exponent of 4.096 us x 2^exp
 *                            ({@code rdma_set_option RDMA_OPTION_ID_ACK_TIMEOUT}); 0 = the kernel's (from the path record)
 * @param auth                the bus secret that authenticates peers ({@code rdma.secret}, {@code rdma.secret.file};
 *                            parsed by {@link io.rdmabus.spi.BusSecret})
 * @param ud                  the best-effort UD path's settings ({@code rdma.ud.*}, {@code rdma.domain}; see {@link UdConfig})
 * @param discovery           how peers are found: seeds, or seeds plus adverts on the UD control group ({@code rdma.discovery*};
 *                            see {@link DiscoveryConfig})
 */
public record RdmaTransportConfig(String device, int port, String bindAddress, int cmPortBase, int cmPortRange, int maxFrameBytes,
                                  int recvBuffers, int sendBuffers, int udPayloadBytes, long connectTimeoutMs,
                                  long commandTimeoutMs,
                                  int retentionFrames, long retentionResumeMs, long keepaliveMs, long sendStallMs, int ackTimeoutExp,
                                  io.rdmabus.spi.BusSecret auth, UdConfig ud, DiscoveryConfig discovery) {
    /** RDMA device name (default: first device with an ACTIVE port). */
    public static final String DEVICE = "rdma.device";
    /** Device port number (default 1). */
    public static final String PORT = "rdma.port";
    /** IPv4 address to bind rdma_cm on (default: the IPv4 address of the device's network interface). */
    public static final String BIND = "rdma.bind";
    /** First rdma_cm listen port tried (default 7800). */
    public static final String CM_PORT_BASE = "rdma.cm.port.base";
    /** Number of listen ports tried from the base (default 64). */
    public static final String CM_PORT_RANGE = "rdma.cm.port.range";
    /** Largest reliable frame in bytes, bus header included (default 16384). */
    public static final String FRAME_BYTES = "rdma.frame.bytes";
    /** Receive buffers per connection, i.e. the credit window plus 16 control buffers (default 128). */
    public static final String RECV_BUFFERS = "rdma.recv.buffers";
    /** Send slots per publication (default 128). */
    public static final String SEND_BUFFERS = "rdma.send.buffers";
    /** Datagram payload bound for best-effort frames (default 1024, the active MTU of rxe on a 1500-byte link). */
    public static final String UD_PAYLOAD_BYTES = "rdma.ud.payload.bytes";
    /** Bound on one connect or accept, milliseconds (default 3000). */
    public static final String CONNECT_TIMEOUT_MS = "rdma.connect.timeout.ms";
    /** Bound on an application thread's wait for the poller to run its command, milliseconds (default 3000). */
    public static final String COMMAND_TIMEOUT_MS = "rdma.command.timeout.ms";
    /** Frames each RELIABLE publication retains for resume after a reconnect (default 1024, at least {@link #SEND_BUFFERS}). */
    public static final String RETENTION_FRAMES = "rdma.retention.frames";
    /** How long a subscriber keeps its resume state after a connection is lost, milliseconds (default 30000). */
    public static final String RETENTION_RESUME_MS = "rdma.retention.resume.ms";
    /**
     * A connection with nothing in flight for this long sends a control message, so a peer gone without a word is
     * noticed by the RC retries (default 1000; 0 = never).
     */
    public static final String KEEPALIVE_MS = "rdma.keepalive.ms";
    /**
     * A connection whose signalled send got neither a completion nor an error for this long is closed, and redialled
     * and resumed like one that failed (default 10000; 0 = never).
     */
    public static final String SEND_STALL_MS = "rdma.send.stall.ms";
    /**
     * The RC local ACK timeout, as the IB exponent: a send not acknowledged within 4.096 us x 2^exp is retransmitted,
     * and after the QP's retries (7) the connection fails, so a lower value notices a dead peer sooner and a too low one
     * fails a live but slow one (default 0 = the kernel's choice from the path record; 1..31 to set it).
     */
    public static final String ACK_TIMEOUT_EXP = "rdma.ack.timeout.exp";
    /** The largest {@link #RETENTION_FRAMES}: a send slot index is 16 bits in a work request id. */
    static final int MAX_RETENTION_FRAMES = 65536;
    /** Bound on one publication's retention ring (registered memory), bytes. */
    static final long MAX_RETENTION_BYTES = 1L << 30;

    /** Control receive buffers reserved per connection, outside the data credit window. */
    static final int CONTROL_SLOTS = 16;
    /** The largest {@link #RECV_BUFFERS} any node accepts. */
    static final int MAX_RECV_BUFFERS = 4096;
    /** The largest credit grant a well-formed INIT or CREDIT can carry: a peer's whole data window. */
    static final int MAX_DATA_CREDITS = MAX_RECV_BUFFERS - CONTROL_SLOTS;

    private static final Map<String, String> DEFAULTS = defaults();

    /** Validates ranges. */
    public RdmaTransportConfig {
        check(port >= 1 && port <= 255, PORT, String.valueOf(port), "a device port number 1..255");
        check(cmPortBase >= 1 && cmPortBase <= 65535, CM_PORT_BASE, String.valueOf(cmPortBase), "a port 1..65535");
        check(cmPortRange >= 1 && cmPortBase + cmPortRange - 1 <= 65535, CM_PORT_RANGE, String.valueOf(cmPortRange),
                "1..(65536 - base)");
        check(maxFrameBytes >= 256 && maxFrameBytes <= 1 << 20, FRAME_BYTES, String.valueOf(maxFrameBytes), "256..1048576");
        check(recvBuffers > CONTROL_SLOTS && recvBuffers <= MAX_RECV_BUFFERS, RECV_BUFFERS, String.valueOf(recvBuffers),
                (CONTROL_SLOTS + 1) + ".." + MAX_RECV_BUFFERS);
        check(sendBuffers >= 2 && sendBuffers <= 4096, SEND_BUFFERS, String.valueOf(sendBuffers), "2..4096");
        check(udPayloadBytes >= 256 && udPayloadBytes <= 4096, UD_PAYLOAD_BYTES, String.valueOf(udPayloadBytes), "256..4096");
        check(connectTimeoutMs >= 100 && connectTimeoutMs <= 60_000, CONNECT_TIMEOUT_MS, String.valueOf(connectTimeoutMs),
                "100..60000");
        check(commandTimeoutMs >= 100 && commandTimeoutMs <= 600_000, COMMAND_TIMEOUT_MS, String.valueOf(commandTimeoutMs),
                "100..600000");
        check(retentionFrames >= sendBuffers && retentionFrames <= MAX_RETENTION_FRAMES, RETENTION_FRAMES, String.valueOf(retentionFrames),
                SEND_BUFFERS + " (" + sendBuffers + ").." + MAX_RETENTION_FRAMES);
        long ringBytes = (long) retentionFrames * (Wire.ENVELOPE_BYTES + maxFrameBytes);
        if (ringBytes > MAX_RETENTION_BYTES) {
            throw new BusConfigurationException("Bad value '" + retentionFrames + "' for " + RETENTION_FRAMES + ": " + retentionFrames + " frames of "
                    + FRAME_BYTES + "=" + maxFrameBytes + " need " + ringBytes + " bytes of registered memory per RELIABLE publication, more than "
                    + MAX_RETENTION_BYTES + ": lower " + RETENTION_FRAMES + " or " + FRAME_BYTES);
        }
        check(retentionResumeMs >= 0 && retentionResumeMs <= 3_600_000, RETENTION_RESUME_MS, String.valueOf(retentionResumeMs), "0..3600000");
        check(keepaliveMs == 0 || keepaliveMs >= 10 && keepaliveMs <= 600_000, KEEPALIVE_MS, String.valueOf(keepaliveMs), "0 (never) or 10..600000");
        check(sendStallMs == 0 || sendStallMs >= 1000 && sendStallMs <= 3_600_000, SEND_STALL_MS, String.valueOf(sendStallMs),
                "0 (never) or 1000..3600000");
        check(ackTimeoutExp >= 0 && ackTimeoutExp <= 31, ACK_TIMEOUT_EXP, String.valueOf(ackTimeoutExp),
                "0 (the kernel's) or 1..31 (4.096 us x 2^exp: 14 = 67 ms, 16 = 268 ms, 18 = 1.07 s)");
        if (discovery.multicast() && ud.mode() == UdConfig.Mode.RC) {
            // adverts are UD datagrams on the bus's UD QP; rc mode has none
            throw new BusConfigurationException(DiscoveryConfig.MODE + "=multicast needs the UD endpoint, but " + UdConfig.MODE
                    + "=rc has none: set " + UdConfig.MODE + " to unicast (the default) or multicast, or use " + DiscoveryConfig.MODE
                    + "=seeds with a seed list");
        }
    }

    /** @return the accepted property keys with their defaults ("" = detected) */
    public static Map<String, String> knownProperties() {
        return DEFAULTS;
    }

    /**
     * Parses transport properties.
     *
     * @param properties keys from {@link #knownProperties()}
     * @return the settings
     * @throws BusConfigurationException for an unknown key or a bad value, saying what is accepted
     */
    public static RdmaTransportConfig parse(final Map<String, String> properties) {
        for (String key : properties.keySet()) {
            if (!DEFAULTS.containsKey(key)) {
                throw new BusConfigurationException("Unknown rdma transport property '" + key + "': known properties are "
                        + new TreeSet<>(DEFAULTS.keySet()));
            }
        }
        String device = blankToNull(properties.get(DEVICE));
        String bind = blankToNull(properties.get(BIND));
        if (bind != null && !bind.matches("\\d{1,3}(\\.\\d{1,3}){3}")) {
            throw new BusConfigurationException("Bad value '" + bind + "' for " + BIND + ": expected an IPv4 address such as 10.77.0.11");
        }
        return new RdmaTransportConfig(device, intOf(properties, PORT), bind, intOf(properties, CM_PORT_BASE),
                intOf(properties, CM_PORT_RANGE), intOf(properties, FRAME_BYTES), intOf(properties, RECV_BUFFERS),
                intOf(properties, SEND_BUFFERS), intOf(properties, UD_PAYLOAD_BYTES), intOf(properties, CONNECT_TIMEOUT_MS),
                intOf(properties, COMMAND_TIMEOUT_MS),
                intOf(properties, RETENTION_FRAMES), intOf(properties, RETENTION_RESUME_MS), intOf(properties, KEEPALIVE_MS),
                intOf(properties, SEND_STALL_MS), intOf(properties, ACK_TIMEOUT_EXP), AuthConfig.parse(properties),
                UdConfig.parse(properties), DiscoveryConfig.parse(properties));
    }

    /** @return the receive/send slot size: envelope plus the largest frame */
    int slotBytes() {
        return Wire.ENVELOPE_BYTES + maxFrameBytes;
    }

    /** @return the largest best-effort frame: one datagram payload minus the envelope */
    int maxBestEffortFrameBytes() {
        return Math.min(maxFrameBytes, udPayloadBytes - Wire.ENVELOPE_BYTES);
    }

    /** @return data credits one side grants the other: the receive buffers minus the control reserve */
    int dataCredits() {
        return recvBuffers - CONTROL_SLOTS;
    }

    private static int intOf(final Map<String, String> properties, final String key) {
        String v = properties.getOrDefault(key, DEFAULTS.get(key)).trim();
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new BusConfigurationException("Bad value '" + v + "' for " + key + ": expected an integer");
        }
    }

    private static void check(final boolean ok, final String key, final String value, final String accepted) {
        if (!ok) {
            throw new BusConfigurationException("Bad value '" + value + "' for " + key + ": expected " + accepted);
        }
    }

    private static String blankToNull(final String s) {
        return s == null || s.isBlank() ? null : s.trim();
    }

    private static Map<String, String> defaults() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(DEVICE, "");
        m.put(PORT, "1");
        m.put(BIND, "");
        m.put(CM_PORT_BASE, "7800");
        m.put(CM_PORT_RANGE, "64");
        m.put(FRAME_BYTES, "16384");
        m.put(RECV_BUFFERS, "128");
        m.put(SEND_BUFFERS, "128");
        m.put(UD_PAYLOAD_BYTES, "1024");
        m.put(CONNECT_TIMEOUT_MS, "3000");
        m.put(COMMAND_TIMEOUT_MS, "3000");
        m.put(RETENTION_FRAMES, "1024");
        m.put(RETENTION_RESUME_MS, "30000");
        m.put(KEEPALIVE_MS, "1000");
        m.put(SEND_STALL_MS, "10000");
        m.put(ACK_TIMEOUT_EXP, "0");
        m.putAll(AuthConfig.defaults()); // bus secret keys
        m.putAll(UdConfig.defaults()); // UD path keys
        m.putAll(DiscoveryConfig.defaults()); // discovery keys
        return java.util.Collections.unmodifiableMap(m);
    }
}
