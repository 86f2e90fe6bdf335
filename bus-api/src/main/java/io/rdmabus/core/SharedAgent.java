package io.rdmabus.core;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

import io.rdmabus.spi.AgentHost;
import io.rdmabus.spi.HostedAgent;
import io.rdmabus.spi.IdleSleeper;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.ManyToOneConcurrentLinkedQueue;

/**
 * The one agent of a {@code SHARED} or {@code INVOKER} bus: runs the bus's delivery agent and every agent its transport
 * hosts, one after the other in each duty cycle, so a frame received in a cycle reaches its subscriber in the same cycle
 * on the same thread.
 *
 * <p>Owner: the members and their array belong to whichever thread is inside {@link #doWork()}: the bus's shared thread,
 * or in {@code INVOKER} mode the one thread that holds {@link #cycleOwner} (the application's {@code Bus.doWork()}, or a
 * thread that waits for an agent and runs a cycle itself). Other threads reach members only through {@link #commands}.
 */
final class SharedAgent implements Agent, AgentHost {
    private static final long WAIT_PAUSE_NS = TimeUnit.MICROSECONDS.toNanos(50);
    private static final Member[] NONE = new Member[0];

    private final String roleName;
    private final boolean invoker;
    private final Consumer<Throwable> errorHandler;
    /** {@code SHARED}: the shared thread's idle strategy, woken when a command is queued; {@code INVOKER}: null. */
    private final WakeableIdleStrategy idle;
    /** Adds and removes from any thread, applied at the start of a duty cycle (unbounded: never drops a command). */
    private final ManyToOneConcurrentLinkedQueue<Runnable> commands = new ManyToOneConcurrentLinkedQueue<>();
    /** INVOKER: the thread inside a duty cycle, so two threads never run one at once; SHARED: unused. */
    private final AtomicReference<Thread> cycleOwner = new AtomicReference<>();
    private Member[] members = NONE;
    /**
     * For {@link HostedAgent#onAgentThread()}: {@code INVOKER}, the thread running the current cycle, else null;
     * {@code SHARED}, the shared thread from its start on, written once (not around every cycle: receiving threads read
     * it on every frame, and a field the shared thread wrote in every cycle would move between the CPUs each time).
     */
    private volatile Thread cycleThread;
    private volatile boolean closed;

    /**
     * @param roleName     the shared thread's name
     * @param invoker      true for {@code INVOKER}: any thread may run a cycle, one at a time
     * @param errorHandler where a member's exception goes (the other members keep running)
     * @param idle         {@code SHARED}: the shared thread's idle strategy; {@code INVOKER}: null
     */
    SharedAgent(final String roleName, final boolean invoker, final Consumer<Throwable> errorHandler, final WakeableIdleStrategy idle) {
        this.roleName = roleName;
        this.invoker = invoker;
        this.errorHandler = errorHandler;
        this.idle = invoker ? null : idle;
    }

    @Override
    public HostedAgent host(final Agent agent) {
        final Member member = new Member(agent);
        if (closed) {
            member.state = Member.CLOSED;
            return member;
        }
        offer(() -> start(member));
        return member;
    }

    /** {@code SHARED}: the shared thread sleeps in {@code sleeper} instead of parking (see {@link WakeableIdleStrategy}). */
    @Override
    public Runnable idleIn(final IdleSleeper sleeper) {
        if (idle == null || !idle.sleepIn(sleeper)) {
            return null;
        }
        return idle::wake;
    }

    private void offer(final Runnable command) {
        commands.offer(command);
        if (idle != null) {
            idle.wake(); // a sleeping shared thread would see the command only when its sleep ends
        }
    }

    @Override
    public int doWork() {
        if (closed) {
            return 0;
        }
        if (invoker) {
            final Thread me = Thread.currentThread();
            if (!cycleOwner.compareAndSet(null, me)) {
                return 0; // another thread is inside a cycle
            }
            cycleThread = me;
        }
        try {
            int work = 0;
            Runnable command;
            while ((command = commands.poll()) != null) {
                command.run();
                work++;
            }
            final Member[] current = members;
            for (final Member member : current) {
                if (member.state == Member.ACTIVE) {
                    try {
                        work += member.agent.doWork();
                    } catch (final AgentTerminationException ex) {
                        stop(member);
                    } catch (final Throwable ex) {
                        errorHandler.accept(ex);
                    }
                }
            }
            return work;
        } finally {
            if (invoker) {
                cycleThread = null;
                cycleOwner.set(null);
            }
        }
    }

    /** {@code SHARED}: on the shared thread, before its first cycle. */
    @Override
    public void onStart() {
        if (!invoker) {
            cycleThread = Thread.currentThread();
        }
    }

    /** Closes every member on the calling thread (the shared thread's last act, or the bus closing an invoker). */
    @Override
    public void onClose() {
        final Thread me = Thread.currentThread();
        if (invoker) {
            while (!cycleOwner.compareAndSet(null, me)) {
                LockSupport.parkNanos(WAIT_PAUSE_NS); // the application's doWork() is in a cycle: let it finish
            }
        }
        cycleThread = me;
        try {
            Runnable command;
            while ((command = commands.poll()) != null) {
                command.run();
            }
            for (final Member member : members) {
                stop(member);
            }
            members = NONE;
            closed = true;
        } finally {
            cycleThread = null;
            // INVOKER: cycleOwner stays taken, so no doWork() runs a cycle after the close
        }
    }

    @Override
    public String roleName() {
        return roleName;
    }

    private void start(final Member member) {
        if (member.state != Member.NEW) {
            return; // closed before it ever started
        }
        try {
            member.agent.onStart();
        } catch (final Throwable ex) {
            errorHandler.accept(ex);
            stop(member);
            return;
        }
        member.state = Member.ACTIVE;
        final Member[] grown = Arrays.copyOf(members, members.length + 1);
        grown[members.length] = member;
        members = grown;
    }

    /** Removes and closes a member; its state says CLOSED only once its {@code onClose} has returned. */
    private void stop(final Member member) {
        if (member.state == Member.ACTIVE) {
            members = Arrays.stream(members).filter(m -> m != member).toArray(Member[]::new);
            member.state = Member.STOPPING; // the cycle loop skips it from now on
            try {
                member.agent.onClose();
            } catch (final Throwable ex) {
                errorHandler.accept(ex);
            }
        }
        member.state = Member.CLOSED;
    }

    /** One hosted agent; its state is written by the cycle's thread and read by any. */
    private final class Member implements HostedAgent {
        static final int NEW = 0;
        static final int ACTIVE = 1;
        static final int STOPPING = 2;
        static final int CLOSED = 3;
        final Agent agent;
        volatile int state = NEW;

        Member(final Agent agent) {
            this.agent = agent;
        }

        @Override
        public boolean isClosed() {
            return state == CLOSED || closed;
        }

        @Override
        public boolean onAgentThread() {
            return cycleThread == Thread.currentThread();
        }

        @Override
        public void idleWhileWaiting() {
            if (invoker && !closed && doWork() > 0) {
                return;
            }
            LockSupport.parkNanos(WAIT_PAUSE_NS);
        }

        @Override
        public void close() {
            if (isClosed()) {
                return;
            }
            if (onAgentThread()) {
                stop(this); // from inside a cycle (an agent closing another): the loop skips closed members
                return;
            }
            if (state != STOPPING) {
                offer(() -> stop(this));
            }
            while (!isClosed()) {
                idleWhileWaiting();
            }
        }
    }
}
