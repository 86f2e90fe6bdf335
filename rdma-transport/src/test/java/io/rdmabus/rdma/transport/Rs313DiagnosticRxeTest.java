package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmabus.Bus;
import io.rdmabus.tck.BusPublisherVerificationAccess;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.lang.ref.Reference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.WeakReference;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import com.sun.management.HotSpotDiagnosticMXBean;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.reactivestreams.Publisher;
import org.reactivestreams.tck.PublisherVerification;
import org.reactivestreams.tck.TestEnvironment;

/**
 * Diagnostic of RS TCK rule 3.13 on rxe (docs/rdma-transport-history.md, "RS rule 3.13"): runs the rule's own scenario (the
 * TCK's {@code BusPublisherVerification}: {@code take(3, true)}, a concurrent publish, request 1, one element, cancel,
 * wait 1 s, {@code System.gc()}, then 100 ms on the reference queue), each time on a timeout thread as TransportTck
 * does: A instrumented after reference processing settled; B instrumented and C the real rule, each right after the RS
 * rules the TCK runs before 3.13 (their subscriptions are garbage by then); D instrumented and E the real rule with a
 * made-up backlog of dead direct buffers at the rule's GC.
 *
 * <p>An instrumented run tells apart a subscriber still strongly reachable after the GC (its weak reference is not
 * cleared: it then writes a heap dump {@code rs313-*.hprof} to {@code $LAB_OUT}, where a {@link Marker} refers to it,
 * and the test fails) from one that was collected but whose reference the Reference Handler thread had not enqueued
 * within the rule's 100 ms: it prints when it was enqueued, the Reference Handler's CPU time and stack meanwhile, and
 * the count of direct buffers, whose cleaners that thread runs itself, one by one, as it hands out what the GC cleared.
 *
 * <pre>
 * flock /var/tmp/rdma-bus-lab.lock env RXE_LAB_CPUS=2 RXE_LAB_JAVA_OPTS="$RDMABUS_JVM_FLAGS" lab/run-junit.sh \
 *     --module rdma-transport --guests 1 --class io.rdmabus.rdma.transport.Rs313DiagnosticRxeTest
 * </pre>
 */
@Tag("rxe")
@Timeout(value = 900, unit = TimeUnit.SECONDS)
class Rs313DiagnosticRxeTest {
    private static final String RULE = "required_spec313_cancelMustMakeThePublisherEventuallyDropAllReferencesToTheSubscriber";
    private static final long GC_TIMEOUT_MS = 1_000; // TckFixture.publisherReferenceGcTimeoutMillis() default
    private static final AtomicInteger DUMPS = new AtomicInteger();
    /**
     * Direct buffers of a made-up backlog (stages D, E): as many as 48 subscription rings held before the bus's ring
     * slots became heap buffers (one 256-byte direct buffer, so one JDK cleaner, per slot, 1024 slots per ring).
     */
    private static final int BACKLOG = 48 * 1024;

    /** The weak reference to the cancelled subscriber; its class names it in a heap dump. */
    static final class Marker extends WeakReference<Object> {
        Marker(final Object referent, final ReferenceQueue<Object> queue) {
            super(referent, queue);
        }
    }

    private final List<String> stronglyReachable = new ArrayList<>();
    private final List<String> summary = new ArrayList<>();

    @Test
    void theCancelledTckSubscriberIsUnreachableAfterTheRulesGc() throws Throwable {
        System.err.println("rs313: collectors " + ManagementFactory.getGarbageCollectorMXBeans().stream().map(GarbageCollectorMXBean::getName)
                .toList() + ", max heap " + Runtime.getRuntime().maxMemory() / (1 << 20) + " MiB, cpus "
                + Runtime.getRuntime().availableProcessors());
        RdmaFixture fixture = new RdmaFixture(Map.of(AuthConfig.SECRET, "rdma-tck-bus-secret-0123456789"));
        List<Bus> buses = new ArrayList<>();
        try {
            Bus pubBus = fixture.newBus("rs313-pub");
            Bus subBus = fixture.newBus("rs313-sub");
            buses.add(pubBus);
            buses.add(subBus);
            TestEnvironment env = new TestEnvironment(3_000, 200);
            AtomicInteger closedNames = new AtomicInteger();
            PublisherVerification<String> v = BusPublisherVerificationAccess.verification(env, GC_TIMEOUT_MS, pubBus, subBus, () -> {
                Bus closed = fixture.newBus("rs313-closed-" + closedNames.incrementAndGet());
                closed.close();
                return closed;
            }, "rs313." + Long.toHexString(System.nanoTime() & 0xFFFFFF));

            settle("A");
            measure("A: instrumented, after reference processing settled", v, env, 0);
            rulesBefore313(v, "B");
            measure("B: instrumented, right after the RS rules before 3.13", v, env, 0);
            rulesBefore313(v, "C");
            runRule("C: real rule, right after the RS rules before 3.13 (as in the TCK)", v, RULE, 0);
            settle("D");
            measure("D: instrumented, " + BACKLOG + " dead direct buffers (" + BACKLOG / 1024 + " old-style rings) at its GC", v, env, BACKLOG);
            settle("E");
            runRule("E: real rule, " + BACKLOG + " dead direct buffers at its GC", v, RULE, BACKLOG);
        } finally {
            for (Bus b : buses) {
                b.close();
            }
            fixture.close();
            System.err.println("rs313 summary:\n  " + String.join("\n  ", summary));
        }
        assertTrue(stronglyReachable.isEmpty(), "the cancelled RS TCK subscriber was still strongly reachable after System.gc() in: "
                + stronglyReachable + " (heap dumps rs313-*.hprof in $LAB_OUT)");
    }

