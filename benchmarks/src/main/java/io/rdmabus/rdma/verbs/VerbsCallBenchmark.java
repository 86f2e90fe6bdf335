package io.rdmabus.rdma.verbs;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import io.rdmabus.rdma.verbs.ffm.ibv_context_ops;

import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * What one data-path verb call costs the JVM, without a device: the provider's {@code poll_cq} and {@code post_send}
 * stood in for by libc functions of the same shape that return at once ({@code wctomb} for the poll's
 * {@code (ptr, int, ptr)}, {@code memcmp} on two buffers that differ at the first byte for the post's
 * {@code (ptr, ptr, ptr)}), called as the bus calls them ({@link InlineVerbs}: linked once to the function, pointers
 * as addresses, the poll critical) and as the generated binding calls them ({@code ibv_context_ops.*.invoke}: the
 * function pointer and each pointer argument as segments, the buffers in a shared arena as the bus's requests are).
 * The difference is the per-call overhead that {@code InlineVerbs} removes. It is in the verbs package to reach
 * {@code InlineVerbs}, which is package-private there. {@code -jvmArgsAppend -XX:TieredStopAtLevel=1} runs it as the
 * rxe lab's guests do (C1 only).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
public class VerbsCallBenchmark {
    private static final MemorySegment WCTOMB = Linker.nativeLinker().defaultLookup().findOrThrow("wctomb");
    private static final MemorySegment MEMCMP = Linker.nativeLinker().defaultLookup().findOrThrow("memcmp");

    private Arena arena;
    private MemorySegment first;
    private MemorySegment second;
    private MemorySegment third;
    private InlineVerbs verbs;

    /** Allocates the buffers in a shared arena, as {@code WorkCompletions} and the requests are. */
    @Setup(Level.Trial)
    public void setUp() {
        arena = Arena.ofShared();
        first = arena.allocateFrom("A bus frame");
        second = arena.allocateFrom("B bus frame");
        third = arena.allocate(64);
        verbs = new InlineVerbs(WCTOMB, MEMCMP, MEMCMP);
    }

    /** Frees the buffers. */
    @TearDown(Level.Trial)
    public void tearDown() {
        arena.close();
    }

    /** @return what the poll returned */
    @Benchmark
    public int pollGenerated() {
        return ibv_context_ops.poll_cq.invoke(WCTOMB, first, 'Q', second);
    }

    /** @return what the poll returned */
    @Benchmark
    public int pollInlineVerbs() {
        return verbs.pollCq(first.address(), 'Q', second.address());
    }

    /** @return what the post returned */
    @Benchmark
    public int postGenerated() {
        return ibv_context_ops.post_send.invoke(MEMCMP, first, second, third);
    }

    /** @return what the post returned */
    @Benchmark
    public int postInlineVerbs() {
        return verbs.postSend(first.address(), second.address(), third.address());
    }
}
