package io.rdmabus.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectMethod;

import java.util.List;
import java.util.concurrent.TimeoutException;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.platform.launcher.LauncherDiscoveryRequest;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;
import org.junit.platform.launcher.listeners.SummaryGeneratingListener;
import org.junit.platform.launcher.listeners.TestExecutionSummary;

/** {@link ScaledTimeoutExtension}: the bound is the annotation's times the instance's factor, and a case over it fails. */
class ScaledTimeoutExtensionTest {

    /** Run only through {@link #run}: factor 1, class bound 1 s, one method bound 2 s. */
    @ExtendWith(ScaledTimeoutExtension.class)
    @ScaledTimeout(1)
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    static class Unscaled {
        @Test
        void classBoundPasses() throws InterruptedException {
            Thread.sleep(300);
        }

        @Test
        void classBoundFails() throws InterruptedException {
            Thread.sleep(1_600);
        }

        @Test
        @ScaledTimeout(2)
        void ownBoundPasses() throws InterruptedException {
            Thread.sleep(1_600);
        }
    }

    /** Run only through {@link #run}: factor 3, bound 1 s, so 3 s. */
    @ExtendWith(ScaledTimeoutExtension.class)
    @ScaledTimeout(1)
    @TestInstance(TestInstance.Lifecycle.PER_CLASS)
    static class Tripled implements ScaledTimeoutExtension.TimeScaled {
        @Override
        public double timeFactor() {
            return 3;
        }

        @Test
        void scaledBoundPasses() throws InterruptedException {
            Thread.sleep(2_000);
        }

        @Test
        void scaledBoundFails() throws InterruptedException {
            Thread.sleep(3_600);
        }
    }

    private static TestExecutionSummary run(final Class<?> type, final String method) {
        final LauncherDiscoveryRequest request = LauncherDiscoveryRequestBuilder.request().selectors(selectMethod(type, method)).build();
        final SummaryGeneratingListener listener = new SummaryGeneratingListener();
        LauncherFactory.create().execute(request, listener);
        return listener.getSummary();
    }

    private static void assertPassed(final Class<?> type, final String method) {
        final TestExecutionSummary summary = run(type, method);
        assertEquals(1, summary.getTestsSucceededCount(), () -> method + ": " + summary.getFailures().stream()
            .map(f -> f.getException().toString()).toList());
    }

    private static void assertTimedOut(final Class<?> type, final String method, final String after) {
        final TestExecutionSummary summary = run(type, method);
        assertEquals(1, summary.getTestsFailedCount(), method + " must fail on its bound");
        final List<Throwable> errors = summary.getFailures().stream().map(TestExecutionSummary.Failure::getException).toList();
        final TimeoutException timeout = assertInstanceOf(TimeoutException.class, errors.get(0));
        assertTrue(timeout.getMessage().contains("timed out after " + after), timeout.getMessage());
        assertTrue(timeout.getStackTrace().length > 0 && timeout.getStackTrace()[0].toString().contains("sleep"),
            "the stack is where the case waited: " + List.of(timeout.getStackTrace()));
    }

    @Test
    void factorOneKeepsTheBounds() {
        assertPassed(Unscaled.class, "classBoundPasses");
        assertTimedOut(Unscaled.class, "classBoundFails", "1 seconds");
        assertPassed(Unscaled.class, "ownBoundPasses");
    }

    @Test
    void theFactorScalesTheBound() {
        assertPassed(Tripled.class, "scaledBoundPasses");
        assertTimedOut(Tripled.class, "scaledBoundFails", "3 seconds");
    }
}
