package io.rdmabus.core;

import io.rdmabus.Delivery;
import io.rdmabus.PublishStatus;

import org.agrona.DirectBuffer;
import org.agrona.collections.Object2LongHashMap;

/**
 * One publication's same-bus loopback ({@link LocalRoutes}): puts each whole message the publication sends into the
 * ring of every subscription of the topic in the same bus, as the transport's receive side would. Owner: the
 * publication's token owner (one thread at a time), so no lock; each subscription's same-bus ring is multi-producer.
 *
 * <p>Per message: {@link #reserve()} claims a slot in every subscription's same-bus ring before the message goes out; a RELIABLE subscription
 * whose ring is full makes the whole offer {@code BACK_PRESSURED} (nothing sent anywhere, nothing reserved), so a slow
 * same-bus subscriber holds its publisher back exactly as a remote one does, by its ring and nothing more. A
 * BEST_EFFORT subscription with a full ring loses the message: counted as dropped and reported in the
 * {@code lostBefore} of its next message from this session. Then {@link #publish} fills the slots, or
 * {@link #cancel()} gives them back (as skipped slots) when the transport refused the message after all.
 */
final class LocalDelivery {
    private static final SubscriptionChannel<?>[] NONE = new SubscriptionChannel<?>[0];

    private final LocalRoutes.Route route;
    /** The subscriptions of the current reservation, parallel to {@link #slots}. */
    private SubscriptionChannel<?>[] reserved = NONE;
    private long[] slots = new long[4];
    /** Best-effort messages lost per subscription since its last message from this publication. */
    private final Object2LongHashMap<SubscriptionChannel<?>> lost = new Object2LongHashMap<>(0);

    LocalDelivery(final LocalRoutes.Route route) {
        this.route = route;
    }

    /** @return true if the bus has an open subscription of the topic */
    boolean hasSubscribers() {
        for (final SubscriptionChannel<?> channel : route.channels) {
            if (!channel.closed) {
                return true;
            }
        }
        return false;
    }

    /** @return {@link PublishStatus#OK} with a slot reserved where there is room, or BACK_PRESSURED with none reserved */
    int reserve() {
        final SubscriptionChannel<?>[] channels = route.channels;
        if (channels.length == 0) {
            return PublishStatus.OK;
        }
        for (final SubscriptionChannel<?> channel : channels) {
            if (isReliable(channel) && !channel.closed && channel.localCredits() == 0) {
                return PublishStatus.BACK_PRESSURED;
            }
        }
        if (slots.length < channels.length) {
            slots = new long[channels.length]; // only when the bus has more subscriptions of the topic than ever before
        }
        for (int i = 0; i < channels.length; i++) {
            final SubscriptionChannel<?> channel = channels[i];
            final long slot = channel.closed ? FrameReceiver.NO_ROOM : channel.tryClaimLocal();
            if (slot == FrameReceiver.NO_ROOM && isReliable(channel) && !channel.closed) {
                // another publisher of this bus took the last slot since the check above
                release(channels, i);
                return PublishStatus.BACK_PRESSURED;
            }
            slots[i] = slot;
        }
        reserved = channels;
        return PublishStatus.OK;
    }

    /** Puts the message (payload only) into every reserved slot; counts a best-effort drop where there was none. */
    void publish(final DirectBuffer src, final int offset, final int length, final int sessionId, final long sequence,
                 final long timestampNs) {
        final SubscriptionChannel<?>[] channels = reserved;
        reserved = NONE;
        for (int i = 0; i < channels.length; i++) {
            final SubscriptionChannel<?> channel = channels[i];
            final long slot = slots[i];
            if (slot == FrameReceiver.NO_ROOM) {
                if (!channel.closed) {
                    channel.dropped.incrementAndGet();
                    lost.put(channel, lost.getValue(channel) + 1);
                }
                continue;
            }
            final long lostBefore = lost.isEmpty() ? 0 : lost.removeKey(channel);
            channel.publishLocal(slot, src, offset, length, sessionId, sequence, timestampNs, lostBefore);
        }
    }

    /** Gives the reserved slots back: each becomes a skipped slot that carries no message. */
    void cancel() {
        final SubscriptionChannel<?>[] channels = reserved;
        reserved = NONE;
        release(channels, channels.length);
    }

    private void release(final SubscriptionChannel<?>[] channels, final int count) {
        for (int i = 0; i < count; i++) {
            if (slots[i] != FrameReceiver.NO_ROOM) {
                channels[i].skipLocal(slots[i]);
            }
        }
    }

    private static boolean isReliable(final SubscriptionChannel<?> channel) {
        return channel.topic.delivery() == Delivery.RELIABLE;
    }
}
