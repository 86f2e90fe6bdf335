package io.rdmabus.spi;

import org.agrona.DirectBuffer;

/**
 * What the bus gives a transport for each subscription: where received frames go, whether the bus could take
 * each one ({@link #BACK_PRESSURE} when it cannot), and where transport faults go.
 *
 * <p>Threading: a transport calls {@link #onFrame} for one subscription from one thread at a time.
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
     * A frame arrived. {@code buffer} is a view over the transport's receive buffer, valid only until this
     * method returns; the bus copies what it keeps. Malformed frames are counted and dropped by the bus.
     *
     * @param buffer the receive buffer
     * @param offset first byte of the frame (its header)
     * @param length frame length as delivered by the transport
     * @return {@link #CONTINUE} or {@link #BACK_PRESSURE}
     */
    int onFrame(DirectBuffer buffer, int offset, int length);

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
