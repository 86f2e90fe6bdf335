package io.rdmabus.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@link Arrivals} counts every message and stamps the expected last one only. */
class ArrivalsTest {
    @Test
    void stampsTheExpectedMessageAndNoOther() {
        final Arrivals arrivals = new Arrivals(3);
        arrivals.onMessage();
        arrivals.onMessage();
        assertEquals(2, arrivals.count());
        assertEquals(0, arrivals.lastNs(), "stamped before the expected message");
        final long before = System.nanoTime();
        arrivals.onMessage();
        final long stamp = arrivals.lastNs();
        assertTrue(stamp - before >= 0 && System.nanoTime() - stamp >= 0, "the third message's stamp " + stamp + " is not its arrival");
        arrivals.onMessage();
        assertEquals(4, arrivals.count());
        assertEquals(stamp, arrivals.lastNs(), "a message past the expected one moved the stamp");

        arrivals.reset(1);
        assertEquals(0, arrivals.count());
        assertEquals(0, arrivals.lastNs());
        arrivals.onMessage();
        assertTrue(arrivals.lastNs() != 0, "after reset(1), the first message is the expected one");

        final Arrivals later = new Arrivals(Long.MAX_VALUE);
        later.onMessage();
        later.expect(2);
        later.onMessage();
        assertTrue(later.lastNs() != 0, "expect(2) set after the first message: the second is stamped");
    }
}
