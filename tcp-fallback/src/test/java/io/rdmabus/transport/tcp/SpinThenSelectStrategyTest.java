package io.rdmabus.transport.tcp;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.netty.channel.SelectStrategy;
import io.netty.util.IntSupplier;
import org.junit.jupiter.api.Test;

/** The event loop's spin window, on a clock the test moves: what each call answers, and when it polls with selectNow. */
class SpinThenSelectStrategyTest {
    private static final long SPIN_NS = 50_000;

    private long now = 1_000_000;
    private int selectNowCalls;
    private int ready;
    private final IntSupplier selectNow = () -> {
        selectNowCalls++;
        return ready;
    };
    private final SpinThenSelectStrategy strategy = new SpinThenSelectStrategy(SPIN_NS, () -> now);

    private int call(final boolean hasTasks) throws Exception {
        return strategy.calculateStrategy(selectNow, hasTasks);
    }

    @Test
    void aLoopThatHasDoneNoWorkBlocksAtOnceWithoutASelectNow() throws Exception {
        assertEquals(SelectStrategy.SELECT, call(false));
        assertEquals(0, selectNowCalls, "netty's default makes no selectNow before a blocking select when it has no tasks");
    }

    @Test
    void aReturnFromABlockingSelectStartsAWindowOfPolling() throws Exception {
        assertEquals(SelectStrategy.SELECT, call(false));
        now += 1_000_000; // blocked for a millisecond; woken by I/O the loop has processed since
        assertEquals(0, call(false), "polls (selectNow) instead of blocking again");
        assertEquals(1, selectNowCalls);
        now += SPIN_NS - 1;
        assertEquals(0, call(false), "still inside the window");
        now += 1;
        assertEquals(SelectStrategy.SELECT, call(false), "the window after the wake has passed");
        assertEquals(2, selectNowCalls);
    }

    @Test
    void readyKeysAndTasksExtendTheWindow() throws Exception {
        assertEquals(SelectStrategy.SELECT, call(false));
        now += 1_000_000;
        ready = 3;
        assertEquals(3, call(false), "ready keys: processed at once");
        ready = 0;
        now += SPIN_NS - 1;
        assertEquals(0, call(true), "tasks: run at once");
        now += SPIN_NS - 1;
        assertEquals(0, call(false), "the task restarted the window");
        now += 1;
        assertEquals(SelectStrategy.SELECT, call(false));
    }

    @Test
    void tasksAreNeverLeftForABlockingSelect() throws Exception {
        now += 10 * SPIN_NS; // long idle
        assertEquals(0, call(true), "with tasks the loop polls and runs them however long it was idle");
        assertEquals(1, selectNowCalls);
    }
}
