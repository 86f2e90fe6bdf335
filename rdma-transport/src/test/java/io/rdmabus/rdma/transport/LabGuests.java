package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
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
        publish(what, "1");
    }

    /**
     * Writes {@code content} to the shared file {@code what} aside and renames it into place, so a guest that sees the
     * file (e.g. through {@link #awaitFile}) never reads it empty or half-written.
     */
    static void publish(final String what, final String content) throws IOException {
        Path tmp = shared(what + ".tmp");
        Files.writeString(tmp, content);
        Files.move(tmp, shared(what), StandardCopyOption.ATOMIC_MOVE);
    }

    /** Waits for another guest's signal file {@code what}; fails the test after {@code waitMs}. */
    static void awaitFile(final String what, final long waitMs) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(waitMs);
        while (!Files.exists(shared(what))) {
            assertTrue(System.nanoTime() < deadline, what + " not signalled in " + waitMs + " ms");
            Thread.sleep(100);
        }
    }

    /** One side of a two-guest test. */
    interface Side {
        /**
         * @param self         this guest's lab address
         * @param subscriberIp guest 1's address (the subscriber's)
         * @param errors       where the side's transports record errors
         * @throws Exception a failure of the side
         */
        void run(String self, String subscriberIp, List<Throwable> errors) throws Exception;
    }

    /**
     * Runs {@code subscriber} on guest 1 and {@code publisher} on guest 2 of a job of at least two guests (other guests
     * do nothing), then fails with the errors the side recorded, if any.
     */
    static void subscriberOnGuest1PublisherOnGuest2(final Side subscriber, final Side publisher) throws Exception {
        int guest = Integer.parseInt(require("LAB_GUEST_INDEX"));
        int guests = Integer.parseInt(require("LAB_GUEST_COUNT"));
        assertTrue(guests >= 2, "needs 2 guests: lab/run-junit.sh --module rdma-transport --guests 2");
        String self = require("LAB_SELF_IP").trim();
        String subscriberIp = require("LAB_GUEST_IPS").trim().split("\\s+")[0];
        List<Throwable> errors = new CopyOnWriteArrayList<>();
        if (guest == 1) {
            subscriber.run(self, subscriberIp, errors);
        } else if (guest == 2) {
            publisher.run(self, subscriberIp, errors);
        }
        assertTrue(errors.isEmpty(), "errors: " + errors);
    }
}
