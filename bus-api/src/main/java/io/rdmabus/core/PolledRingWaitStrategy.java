package io.rdmabus.core;

import com.lmax.disruptor.Sequence;
import com.lmax.disruptor.SequenceBarrier;
import com.lmax.disruptor.WaitStrategy;

/**
 * The wait strategy of a subscription's ring, which only an {@link com.lmax.disruptor.EventPoller} drains: the delivery
 * agent polls it in its duty cycle and idles under its own idle strategy, so no thread ever waits on the ring. Publishing
 * therefore signals nobody (a {@code BlockingWaitStrategy} took a monitor and called {@code notifyAll} on every publish,
 * with no waiter), and waiting is a programming error.
 */
final class PolledRingWaitStrategy implements WaitStrategy {
    static final PolledRingWaitStrategy INSTANCE = new PolledRingWaitStrategy();

    private PolledRingWaitStrategy() {
    }

    @Override
    public long waitFor(final long sequence, final Sequence cursor, final Sequence dependentSequence, final SequenceBarrier barrier) {
        throw new UnsupportedOperationException("a subscription ring is drained by an EventPoller; nothing waits on it");
    }

    @Override
    public void signalAllWhenBlocking() {
        // nobody waits: the delivery agent polls
    }
}
