package io.rdmabus.rdma.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A Linux eventfd used as a wake-up: any thread {@linkplain #signal() signals} it, and a thread that sleeps in poll(2)
 * on it and on a completion channel ({@link CompletionChannel#awaitEvent(long, CompletionQueue, EventFd)}) wakes. A
 * signal is sticky: one that comes before the sleep ends it at once. Signals and {@link #close()} are serialised on
 * this object, so a late signal never writes to a descriptor number the process has reused.
 *
 * <p>Threads: {@link #signal()} any; {@link #clear()} the sleeping thread; {@link #close()} any, once.
 */
public final class EventFd implements AutoCloseable {
    private static final int EFD_NONBLOCK = 0x800;
    private static final int EFD_CLOEXEC = 0x80000;

    private final int fd;
    private final Arena arena = Arena.ofShared();
    /** The 8-byte counter a signal adds (1), written under this object's monitor. */
    private final MemorySegment one;
    /** Where {@link #clear()} reads the counter (the sleeping thread only). */
    private final MemorySegment counter;
    private boolean closed;

    /** @throws VerbsException if the kernel refuses one (e.g. out of descriptors) */
    public EventFd() {
        try {
            this.fd = Native.eventFd(EFD_NONBLOCK | EFD_CLOEXEC);
        } catch (RuntimeException e) {
            arena.close();
            throw e;
        }
        this.one = arena.allocate(ValueLayout.JAVA_LONG);
        this.one.set(ValueLayout.JAVA_LONG, 0, 1L);
        this.counter = arena.allocate(ValueLayout.JAVA_LONG);
    }

    /** Makes the descriptor readable until {@link #clear()} (any thread); nothing once closed. */
    public synchronized void signal() {
        if (!closed) {
            Native.write8(fd, one); // fails only when the counter would overflow: still readable
        }
    }

    /** Takes the signals so far: the descriptor is not readable until the next one (the sleeping thread). */
    void clear() {
        Native.read8(fd, counter); // non-blocking: EAGAIN when nothing was signalled
    }

    /** @return the descriptor (for poll) */
    int fd() {
        return fd;
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            Native.closeFd(fd);
        } finally {
            arena.close();
        }
    }
}
