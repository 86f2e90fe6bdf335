package io.rdmabus.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

/**
 * Proves the rxe guest lab end to end: JDK 25 in the guest, the environment contract of
 * {@code lab/rxe-lab.sh}, an ACTIVE rxe device, and the two-guest role convention
 * (guest 1 passive, the others active, retrying while guest 1 starts).
 */
@Tag("rxe")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class LabSelfTest {

    private static final int PEER_PORT = 47_101;
    private static final long CONNECT_RETRY_NS = TimeUnit.SECONDS.toNanos(60);

    private static String env(String name) {
        String value = System.getenv(name);
        if (value == null || value.isBlank()) {
            fail(name + " is not set: this test runs only inside the rxe lab (lab/run-junit.sh)");
        }
        return value;
    }

    @Test
    @Order(1)
    void runsOnJdk25WithTheLabEnvironment() {
        assertEquals(25, Runtime.version().feature(), "guest JVM feature version");
        int index = Integer.parseInt(env("LAB_GUEST_INDEX"));
        int count = Integer.parseInt(env("LAB_GUEST_COUNT"));
        List<String> ips = List.of(env("LAB_GUEST_IPS").split(" "));
        assertTrue(index >= 1 && index <= count, "LAB_GUEST_INDEX " + index + " not in 1.." + count);
        assertEquals(count, ips.size(), "LAB_GUEST_IPS has one address per guest");
        assertEquals(ips.get(index - 1), env("LAB_SELF_IP"), "LAB_SELF_IP is this guest's entry in LAB_GUEST_IPS");
        assertTrue(Files.isDirectory(Path.of(env("LAB_OUT"))), "LAB_OUT is a directory");
        assertTrue(Files.isWritable(Path.of(System.getProperty("java.io.tmpdir"))), "java.io.tmpdir is writable");
    }

    @Test
    @Order(2)
    void rxeDeviceIsActive() throws IOException {
        Path state = Path.of("/sys/class/infiniband", env("LAB_RXE_DEV"), "ports/1/state");
        assertTrue(Files.readString(state).contains("ACTIVE"), state + " is not ACTIVE");
        assertTrue(Files.exists(Path.of("/dev/infiniband/uverbs0")), "/dev/infiniband/uverbs0 missing");
    }

    @Test
    @Order(3)
    @Timeout(120)
    void guestsReachEachOtherOverTcp() throws IOException, InterruptedException {
        int index = Integer.parseInt(env("LAB_GUEST_INDEX"));
        int count = Integer.parseInt(env("LAB_GUEST_COUNT"));
        if (count < 2) {
            fail("this test needs at least 2 guests, got " + count + " (run with --guests 2)");
        }
        String passiveIp = env("LAB_GUEST_IPS").split(" ")[0];
        if (index == 1) {
            try (ServerSocket server = new ServerSocket()) {
                server.bind(new InetSocketAddress(env("LAB_SELF_IP"), PEER_PORT));
                for (int peer = 2; peer <= count; peer++) {
                    try (Socket socket = server.accept()) {
                        int greeting = socket.getInputStream().read();
                        assertTrue(greeting >= 2 && greeting <= count, "unexpected peer index " + greeting);
                        socket.getOutputStream().write(1);
                    }
                }
            }
        } else {
            try (Socket socket = connectWithRetry(passiveIp)) {
                OutputStream out = socket.getOutputStream();
                out.write(index);
                out.flush();
                InputStream in = socket.getInputStream();
                assertEquals(1, in.read(), "reply from guest 1");
            }
        }
    }

    private static Socket connectWithRetry(String host) throws InterruptedException {
        long deadlineNs = System.nanoTime() + CONNECT_RETRY_NS;
        IOException last = null;
        while (System.nanoTime() < deadlineNs) {
            Socket socket = new Socket();
            try {
                socket.connect(new InetSocketAddress(host, PEER_PORT), 2_000);
                return socket;
            } catch (IOException e) {
                last = e;
                closeQuietly(socket);
                Thread.sleep(200);
            }
        }
        throw new AssertionError("guest 1 at " + host + ":" + PEER_PORT + " did not accept within 60 s: " + last, last);
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException ignored) {
            // nothing to do: the socket never connected
        }
    }

    @Test
    @Order(4)
    void scratchAndOutputAreWritable() throws IOException {
        Path marker = Path.of(env("LAB_OUT"), "selftest-marker.txt");
        Files.writeString(marker, "guest " + env("LAB_GUEST_INDEX") + "\n", StandardCharsets.UTF_8);
        assertTrue(Files.size(marker) > 0, "marker written");
    }
}
