package io.rdmabus;

import java.util.function.Function;

/**
 * Per-subscription settings. Defaults: {@link SlowConsumerPolicy#BACKPRESSURE}, a 1024-frame ring.
 *
 * @param policy         slow-consumer policy (best-effort topics only; reliable topics always back-pressure)
 * @param bufferSize     for {@link SlowConsumerPolicy#DROP_OLDEST}: how many decoded messages to keep
 * @param conflationKey  for {@link SlowConsumerPolicy#CONFLATE_LATEST}: the key to conflate on (e.g. instrument id);
 *                       {@code null} keeps one latest message overall
 * @param ringSize       receive ring slots, a power of two 2..65536
 * @param <T>            value type
 */
public record SubscribeOptions<T>(SlowConsumerPolicy policy, int bufferSize, Function<? super T, ?> conflationKey, int ringSize) {
    /** Default ring size. */
    public static final int DEFAULT_RING_SIZE = 1024;

    /** Validates. */
    public SubscribeOptions {
        if (policy == null) {
            throw new BusConfigurationException("SubscribeOptions.policy is null: use BACKPRESSURE, DROP_OLDEST or CONFLATE_LATEST");
        }
        if (bufferSize < 1) {
            throw new BusConfigurationException("SubscribeOptions.bufferSize must be >= 1, was " + bufferSize);
        }
        if (ringSize < 2 || ringSize > 65536 || Integer.bitCount(ringSize) != 1) {
            throw new BusConfigurationException("SubscribeOptions.ringSize must be a power of two in 2..65536, was " + ringSize);
        }
    }

    /** @param <T> value type @return defaults */
    public static <T> SubscribeOptions<T> defaults() {
        return new SubscribeOptions<>(SlowConsumerPolicy.BACKPRESSURE, 1, null, DEFAULT_RING_SIZE);
    }

    /** @param size newest messages kept @param <T> value type @return a drop-oldest policy */
    public static <T> SubscribeOptions<T> dropOldest(final int size) {
        return new SubscribeOptions<>(SlowConsumerPolicy.DROP_OLDEST, size, null, DEFAULT_RING_SIZE);
    }

    /** @param key conflation key, or null for one latest overall @param <T> value type @return a conflating policy */
    public static <T> SubscribeOptions<T> conflateLatest(final Function<? super T, ?> key) {
        return new SubscribeOptions<>(SlowConsumerPolicy.CONFLATE_LATEST, 1, key, DEFAULT_RING_SIZE);
    }

    /** @param slots ring slots @return a copy with that ring size */
    public SubscribeOptions<T> withRingSize(final int slots) {
        return new SubscribeOptions<>(policy, bufferSize, conflationKey, slots);
    }
}
