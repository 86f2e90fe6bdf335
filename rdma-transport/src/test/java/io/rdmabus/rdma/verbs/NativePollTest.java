package io.rdmabus.rdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.management.ManagementFactory;

import org.junit.jupiter.api.Test;

/**
 * {@link Native#pollReadable}, the wait of every poller and cm agent (host: libc only, no device). It must not allocate
 * per call in interpreted or C1-compiled code either, which is how the code runs for long in an emulated guest: an
 * errno-capturing downcall allocates 40 bytes per call there (the poller's allocation that UdRxeTest saw follow time).
 */
class NativePollTest {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle PIPE = LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow("pipe"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS));
    private static final MethodHandle WRITE = LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow("write"),
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    private static final MethodHandle CLOSE = LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow("close"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

    @Test
    void waitsOutItsTimeoutThenSeesDataAndAllocatesNothingPerCall() throws Throwable {
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        try (Arena arena = Arena.ofShared()) {
            int[] ends = pipe(arena);
            int readEnd = ends[0];
            int writeEnd = ends[1];
            try {
                MemorySegment[] scratch = Native.pollScratch(arena);
                long t0 = System.nanoTime();
                assertFalse(Native.pollReadable(readEnd, 50, scratch[0], scratch[1]), "an empty pipe is not readable");
                long tookMs = (System.nanoTime() - t0) / 1_000_000;
                assertTrue(tookMs >= 49, "returned after " + tookMs + " ms of a 50 ms wait");

                // warm up the call path (method handle linkage allocates once), then measure three rounds and keep the
                // smallest (a one-off allocation on a loaded host, e.g. a deoptimisation, is not per call); 4 000 calls in
                // all stay below C2's thresholds, whose escape analysis would hide a per-call allocation
                int calls = 1_000;
                long fewest = Long.MAX_VALUE;
                for (int round = 0; round < 4; round++) {
                    long before = mx.getCurrentThreadAllocatedBytes();
                    for (int i = 0; i < calls; i++) {
                        Native.pollReadable(readEnd, 0, scratch[0], scratch[1]);
                    }
                    long bytes = mx.getCurrentThreadAllocatedBytes() - before;
                    if (round > 0) {
                        fewest = Math.min(fewest, bytes);
                    }
                }
                assertTrue(fewest < calls, "pollReadable allocated at least " + fewest + " bytes in each round of " + calls + " calls");

                assertEquals(1L, (long) WRITE.invokeExact(writeEnd, arena.allocate(1), 1L));
                assertTrue(Native.pollReadable(readEnd, 1_000, scratch[0], scratch[1]), "a pipe with a byte in it is readable");
            } finally {
                int ignored = (int) CLOSE.invokeExact(readEnd);
                ignored = (int) CLOSE.invokeExact(writeEnd);
            }
        }
    }

    /**
     * The shared thread's sleep ({@code PollerSleeper}): a wait on two descriptors says which is readable; an
     * {@link EventFd}'s signal stays until cleared (one before the wait ends it at once, several are one) and a signal
     * after close does nothing.
     */
    @Test
    void anEventFdSignalEndsATwoDescriptorWaitUntilCleared() throws Throwable {
        EventFd wakeup = new EventFd();
        try (Arena arena = Arena.ofShared()) {
            int[] ends = pipe(arena);
            int readEnd = ends[0];
            int writeEnd = ends[1];
            try {
                MemorySegment[] scratch = Native.pollScratch(arena);
                long t0 = System.nanoTime();
                assertEquals(0, Native.pollReadable(readEnd, wakeup.fd(), 50, scratch[0], scratch[1]), "neither is readable");
                long tookMs = (System.nanoTime() - t0) / 1_000_000;
                assertTrue(tookMs >= 49, "returned after " + tookMs + " ms of a 50 ms wait");

                wakeup.signal();
                wakeup.signal();
                assertEquals(2, Native.pollReadable(readEnd, wakeup.fd(), 1_000, scratch[0], scratch[1]), "the signalled eventfd");
                assertEquals(2, Native.pollReadable(readEnd, wakeup.fd(), 0, scratch[0], scratch[1]), "still signalled until cleared");
                wakeup.clear();
                assertEquals(0, Native.pollReadable(readEnd, wakeup.fd(), 0, scratch[0], scratch[1]), "two signals, one clear");
                wakeup.clear(); // nothing to take: does not block

                assertEquals(1L, (long) WRITE.invokeExact(writeEnd, arena.allocate(1), 1L));
                assertEquals(1, Native.pollReadable(readEnd, wakeup.fd(), 1_000, scratch[0], scratch[1]), "the pipe");
                wakeup.signal();
                assertEquals(3, Native.pollReadable(readEnd, wakeup.fd(), 1_000, scratch[0], scratch[1]), "both");
                assertEquals(1, Native.pollReadable(readEnd, -1, 0, scratch[0], scratch[1]), "no second descriptor");
            } finally {
                int ignored = (int) CLOSE.invokeExact(readEnd);
                ignored = (int) CLOSE.invokeExact(writeEnd);
            }
        } finally {
            wakeup.close();
        }
        wakeup.signal(); // closed: writes nowhere
    }

    /** @return a new pipe's read and write ends */
    private static int[] pipe(Arena arena) throws Throwable {
        MemorySegment fds = arena.allocate(ValueLayout.JAVA_INT, 2);
        assertEquals(0, (int) PIPE.invokeExact(fds));
        return new int[] {fds.getAtIndex(ValueLayout.JAVA_INT, 0), fds.getAtIndex(ValueLayout.JAVA_INT, 1)};
    }
}
