package io.rdmabus.tck;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.InvocationInterceptor;
import org.junit.jupiter.api.extension.ReflectiveInvocationContext;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * Enforces {@link ScaledTimeout} on the {@link TransportTck} cases: the bound times the fixture's
 * {@link TckFixture#timeFactor()}. Like JUnit's {@code @Timeout} in its default mode, the case runs on its own thread,
 * which is interrupted when the bound passes; the case then fails with a {@link TimeoutException} that says the bound
 * and carries the stack the case was at when it passed (where it waited), and whatever the case threw after the
 * interrupt as suppressed.
 */
public final class ScaledTimeoutExtension implements InvocationInterceptor {
    /** A test instance whose bounds are scaled ({@link TransportTck}: by its fixture's time factor). */
    public interface TimeScaled {
        /** @return the factor on the {@link ScaledTimeout} bounds, at least 1 */
        double timeFactor();
    }

    private static final ScheduledExecutorService TIMER = Executors.newSingleThreadScheduledExecutor(r -> {
        final Thread t = new Thread(r, "tck-scaled-timeout");
        t.setDaemon(true);
        return t;
    });

    @Override
    public void interceptTestMethod(final Invocation<Void> invocation, final ReflectiveInvocationContext<Method> invocationContext,
                                    final ExtensionContext extensionContext) throws Throwable {
        bounded(invocation, invocationContext.getExecutable(), extensionContext);
    }

    @Override
    public <T> T interceptTestFactoryMethod(final Invocation<T> invocation, final ReflectiveInvocationContext<Method> invocationContext,
                                            final ExtensionContext extensionContext) throws Throwable {
        return bounded(invocation, invocationContext.getExecutable(), extensionContext);
    }

    private static <T> T bounded(final Invocation<T> invocation, final Method method, final ExtensionContext context) throws Throwable {
        final Optional<ScaledTimeout> own = AnnotationSupport.findAnnotation(method, ScaledTimeout.class);
        final Optional<ScaledTimeout> bound = own.isPresent() ? own
            : AnnotationSupport.findAnnotation(context.getRequiredTestClass(), ScaledTimeout.class);
        if (bound.isEmpty()) {
            return invocation.proceed();
        }
        final double factor = context.getTestInstance().filter(TimeScaled.class::isInstance).map(TimeScaled.class::cast)
            .map(TimeScaled::timeFactor).orElse(1.0);
        final Duration limit = scale(Duration.ofSeconds(bound.get().value()), factor);
        final Thread caseThread = Thread.currentThread();
        final AtomicReference<StackTraceElement[]> stackAtTimeout = new AtomicReference<>();
        final ScheduledFuture<?> alarm = TIMER.schedule(() -> {
            stackAtTimeout.set(caseThread.getStackTrace());
            caseThread.interrupt();
        }, limit.toNanos(), TimeUnit.NANOSECONDS);
        Throwable failure = null;
        T result = null;
        try {
            result = invocation.proceed();
        } catch (final Throwable t) {
            failure = t;
        } finally {
            alarm.cancel(false);
        }
        if (stackAtTimeout.get() != null) {
            Thread.interrupted(); // the interrupt was ours: do not leak it into the next case
            final TimeoutException timeout = new TimeoutException(method.getName() + "() timed out after " + describe(limit)
                + " (" + bound.get().value() + " s x the fixture's time factor " + factor + "); the stack is where the case was then");
            timeout.setStackTrace(stackAtTimeout.get());
            if (failure != null) {
                timeout.addSuppressed(failure);
            }
            throw timeout;
        }
        if (failure != null) {
            throw failure;
        }
        return result;
    }

    /** @return {@code d * factor} */
    static Duration scale(final Duration d, final double factor) {
        return Duration.ofNanos(Math.round(d.toNanos() * factor));
    }

    private static String describe(final Duration d) {
        return d.toMillis() % 1000 == 0 ? d.toSeconds() + " seconds" : d.toMillis() + " ms";
    }
}
