package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;
import io.rdmabus.rdma.verbs.ffm.ibv_comp_channel;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * A completion channel: a file descriptor that becomes readable when an armed CQ
 * ({@link CompletionQueue#requestNotify}) gets a completion. Lets a poller sleep instead of spin.
 */
public final class CompletionChannel extends NativeResource {
    private static final MethodHandle CREATE =
            Native.capturing(RdmaCm.ibv_create_comp_channel$address(), RdmaCm.ibv_create_comp_channel$descriptor());
    private static final MethodHandle DESTROY =
            Native.capturing(RdmaCm.ibv_destroy_comp_channel$address(), RdmaCm.ibv_destroy_comp_channel$descriptor());

    private final MemorySegment channel;
    private final int fd;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment cqOut;
    private final MemorySegment ctxOut;
    private final MemorySegment pollFd;
    private final MemorySegment pollErrno;

    CompletionChannel(VerbsContext context) {
        super("CompletionChannel", context);
        this.channel = Native.callPointer("ibv_create_comp_channel", CREATE, context.segment()).reinterpret(ibv_comp_channel.sizeof());
        this.fd = ibv_comp_channel.fd(channel);
        this.cqOut = arena.allocate(ValueLayout.ADDRESS);
        this.ctxOut = arena.allocate(ValueLayout.ADDRESS);
        MemorySegment[] scratch = Native.pollScratch(arena);
        this.pollFd = scratch[0];
        this.pollErrno = scratch[1];
    }

    /**
     * Waits for the next completion event and acknowledges it. The CQ must be re-armed with
     * {@link CompletionQueue#requestNotify} and then polled.
     *
     * @param expected the CQ armed on this channel (one CQ per channel in this wrapper)
     * @return the CQ that fired, or null on timeout
     */
    public CompletionQueue awaitEvent(long timeoutMs, CompletionQueue expected) {
        return awaitEvent(timeoutMs, expected, null);
    }

    /**
     * As {@link #awaitEvent(long, CompletionQueue)}, and a signal of {@code wakeup} ends the wait too (it is cleared).
     *
     * @param wakeup another thread's way to end the wait, or null
     * @return the CQ that fired, or null on timeout or wake-up
     */
    public synchronized CompletionQueue awaitEvent(long timeoutMs, CompletionQueue expected, EventFd wakeup) {
        checkOpen();
        if (expected == null || expected.channel() != this) {
            throw new IllegalArgumentException("awaitEvent needs the CompletionQueue created with this channel");
        }
        int ready = Native.pollReadable(fd, wakeup == null ? -1 : wakeup.fd(), timeoutMs, pollFd, pollErrno);
        if ((ready & 2) != 0) {
            wakeup.clear();
        }
        if ((ready & 1) == 0) {
            return null;
        }
        // the exact (non-varargs) downcall and a raw address read: a poller wakes through here, so no allocation
        if (RdmaCm.ibv_get_cq_event(channel, cqOut, ctxOut) != 0) {
            throw new VerbsException("ibv_get_cq_event", 0, "ibv_get_cq_event failed although the channel was readable");
        }
        long cq = cqOut.get(ValueLayout.JAVA_LONG, 0);
        if (cq == expected.segment().address()) {
            expected.ackEvents(1);
            return expected;
        }
        throw new IllegalStateException("completion event for an unknown CQ at 0x" + Long.toHexString(cq));
    }

    /** @return the channel's file descriptor (for an external poller) */
    public int fd() {
        return fd;
    }

    MemorySegment segment() {
        checkOpen();
        return channel;
    }

    @Override
    void release() {
        try {
            Native.callInt("ibv_destroy_comp_channel", DESTROY, channel);
        } finally {
            arena.close();
        }
    }
}
