package io.rdmabus;

/**
 * Which threads run a bus's agents: its delivery agent and the agents its transport hosts with the bus (the Aeron
 * transport's receiver; transports whose receive runs elsewhere, such as TCP's event loops, are not affected). As in
 * Aeron's media driver ({@code DEDICATED}, {@code SHARED}, {@code INVOKER}). {@code docs/architecture.md},
 * "Threading modes", gives the measurements behind the default.
 */
public enum ThreadingMode {
    /**
     * One thread per agent: a received frame crosses from the transport's receive thread to the delivery thread through
     * the subscription's ring. Best when there are more cores than spinning threads.
     */
    DEDICATED,
    /**
     * One thread runs every hosted agent in turn: a frame the transport receives is delivered to the subscriber in the
     * same duty cycle, on the same core, with no hand-off between threads (the ring still buffers frames for a
     * subscriber without demand). One spinning thread fewer per hosted agent: the default, because on small machines
     * every extra spinning thread costs more than it buys.
     */
    SHARED,
    /**
     * No bus thread: the application's own thread drives the bus by calling {@link Bus#doWork()} in its loop (a trading
     * loop that owns its core). Frames are received and delivered only inside {@code doWork()}. Calls that wait for an
     * agent (subscribe, close) drive the agents themselves while they wait, so they work from any thread.
     */
    INVOKER
}