    /** Full GCs until the count of direct buffers stops falling (their cleaners run on the Reference Handler). */
    private void settle(final String label) throws InterruptedException {
        long t0 = System.nanoTime();
        long before = directCount();
        long last = -1;
        long stableSince = System.nanoTime();
        while (System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(30)) {
            System.gc();
            Thread.sleep(250);
            long now = directCount();
            if (now != last) {
                last = now;
                stableSince = System.nanoTime();
            } else if (System.nanoTime() - stableSince > TimeUnit.MILLISECONDS.toNanos(1_000)) {
                break;
            }
        }
        String s = "settle " + label + ": direct buffers " + before + " -> " + last + " in " + ms(t0) + " ms";
        System.err.println("rs313: " + s);
        summary.add(s);
    }

    /** The RS TCK rules that sort before 3.13, as TransportTck runs them (setUp, each on a timeout thread). */
    private void rulesBefore313(final PublisherVerification<String> v, final String label) {
        long t0 = System.nanoTime();
        long d0 = directCount();
        List<Method> rules = Arrays.stream(PublisherVerification.class.getMethods())
                .filter(m -> Modifier.isPublic(m.getModifiers()) && m.getParameterCount() == 0)
                .filter(m -> m.getName().startsWith("required_") || m.getName().startsWith("optional_"))
                .filter(m -> m.getName().compareTo(RULE) < 0)
                .sorted(Comparator.comparing(Method::getName))
                .toList();
        int passed = 0;
        for (Method m : rules) {
            if (runRuleQuietly(v, m.getName()) == null) {
                passed++;
            }
        }
        String s = "rules before 3.13 (" + label + "): " + passed + " of " + rules.size() + " passed in " + ms(t0) + " ms; direct buffers "
                + d0 + " -> " + directCount();
        System.err.println("rs313: " + s);
        summary.add(s);
    }

