package io.rdmabus.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.junit.jupiter.api.Test;

import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

class AgentThreadsTest {
    @Test
    void aBlockingReactorCallOnAnAgentThreadFailsAtOnce() throws Exception {
        final CompletableFuture<Throwable> outcome = new CompletableFuture<>();
        final CompletableFuture<String> threadName = new CompletableFuture<>();
        final Agent agent = new Agent() {
            @Override
            public int doWork() {
                if (!outcome.isDone()) {
                    threadName.complete(Thread.currentThread().getName());
                    try {
                        Mono.delay(Duration.ofSeconds(30)).block(); // would stall the agent for 30 s on a plain thread
                        outcome.complete(null);
                    } catch (final RuntimeException refused) {
                        outcome.complete(refused);
                    }
                }
                return 0;
            }

            @Override
            public String roleName() {
                return "agent-threads-test";
            }
        };
        final AgentRunner runner = new AgentRunner(new SleepingMillisIdleStrategy(1), Throwable::printStackTrace, null, agent);
        final Thread thread = AgentThreads.start(runner);
        try {
            assertFalse(Schedulers.isInNonBlockingThread(), "the test's own thread is a plain one");
            final Throwable refused = outcome.get(10, TimeUnit.SECONDS);
            assertInstanceOf(IllegalStateException.class, refused, "block() on an agent thread must be refused, got " + refused);
            assertTrue(refused.getMessage().contains("blocking"), refused.getMessage());
            assertEquals("agent-threads-test", threadName.get(), "the thread is named after the agent's role");
            assertEquals("agent-threads-test", thread.getName());
        } finally {
            runner.close();
        }
    }
}
