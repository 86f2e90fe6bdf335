/**
 * Safe Java wrappers over the jextract bindings in {@code io.rdmabus.rdma.verbs.ffm} (rdma-core 44).
 *
 * <p><b>Lifetime.</b> Every wrapper ({@link io.rdmabus.rdma.verbs.NativeResource}) owns one native object:
 * {@code close()} frees it, a second {@code close()} does nothing, any other use after close throws
 * {@link java.lang.IllegalStateException}. Dependents are tracked and a resource <em>refuses</em> to close
 * while dependents are open (PD with MRs/QPs/AHs, CQ used by QPs, context with PDs/CQs/channels, CM event
 * channel with ids), naming them in the exception. Close in reverse creation order: QP, MRs, AHs, PD, CQ,
 * completion channel, cm id, event channel. A {@link io.rdmabus.rdma.verbs.MemoryRegion} owns its off-heap
 * memory (a shared {@link java.lang.foreign.Arena}); deregistration comes before the memory is freed.
 *
 * <p><b>Errors.</b> Control-path verbs throw {@link io.rdmabus.rdma.verbs.VerbsException} (verb name, errno,
 * {@code strerror} text; errno is captured with {@code Linker.Option.captureCallState}); failed rdma_cm
 * operations throw {@link io.rdmabus.rdma.verbs.RdmaConnectException} with the event type (REJECTED,
 * UNREACHABLE, ...). Data-path calls ({@code postSend}, {@code postRecv}, {@code poll}, {@code requestNotify})
 * return status codes and do not allocate: requests ({@link io.rdmabus.rdma.verbs.SendRequest},
 * {@link io.rdmabus.rdma.verbs.RecvRequest}, and the post lists {@link io.rdmabus.rdma.verbs.SendRequestList} and
 * {@link io.rdmabus.rdma.verbs.RecvRequestList}, whose failed post names the refused request, {@code bad_wr}) and
 * completion arrays ({@link io.rdmabus.rdma.verbs.WorkCompletions}) are preallocated and reused.
 *
 * <p><b>Inline verbs.</b> {@code ibv_post_send/recv}, {@code ibv_poll_cq} and {@code ibv_req_notify_cq} are
 * {@code static inline} in verbs.h; the wrappers read their function pointers from {@code ctx->ops} once per
 * {@link io.rdmabus.rdma.verbs.VerbsContext}. The three data-path ones are called through {@code InlineVerbs} (pointer
 * arguments as addresses; {@code poll_cq} and {@code post_recv} linked critical), {@code req_notify_cq} through the
 * generated {@code invoke}.
 *
 * <p><b>Tests.</b> {@code VerbsLayoutTest} (normal build) checks every struct field used here against a
 * gcc-compiled C probe. The {@code rxe}-tagged tests in {@code io.rdmabus.rdma.verbs.rxe} run inside the QEMU
 * rxe lab: {@code lab/run-junit.sh --module rdma-transport --guests 2 --class ...RxeSingleHostTest --class
 * ...RxeTwoHostTest} and {@code --guests 3 --class ...RxeMulticastTest}.
 */
package io.rdmabus.rdma.verbs;
