package io.rdmabus.rdma.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * A Linux eventfd used as a wake-up: any thread {@linkplain #signal() signals} it, and a thread that sleeps in poll(2)
 * on it and on a completion channel ({@link CompletionChannel#awaitEvent(long, CompletionQueue, EventFd)}) wakes. A
 * signal is sticky: one that comes before the sleep ends it at once. Signals and {@link #close()} are serialised on
 * this object, so a late signal never writes to a descriptor number the process has reused.
 *
 * <p>Threads: {@link #signal()} any; {@link #clear()} the sleeping thread; {@link #close()} any, once.
 */
public final class EventFd implements AutoCloseable {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final MethodHandle EVENTFD = LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow("eventfd"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT), Linker.Option.captureCallState("errno"));
    private static final MethodHandle WRITE = LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow("write"),
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    private static final MethodHandle READ = LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow("read"),
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    private static final MethodHandle CLOSE = LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow("close"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
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
        MemorySegment state = arena.allocate(Linker.Option.captureStateLayout());
        int created;
        try {
            created = (int) EVENTFD.invokeExact(state, 0, EFD_NONBLOCK | EFD_CLOEXEC);
        } catch (Throwable t) {
            arena.close();
            throw new IllegalStateException("downcall eventfd failed", t);
        }
        if (created < 0) {
            int errno = (int) Linker.Option.captureStateLayout().varHandle(MemoryLayout.PathElement.groupElement("errno")).get(state, 0L);
            arena.close();
            throw new VerbsException("eventfd", errno);
        }
        this.fd = created;
        this.one = arena.allocate(ValueLayout.JAVA_LONG);
        this.one.set(ValueLayout.JAVA_LONG, 0, 1L);
        this.counter = arena.allocate(ValueLayout.JAVA_LONG);
    }

    /** Makes the descriptor readable until {@link #clear()} (any thread); nothing once closed. */
    public synchronized void signal() {
        if (closed) {
            return;
        }
        try {
            long ignored = (long) WRITE.invokeExact(fd, one, 8L); // fails only when the counter would overflow: still readable
        } catch (Throwable t) {
            throw new IllegalStateException("eventfd write failed", t);
        }
    }

    /** Takes the signals so far: the descriptor is not readable until the next one (the sleeping thread). */
    void clear() {
        try {
            long ignored = (long) READ.invokeExact(fd, counter, 8L); // non-blocking: EAGAIN when nothing was signalled
        } catch (Throwable t) {
            throw new IllegalStateException("eventfd read failed", t);
        }
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
            int ignored = (int) CLOSE.invokeExact(fd);
        } catch (Throwable t) {
            throw new IllegalStateException("close failed", t);
        } finally {
            arena.close();
        }
    }
}
