package io.rdmabus;

/**
 * Which threads run a bus's agents: its delivery agent and the agents its transport hosts with the bus (the Aeron
 * transport's receiver; the rdma poller in {@code SHARED} and {@code INVOKER}; TCP receives on netty's event loops,
 * which it keeps in every mode), and so on which thread a copying subscriber's ({@code Bus.subscribe}) back-pressure
 * {@code onNext} runs. As in Aeron's media driver ({@code DEDICATED}, {@code SHARED}, {@code INVOKER}).
 * {@code docs/architecture.md}, "Threading modes", gives the measurements behind the default.
 *
 * <p>Whatever the mode, one thread at a time signals a subscriber, and a thread that takes over sees everything the
 * previous one did (Reactive Streams rule 1.3). Drop-oldest and conflating subscriptions always emit on a worker
 * thread of their own; in-place subscriptions ({@code Bus.subscribeInPlace}) always run on the receiving thread.
 */
public enum ThreadingMode {
    /**
     * One thread per agent: a received frame crosses from the transport's receive thread to the delivery thread through
     * the subscription's ring, so a copying subscriber's {@code onNext} always runs on the bus's delivery thread and a
     * slow one never holds up a transport's receive thread. Best when there are more cores than spinning threads.
     */
    DEDICATED,
    /**
     * One thread runs every hosted agent in turn: a frame the transport receives is delivered to the subscriber in the
     * same duty cycle, on the same core, with no hand-off between threads (the ring still buffers frames for a
     * subscriber without demand). One spinning thread fewer per hosted agent: the default, because on small machines
     * every extra spinning thread costs more than it buys.
     *
     * <p>A copying subscriber's {@code onNext} runs on the thread that received the message whenever its ring is empty
     * and it has demand (direct emission): the shared thread for Aeron and rdma (their receive agents run there), the
     * connection's event loop for TCP (each refuses Reactor's blocking operators); otherwise, and for same-bus publications, on the shared
     * thread, which drains the ring. So a slow {@code onNext} holds up that receiving thread (every topic it serves
     * waits, and the publisher is paced by the transport); subscribers that need isolation use {@code publishOn}.
     */
    SHARED,
    /**
     * No bus thread: the application's own thread drives the bus by calling {@link Bus#doWork()} in its loop (a trading
     * loop that owns its core). Frames are received (by hosted agents) and delivered only inside {@code doWork()}: a
     * copying subscriber's {@code onNext} runs only there, even for a transport that receives on its own threads (TCP's
     * event loops: those frames go through the ring). Calls that wait for an agent (subscribe, close) drive the agents
     * themselves while they wait, so they work from any thread.
     */
    INVOKER
}
