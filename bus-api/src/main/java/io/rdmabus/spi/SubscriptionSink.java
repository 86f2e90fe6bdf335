package io.rdmabus.spi;

import org.agrona.DirectBuffer;

/**
 * What the bus gives a transport for each subscription: where received frames go, whether the bus could take
 * each one ({@link #BACK_PRESSURE} when it cannot), and where transport faults go.
 *
 * <p>Threading: a transport calls {@link #onFrame} and {@link #onValidatedFrame} for one subscription from one thread at a
 * time, and a call on another thread than the last one's happens after it (a lock, or a hand-over through a
 * concurrent queue or an agent runner): the bus keeps the subscription's sequence state in plain fields and fills
 * its ring as that ring's only producer.
 */
public interface SubscriptionSink {
    /** The frame was consumed (delivered, or counted and dropped). */
    int CONTINUE = 0;
    /**
     * The bus cannot take the frame now (reliable topic, ring full because the subscriber is slow).
     * The transport must keep the frame and offer it again later, and stop granting credits.
     */
    int BACK_PRESSURE = 1;
    /**
     * Only from {@link #onValidatedFrame}: the bus did not take the frame into its session's stream (a duplicate, a
     * suspect sequence jump held back until the session's next frame decides it, another topic's id, or the
     * subscription closed). The frame is consumed like {@link #CONTINUE}, but a transport must not derive stream state
     * from it (e.g. a RELIABLE resume point).
     */
    int DROPPED = 2;

    /**
     * A frame arrived. {@code buffer} is a view over the transport's receive buffer, valid only until this
     * method returns; the bus copies what it keeps. The bus validates the header ({@code FrameHeader.validate}): it
     * trusts no transport with that here. Malformed frames are counted and dropped by the bus.
     *
     * @param buffer the receive buffer
     * @param offset first byte of the frame (its header)
     * @param length frame length as delivered by the transport
     * @return {@link #CONTINUE} or {@link #BACK_PRESSURE}
     */
    int onFrame(DirectBuffer buffer, int offset, int length);

    /**
     * A frame whose header the transport has already validated, so the bus does not validate it again: one validation
     * per frame, where its bytes first arrive. The transport's promise (the bus cannot check it, so only a transport that
     * keeps it calls this method): {@code FrameHeader.validate(buffer, offset, length, max) == FrameHeader.VALID}, with
     * {@code max} the {@link TransportCapabilities#maxFrameLength} it announces for the topic's delivery, checked once
     * on its receive path before this call. A frame that failed validation goes to {@link #onFrame}, where the bus
     * validates it, counts it as malformed and drops it; a transport that does not validate calls only
     * {@link #onFrame}. Everything else the bus checks (the topic id, the sequence rule) it checks here too.
     *
     * <p>The verdict tells the transport whether the frame entered its session's stream: {@link #CONTINUE} (taken:
     * delivered, reassembled, or counted as lost for want of room; the session's sequence moved past it),
     * {@link #DROPPED} (consumed but not taken: a duplicate, a suspect jump, another topic's id, a closed subscription)
     * or {@link #BACK_PRESSURE} (as for {@link #onFrame}). The default, for sinks outside the bus, is {@link #onFrame},
     * whose {@link #CONTINUE} a transport then takes as "taken".
     *
     * @param buffer the receive buffer
     * @param offset first byte of the frame (its header)
     * @param length frame length as delivered by the transport
     * @return {@link #CONTINUE}, {@link #DROPPED} or {@link #BACK_PRESSURE}
     */
    default int onValidatedFrame(final DirectBuffer buffer, final int offset, final int length) {
        return onFrame(buffer, offset, length);
    }

    /**
     * How many more frames the bus can accept for this subscription right now (its ring's free room, which the
     * subscriber's demand drains). Advisory: no transport of this project calls it; they offer every frame and act on
     * {@link #BACK_PRESSURE} (the rdma transport holds a refused frame and grants its peer a credit only once every
     * sink took it). A sender that wants to avoid best-effort drops at the ring may pace on it.
     *
     * @return free ring slots of this subscription
     */
    long availableCredits();

    /**
     * A data-path fault the transport could not recover (peer vanished past the retention window, QP in error).
     * The bus fails the subscriber's {@code Flux} with it.
     *
     * @param cause a typed cause
     */
    void onTransportError(Throwable cause);
}
