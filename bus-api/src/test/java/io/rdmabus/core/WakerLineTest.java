package io.rdmabus.core;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;

import org.agrona.UnsafeApi;
import org.junit.jupiter.api.Test;

/**
 * The fields a producer reads on every message ({@code idler}, {@code sleeper}) lie at least a cache line (64 bytes)
 * from the start of the object and from every field the delivering thread writes, as this JVM lays them out.
 */
class WakerLineTest {
    private static final int CACHE_LINE = 64;

    @Test
    void theWakersFieldsHaveACacheLineOfTheirOwn() throws NoSuchFieldException {
        final long idler = UnsafeApi.objectFieldOffset(WakerLine.Fields.class.getDeclaredField("idler"));
        final long sleeper = UnsafeApi.objectFieldOffset(WakerLine.Fields.class.getDeclaredField("sleeper"));
        final long first = Math.min(idler, sleeper);
        final long last = Math.max(idler, sleeper);
        assertTrue(first >= CACHE_LINE, "the first waker field is at byte " + first + " of the object");
        for (final Field field : WakeableIdleStrategy.class.getDeclaredFields()) {
            if (Modifier.isStatic(field.getModifiers())) {
                continue;
            }
            final long offset = UnsafeApi.objectFieldOffset(field);
            assertTrue(offset - last >= CACHE_LINE, () -> "field " + field.getName() + " is at byte " + offset
                + ", within a cache line of the waker's fields (bytes " + first + " to " + last + ")");
        }
    }
}
