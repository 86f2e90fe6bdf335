package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/** What multi-guest rxe tests share: the lab's environment and signal files in {@code LAB_SHARED}. */
final class LabGuests {
    private LabGuests() {
    }

    /** @return the lab variable {@code name}; fails the test outside the guest lab */
    static String require(final String name) {
        String v = System.getenv(name);
        if (v == null || v.isBlank()) {
            throw new AssertionError(name + " is not set: rxe tests run inside the guest lab (lab/run-junit.sh --module rdma-transport)");
        }
        return v;
    }

    static Path shared(final String what) {
        return Path.of(require("LAB_SHARED"), what);
    }

    /** Creates the signal file {@code what} for the other guests. */
    static void signal(final String what) throws IOException {
        Files.writeString(shared(what), "1");
    }

    /** Waits for another guest's signal file {@code what}; fails the test after {@code waitMs}. */
    static void awaitFile(final String what, final long waitMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
        while (!Files.exists(shared(what))) {
            assertTrue(System.nanoTime() < deadline, what + " not signalled in " + waitMs + " ms");
            Thread.sleep(100);
        }
    }
}
