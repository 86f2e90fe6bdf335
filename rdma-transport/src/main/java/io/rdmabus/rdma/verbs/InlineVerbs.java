package io.rdmabus.rdma.verbs;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The data-path calls of verbs.h's {@code static inline} verbs through the provider's function pointers in
 * {@code ctx->ops}: {@code poll_cq}, {@code post_recv} and {@code post_send}.
 *
 * <p>Why not the generated {@code ibv_context_ops.*.invoke}: that handle takes the function pointer and every other
 * pointer as a {@link MemorySegment}, and on each call checks each segment argument (native, its arena alive, which for
 * the shared arenas the requests live in is an atomic acquire before the call and a release after). Here one handle per
 * function is linked to its pointer once per context and takes the other pointers as {@code long} addresses (a pointer
 * and a {@code long} are passed alike in the x86-64 and AArch64 calling conventions), so a call checks only the
 * function pointer. {@code VerbsCallBenchmark} (benchmarks module) measures both ways against libc functions of the
 * same shapes; in the rxe lab, whose JIT is C1 only, the generated calls' checks and stubs were a quarter of the
 * echoing poller's samples (docs/benchmarks.md, "Known gaps").
 *
 * <p>{@code poll_cq} and {@code post_recv} are also linked {@link Linker.Option#critical critical}: the calling thread
 * stays in Java for the call (no thread-state transition, no safepoint check on return). That is for functions that
 * return quickly and never block or call back into Java, as these two do in the providers (they take the queue's
 * spinlock and read or write its ring in user memory). {@code post_send} is not: some providers (rxe among them)
 * ring the doorbell with a system call, during which a critical call would hold off every safepoint of the JVM.
 *
 * <p>The caller keeps the memory behind each address alive for the call: the request, list or completion array is not
 * closed while it posts or polls. Each has one owner thread that closes it, or, for a publication's, is closed by the
 * publication's close after its claim gate opened and its replays ended (the transport's {@code RdmaPublication},
 * {@code UdPublication}). A closed one refuses to give its address ({@code IllegalStateException}).
 */
final class InlineVerbs {
    private static final Linker LINKER = Linker.nativeLinker();
    /** A pointer argument passed as its address: a 64-bit integer, as the calling convention passes a pointer. */
    private static final ValueLayout.OfLong POINTER = ValueLayout.JAVA_LONG;
    /** {@code int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc)}. */
    private static final FunctionDescriptor POLL = FunctionDescriptor.of(ValueLayout.JAVA_INT, POINTER, ValueLayout.JAVA_INT, POINTER);
    /** {@code int (*post_recv|post_send)(struct ibv_qp *qp, struct ibv_*_wr *wr, struct ibv_*_wr **bad_wr)}. */
    private static final FunctionDescriptor POST = FunctionDescriptor.of(ValueLayout.JAVA_INT, POINTER, POINTER, POINTER);

    static {
        if (ValueLayout.ADDRESS.byteSize() != Long.BYTES) {
            throw new ExceptionInInitializerError("the data-path verbs pass pointers as 64-bit integers; this platform's are "
                    + ValueLayout.ADDRESS.byteSize() * Byte.SIZE + "-bit");
        }
    }

    private final MethodHandle pollCq;
    private final MethodHandle postRecv;
    private final MethodHandle postSend;

    /**
     * Links the three calls to the provider's functions ({@code ctx->ops}), once per context. A bound handle still checks
     * its function pointer on every call (the JDK's {@code SharedUtils.checkSymbol}); it no longer checks the other arguments.
     */
    InlineVerbs(MemorySegment pollCqFn, MemorySegment postRecvFn, MemorySegment postSendFn) {
        this.pollCq = LINKER.downcallHandle(pollCqFn, POLL, Linker.Option.critical(false));
        this.postRecv = LINKER.downcallHandle(postRecvFn, POST, Linker.Option.critical(false));
        this.postSend = LINKER.downcallHandle(postSendFn, POST);
    }

    int pollCq(long cq, int entries, long wcs) {
        try {
            return (int) pollCq.invokeExact(cq, entries, wcs);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    int postRecv(long qp, long wr, long badWr) {
        try {
            return (int) postRecv.invokeExact(qp, wr, badWr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    int postSend(long qp, long wr, long badWr) {
        try {
            return (int) postSend.invokeExact(qp, wr, badWr);
        } catch (Throwable t) {
            throw rethrow(t);
        }
    }

    private static RuntimeException rethrow(Throwable t) {
        if (t instanceof RuntimeException e) {
            throw e;
        }
        if (t instanceof Error e) {
            throw e;
        }
        throw new AssertionError("a downcall threw a checked exception", t);
    }
}
