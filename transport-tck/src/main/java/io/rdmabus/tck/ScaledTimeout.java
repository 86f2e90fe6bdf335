package io.rdmabus.tck;

import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The time bound of a TCK case (or, on the class, of every case without its own), in seconds on a fixture whose
 * {@link TckFixture#timeFactor()} is 1; the case may run {@code seconds * timeFactor()} before it fails with a
 * {@link java.util.concurrent.TimeoutException}. Enforced by {@link ScaledTimeoutExtension} the way JUnit's own
 * {@code @Timeout} is by default (the test thread is interrupted when the bound passes).
 */
@Target({ElementType.TYPE, ElementType.METHOD})
@Retention(RetentionPolicy.RUNTIME)
@Inherited
public @interface ScaledTimeout {
    /** @return the bound in seconds at time factor 1 */
    long value();
}