    /** @return null if the rule passed (or the TCK skipped it), else what it threw */
    private static Throwable runRuleQuietly(final PublisherVerification<String> v, final String rule) {
        try {
            Assertions.assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
                v.setUp();
                try {
                    PublisherVerification.class.getMethod(rule).invoke(v);
                } catch (InvocationTargetException ex) {
                    if (ex.getCause() instanceof org.testng.SkipException) {
                        return;
                    }
                    throw ex.getCause();
                }
            });
            return null;
        } catch (Throwable t) {
            return t;
        }
    }

    private void runRule(final String label, final PublisherVerification<String> v, final String rule, final int backlog) {
        List<ByteBuffer> dead = backlog(backlog);
        dead.clear(); // garbage from here on; promoted by backlog()'s GC, so only the rule's full GC finds it
        long d0 = directCount();
        long cpu0 = referenceHandlerCpuNs();
        long t0 = System.nanoTime();
        Throwable failure = runRuleQuietly(v, rule);
        String s = label + ": " + (failure == null ? "PASSED" : "FAILED (" + failure + ")") + " in " + ms(t0) + " ms; direct buffers " + d0
                + " -> " + directCount() + "; Reference Handler CPU meanwhile " + (referenceHandlerCpuNs() - cpu0) / 1_000_000 + " ms";
        System.err.println("rs313: " + s);
        summary.add(s);
    }

    /** The rule's scenario with measurements: is the subscriber's weak reference cleared by the GC, and when enqueued? */
    private void measure(final String label, final PublisherVerification<String> v, final TestEnvironment env, final int backlog)
            throws Throwable {
        List<ByteBuffer> dead = backlog(backlog);
        ReferenceQueue<Object> queue = new ReferenceQueue<>();
        Marker[] holder = new Marker[1];
        // on a timeout thread, like the TCK's rules (TransportTck runs each with assertTimeoutPreemptively)
        Assertions.assertTimeoutPreemptively(Duration.ofSeconds(60), () -> {
            v.setUp();
            holder[0] = subscribeOneAndCancel(env, v.createPublisher(3), queue);
        });
        Marker ref = holder[0];
        Thread.sleep(GC_TIMEOUT_MS);
        dead.clear();
        long direct0 = directCount();
        long cpu0 = referenceHandlerCpuNs();
        long t0 = System.nanoTime();
        System.gc();
        long gcMs = ms(t0);
        boolean cleared = ref.refersTo(null);
        long direct1 = directCount();
        Reference<?> got = queue.remove(100);
        boolean within100 = got == ref;
        String handlerAt100 = referenceHandlerStack();
        long cpuAt100 = referenceHandlerCpuNs() - cpu0;
        long directAt100 = directCount();
        StringBuilder timeline = new StringBuilder();
        while (got != ref && System.nanoTime() - t0 < TimeUnit.SECONDS.toNanos(15)) {
            got = queue.remove(250);
            timeline.append(' ').append(ms(t0)).append("ms:").append(directCount());
        }
        long enqueuedMs = got == ref ? ms(t0) : -1;
        String dump = "";
        if (!cleared) {
            stronglyReachable.add(label);
            dump = "; heap dump " + heapDump(label);
        }
        String s = label + ": GC " + gcMs + " ms, weak ref cleared by it: " + cleared + ", enqueued within the rule's 100 ms: " + within100
                + ", enqueued after " + enqueuedMs + " ms; direct buffers " + direct0 + " before the GC, " + direct1 + " after it, "
                + directAt100 + " at 100 ms, " + directCount() + " at the end; Reference Handler CPU in the first 100 ms "
                + cpuAt100 / 1_000_000 + " ms, in all " + (referenceHandlerCpuNs() - cpu0) / 1_000_000 + " ms; its stack at 100 ms: "
                + handlerAt100 + "; direct buffers while waiting:" + timeline + dump;
        System.err.println("rs313: " + s);
        summary.add(s);
        Reference.reachabilityFence(ref);
    }

    /** Exactly the RS TCK's 3.13 lambda: its frame (and the subscriber with it) is gone when this returns. */
    private static Marker subscribeOneAndCancel(final TestEnvironment env, final Publisher<String> pub, final ReferenceQueue<Object> queue)
            throws InterruptedException {
        TestEnvironment.ManualSubscriber<String> sub = env.newManualSubscriber(pub);
        Marker ref = new Marker(sub, queue);
        sub.request(1);
        sub.nextElement();
        sub.cancel();
        return ref;
    }

    /** @return {@code n} live 256-byte direct buffers, moved to the old generation by a full GC */
    private static List<ByteBuffer> backlog(final int n) {
        List<ByteBuffer> buffers = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            buffers.add(ByteBuffer.allocateDirect(256));
        }
        if (n > 0) {
            System.gc();
        }
        return buffers;
    }

    private static String heapDump(final String label) {
        String dir = System.getenv("LAB_OUT");
        Path file = Path.of(dir != null && !dir.isBlank() ? dir : System.getProperty("java.io.tmpdir"),
                "rs313-" + DUMPS.incrementAndGet() + "-" + label.charAt(0) + ".hprof");
        try {
            ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class).dumpHeap(file.toString(), true);
            return file.toString();
        } catch (Exception e) {
            return "failed: " + e;
        }
    }

    private static long directCount() {
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if ("direct".equals(pool.getName())) {
                return pool.getCount();
            }
        }
        return -1;
    }

    private static Thread referenceHandler() {
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if ("Reference Handler".equals(t.getName())) {
                return t;
            }
        }
        return null;
    }

    private static long referenceHandlerCpuNs() {
        Thread t = referenceHandler();
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        return t == null || !threads.isThreadCpuTimeSupported() ? -1 : threads.getThreadCpuTime(t.threadId());
    }

    private static String referenceHandlerStack() {
        Thread t = referenceHandler();
        if (t == null) {
            return "(no Reference Handler thread)";
        }
        StackTraceElement[] stack = t.getStackTrace();
        StringBuilder sb = new StringBuilder(t.getState().toString());
        for (int i = 0; i < Math.min(6, stack.length); i++) {
            sb.append(" < ").append(stack[i]);
        }
        return sb.toString();
    }

    private static long ms(final long t0) {
        return (System.nanoTime() - t0) / 1_000_000;
    }
}
