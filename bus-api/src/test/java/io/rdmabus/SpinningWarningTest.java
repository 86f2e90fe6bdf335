package io.rdmabus;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmabus.config.BusConfig;
import io.rdmabus.config.ConfigValue;

import org.junit.jupiter.api.Test;

/** {@link BusBuilder#spinningWarning}: {@code busy-spin} with more spinning threads than CPUs is named, with its source. */
class SpinningWarningTest {
    private static ConfigValue idle(final String value) {
        return new ConfigValue(BusConfig.IDLE_STRATEGY, value, "env:RDMABUS_IDLE_STRATEGY", "", false);
    }

    @Test
    void busySpinBesideTheApplicationOnOneCpuIsWarnedOfWithKeyAndSource() {
        final String warning = BusBuilder.spinningWarning(idle("busy-spin"), ThreadingMode.SHARED, 1);
        assertTrue(warning != null && warning.contains("rdmabus.idle-strategy=busy-spin (from env:RDMABUS_IDLE_STRATEGY)")
            && warning.contains("1 CPU(s)") && warning.contains("backoff"), "warning: " + warning);
        final String dedicated = BusBuilder.spinningWarning(idle("busy-spin"), ThreadingMode.DEDICATED, 2);
        assertTrue(dedicated != null && dedicated.contains("at least 2 threads"), "DEDICATED on 2 CPUs: " + dedicated);
    }

    @Test
    void noWarningWhereEverySpinningThreadHasACpuOrNothingSpins() {
        assertNull(BusBuilder.spinningWarning(idle("busy-spin"), ThreadingMode.SHARED, 2));
        assertNull(BusBuilder.spinningWarning(idle("busy-spin"), ThreadingMode.DEDICATED, 3));
        assertNull(BusBuilder.spinningWarning(idle("busy-spin"), ThreadingMode.INVOKER, 1), "INVOKER: the application's thread drives");
        assertNull(BusBuilder.spinningWarning(idle("backoff"), ThreadingMode.DEDICATED, 1));
        assertNull(BusBuilder.spinningWarning(idle("yielding"), ThreadingMode.DEDICATED, 1), "yielding gives the CPU up");
    }
}
