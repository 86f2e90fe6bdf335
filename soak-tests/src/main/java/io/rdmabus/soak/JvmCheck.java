package io.rdmabus.soak;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.ThreadMXBean;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** JVM-side leak and spin checks: heap after GC, threads left by the bus, threads burning CPU while idle. */
public final class JvmCheck {
    /** Every thread the bus or its transports start carries this prefix. */
    public static final String BUS_THREAD_PREFIX = "rdma-bus-";

    private JvmCheck() {
    }

    /** @return heap used after a few full GCs, bytes */
    public static long heapAfterGcBytes() {
        final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 4; i++) {
            System.gc();
            try {
                Thread.sleep(50);
            } catch (final InterruptedException ex) {
                Thread.currentThread().interrupt();
                break;
            }
            used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    /** @return names and states of live threads whose name starts with {@link #BUS_THREAD_PREFIX} */
    public static List<String> busThreads() {
        final List<String> out = new ArrayList<>();
        for (final Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && t.getName().startsWith(BUS_THREAD_PREFIX)) {
                out.add(t.getName() + " " + t.getState());
            }
        }
        return out;
    }

    /**
     * Waits (bounded) until no bus thread is alive.
     *
     * @param timeoutMs bound
     * @return the bus threads still alive at the end (empty if none)
     * @throws InterruptedException if interrupted
     */
    public static List<String> awaitNoBusThreads(final long timeoutMs) throws InterruptedException {
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        List<String> left = busThreads();
        while (!left.isEmpty() && System.nanoTime() < deadlineNs) {
            Thread.sleep(20);
            left = busThreads();
        }
        return left;
    }

    /**
     * Samples every thread's CPU time over a window in which the caller does nothing.
     *
     * @param windowMs window length
     * @param minShare a thread using more than this share of one core in the window is reported (e.g. 0.2)
     * @return "name cpu%" of the threads above the share (the caller's own thread and JIT compiler threads excluded)
     * @throws InterruptedException if interrupted
     */
    public static List<String> spinningThreads(final long windowMs, final double minShare) throws InterruptedException {
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        final Map<Long, Long> before = new HashMap<>();
        for (final long id : threads.getAllThreadIds()) {
            before.put(id, threads.getThreadCpuTime(id));
        }
        final long t0 = System.nanoTime();
        Thread.sleep(windowMs);
        final long elapsed = System.nanoTime() - t0;
        final List<String> out = new ArrayList<>();
        final long self = Thread.currentThread().threadId();
        for (final long id : threads.getAllThreadIds()) {
            final Long b = before.get(id);
            final long now = threads.getThreadCpuTime(id);
            if (b == null || b < 0 || now < 0 || id == self) {
                continue;
            }
            final var info0 = threads.getThreadInfo(id);
            if (info0 != null && info0.getThreadName().contains("CompilerThread")) {
                continue; // the JIT finishing its queue is not a spinning thread (slow under TCG)
            }
            final double share = (double) (now - b) / elapsed;
            if (share > minShare) {
                final var info = threads.getThreadInfo(id);
                out.add((info == null ? "#" + id : info.getThreadName()) + " " + Math.round(share * 100) + "%");
            }
        }
        return out;
    }
}
