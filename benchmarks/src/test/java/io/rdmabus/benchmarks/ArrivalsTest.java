package io.rdmabus.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.util.Arrays;

import org.agrona.UnsafeApi;
import org.junit.jupiter.api.Test;

/** {@link Arrivals} counts every message and stamps the expected last one only; its fields have cache lines of their own. */
class ArrivalsTest {
    @Test
    void theFieldsHave128BytesOfPaddingOnEitherSide() {
        final long[] fields = offsets(ArrivalsLine.Fields.class);
        final long[] after = offsets(ArrivalsLine.After.class);
        final long first = Arrays.stream(fields).min().orElseThrow();
        final long last = Arrays.stream(fields).max().orElseThrow();
        assertTrue(first >= 128, "the first field is at byte " + first);
        assertTrue(Arrays.stream(after).min().orElseThrow() > last, "padding after the fields lies before one of them");
        assertTrue(Arrays.stream(after).max().orElseThrow() - last >= 128, "less than 128 bytes of padding after byte " + last);
    }

    private static long[] offsets(final Class<?> type) {
        return Arrays.stream(type.getDeclaredFields()).mapToLong((Field f) -> UnsafeApi.objectFieldOffset(f)).toArray();
    }

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
