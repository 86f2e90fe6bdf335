package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;
import io.rdmabus.rdma.verbs.ffm.ibv_context_ops;
import io.rdmabus.rdma.verbs.ffm.ibv_cq;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * A completion queue. {@link #poll} is the data path: it fills a preallocated
 * {@link WorkCompletions} and returns a count, without allocating. Refuses to close while QPs use it.
 */
public final class CompletionQueue extends NativeResource {
    private static final MethodHandle CREATE = Native.capturing(RdmaCm.ibv_create_cq$address(), RdmaCm.ibv_create_cq$descriptor());
    private static final MethodHandle DESTROY = Native.capturing(RdmaCm.ibv_destroy_cq$address(), RdmaCm.ibv_destroy_cq$descriptor());

    private final VerbsContext context;
    private final CompletionChannel channel;
    private final MemorySegment cq;
    private final long cqAddress;
    private final InlineVerbs verbs;
    private final MemorySegment notifyFn;
    private long unackedEvents;

    CompletionQueue(VerbsContext context, int minEntries, CompletionChannel channel) {
        super("CompletionQueue", context, channel);
        if (minEntries <= 0) {
            close();
            throw new IllegalArgumentException("CQ size must be > 0, got " + minEntries);
        }
        this.context = context;
        this.channel = channel;
        MemorySegment ch = channel == null ? MemorySegment.NULL : channel.segment();
        MemorySegment c;
        try {
            c = Native.callPointer("ibv_create_cq", CREATE, context.segment(), minEntries, MemorySegment.NULL, ch, 0);
        } catch (RuntimeException e) {
            close();
            throw e;
        }
        this.cq = c.reinterpret(ibv_cq.sizeof());
        this.cqAddress = c.address();
        this.verbs = context.inlineVerbs;
        this.notifyFn = context.reqNotifyCqFn;
    }

    /**
     * Polls up to {@code into.capacity()} completions (ctx->ops.poll_cq).
     *
     * @return number of completions written to {@code into} (0 if none), or a negative value on a CQ error
     */
    public int poll(WorkCompletions into) {
        checkOpen();
        int n = verbs.pollCq(cqAddress, into.capacity(), into.address());
        into.count = Math.max(n, 0);
        return n;
    }

    /**
     * Arms the CQ so the next completion signals its {@link CompletionChannel} (ctx->ops.req_notify_cq).
     *
     * @return 0 or an errno value
     */
    public int requestNotify(boolean solicitedOnly) {
        checkOpen();
        if (channel == null) {
            throw new IllegalStateException("this CQ has no completion channel; create it with one for event mode");
        }
        return ibv_context_ops.req_notify_cq.invoke(notifyFn, cq, solicitedOnly ? 1 : 0);
    }

    /** @return the completion channel, or null */
    public CompletionChannel channel() {
        return channel;
    }

    /** @return the context */
    public VerbsContext context() {
        return context;
    }

    synchronized void ackEvents(int n) {
        unackedEvents += n;
        if (unackedEvents >= 16) {
            RdmaCm.ibv_ack_cq_events(cq, (int) unackedEvents);
            unackedEvents = 0;
        }
    }

    MemorySegment segment() {
        checkOpen();
        return cq;
    }

    @Override
    void release() {
        if (cq == null) {
            return;
        }
        synchronized (this) {
            if (unackedEvents > 0) {
                // ibv_destroy_cq blocks until every event taken from the channel is acknowledged.
                RdmaCm.ibv_ack_cq_events(cq, (int) unackedEvents);
                unackedEvents = 0;
            }
        }
        Native.callInt("ibv_destroy_cq", DESTROY, cq);
    }
}
