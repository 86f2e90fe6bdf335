package io.rdmabus.rdma.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;

/**
 * Control-path call helpers: errno-capturing downcall handles over the generated bindings'
 * symbol addresses, and the libc calls the transport makes itself ({@code strerror}, {@code poll}, and
 * {@code eventfd}, {@code read}, {@code write}, {@code close} for {@link EventFd}). Not for the data path.
 */
final class Native {
    private static final Linker LINKER = Linker.nativeLinker();
    private static final StructLayout CAPTURE = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CAPTURE.varHandle(MemoryLayout.PathElement.groupElement("errno"));
    private static final MethodHandle STRERROR = LINKER.downcallHandle(
            LINKER.defaultLookup().findOrThrow("strerror"), FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.JAVA_INT));
    private static final FunctionDescriptor POLL_DESCRIPTOR =
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT);
    /**
     * poll(2) without errno capture: a capturing downcall allocates 40 bytes per call unless C2 compiled the caller
     * (measured on JDK 25 with -Xint and C1), and pollers and cm agents wait through here at every sleep; the errno of
     * a failed call is read by repeating it with {@link #POLL_CAPTURING}.
     */
    private static final MethodHandle POLL = LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow("poll"), POLL_DESCRIPTOR);
    private static final MethodHandle POLL_CAPTURING = capturing(LINKER.defaultLookup().findOrThrow("poll"), POLL_DESCRIPTOR);
    private static final MethodHandle EVENTFD = capturing(LINKER.defaultLookup().findOrThrow("eventfd"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    private static final MethodHandle WRITE = LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow("write"),
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    private static final MethodHandle READ = LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow("read"),
            FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));
    private static final MethodHandle CLOSE = LINKER.downcallHandle(LINKER.defaultLookup().findOrThrow("close"),
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));
    private static final short POLLIN = 1;
    private static final int EINTR = 4;

    private Native() {
    }

    /** Downcall handle whose first argument is a capture-state segment (errno is saved right after the call). */
    static MethodHandle capturing(MemorySegment address, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(address, descriptor, Linker.Option.captureCallState("errno"));
    }

    static String strerror(int errno) {
        try {
            MemorySegment s = (MemorySegment) STRERROR.invokeExact(errno);
            return s.equals(MemorySegment.NULL) ? "unknown error" : s.reinterpret(512).getString(0);
        } catch (Throwable t) {
            return "strerror unavailable: " + t;
        }
    }

    /** Calls a function returning a pointer; NULL becomes a {@link VerbsException} with the captured errno. */
    static MemorySegment callPointer(String verb, MethodHandle handle, Object... args) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CAPTURE);
            MemorySegment result = (MemorySegment) handle.invokeWithArguments(prepend(state, args));
            if (result.equals(MemorySegment.NULL)) {
                int errno = (int) ERRNO.get(state, 0L);
                throw new VerbsException(verb, errno == 0 ? 5 /* EIO: provider gave no reason */ : errno);
            }
            return result;
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("downcall " + verb + " failed", t);
        }
    }

    /**
     * Calls a function returning int 0 on success. Non-zero: a positive value is the errno itself
     * (ibv_* style); -1 means "see errno" (rdma_* style); another negative value is -errno.
     */
    static void callInt(String verb, MethodHandle handle, Object... args) {
        int rc;
        int errno;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CAPTURE);
            rc = (int) handle.invokeWithArguments(prepend(state, args));
            errno = (int) ERRNO.get(state, 0L);
        } catch (Throwable t) {
            throw new IllegalStateException("downcall " + verb + " failed", t);
        }
        if (rc != 0) {
            throw new VerbsException(verb, rc > 0 ? rc : rc == -1 ? errno : -rc);
        }
    }

    /** Two pollfds and an errno capture segment for {@link #pollReadable(int, int, long, MemorySegment, MemorySegment)}. */
    static MemorySegment[] pollScratch(Arena arena) {
        return new MemorySegment[] {arena.allocate(16, 4), arena.allocate(CAPTURE)};
    }

    /** Waits until {@code fd} is readable (see {@link #pollReadable(int, int, long, MemorySegment, MemorySegment)}). */
    static boolean pollReadable(int fd, long timeoutMs, MemorySegment pfd, MemorySegment state) {
        return pollReadable(fd, -1, timeoutMs, pfd, state) != 0;
    }

    /**
     * Waits until {@code fd} or {@code other} is readable, with caller-owned scratch memory (from {@link #pollScratch}),
     * so a poller that sleeps on a completion channel allocates nothing per wait.
     *
     * @param other a second descriptor, or -1 for none (poll(2) skips a negative one)
     * @return which are readable: bit 0 {@code fd}, bit 1 {@code other}; 0 on timeout
     */
    static int pollReadable(int fd, int other, long timeoutMs, MemorySegment pfd, MemorySegment state) {
        long deadlineNs = System.nanoTime() + timeoutMs * 1_000_000L;
        try {
            while (true) {
                pfd.set(ValueLayout.JAVA_INT, 0, fd);
                pfd.set(ValueLayout.JAVA_SHORT, 4, POLLIN);
                pfd.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
                pfd.set(ValueLayout.JAVA_INT, 8, other);
                pfd.set(ValueLayout.JAVA_SHORT, 12, POLLIN);
                pfd.set(ValueLayout.JAVA_SHORT, 14, (short) 0);
                long leftMs = Math.max(0, (deadlineNs - System.nanoTime()) / 1_000_000L);
                int n = (int) POLL.invokeExact(pfd, 2L, (int) Math.min(Integer.MAX_VALUE, leftMs));
                if (n < 0) {
                    // rare: a signal (EINTR, wait again) or a bad fd (fails again at once); the repeat captures errno
                    n = (int) POLL_CAPTURING.invokeExact(state, pfd, 2L, 0);
                    if (n < 0 && (int) ERRNO.get(state, 0L) != EINTR) {
                        throw new VerbsException("poll", (int) ERRNO.get(state, 0L));
                    }
                    if (n <= 0) {
                        continue; // interrupted: wait out the rest
                    }
                }
                if (n == 0) {
                    return 0;
                }
                // any returned event (POLLIN, or POLLERR/POLLHUP on a broken descriptor) counts: the reader finds out
                return (pfd.get(ValueLayout.JAVA_SHORT, 6) != 0 ? 1 : 0) | (pfd.get(ValueLayout.JAVA_SHORT, 14) != 0 ? 2 : 0);
            }
        } catch (VerbsException e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException("poll failed", t);
        }
    }

    /**
     * eventfd(2) with an initial count of 0.
     *
     * @return the new descriptor
     * @throws VerbsException with the errno when the kernel refuses one (e.g. out of descriptors)
     */
    static int eventFd(int flags) {
        int fd;
        int errno;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment state = arena.allocate(CAPTURE);
            fd = (int) EVENTFD.invokeExact(state, 0, flags);
            errno = (int) ERRNO.get(state, 0L);
        } catch (Throwable t) {
            throw new IllegalStateException("downcall eventfd failed", t);
        }
        if (fd < 0) {
            throw new VerbsException("eventfd", errno);
        }
        return fd;
    }

    /** write(2) of {@code buf}'s first 8 bytes; @return what write returned (-1 on failure, errno not kept) */
    static long write8(int fd, MemorySegment buf) {
        try {
            return (long) WRITE.invokeExact(fd, buf, 8L);
        } catch (Throwable t) {
            throw new IllegalStateException("write failed", t);
        }
    }

    /** read(2) of 8 bytes into {@code buf}; @return what read returned (-1 on failure, errno not kept) */
    static long read8(int fd, MemorySegment buf) {
        try {
            return (long) READ.invokeExact(fd, buf, 8L);
        } catch (Throwable t) {
            throw new IllegalStateException("read failed", t);
        }
    }

    /** close(2); @return what close returned */
    static int closeFd(int fd) {
        try {
            return (int) CLOSE.invokeExact(fd);
        } catch (Throwable t) {
            throw new IllegalStateException("close failed", t);
        }
    }

    private static Object[] prepend(Object first, Object[] rest) {
        Object[] all = new Object[rest.length + 1];
        all[0] = first;
        System.arraycopy(rest, 0, all, 1, rest.length);
        return all;
    }
}
