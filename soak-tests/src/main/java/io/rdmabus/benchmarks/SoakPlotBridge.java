package io.rdmabus.benchmarks;

import java.io.File;
import java.io.IOException;
import java.util.Map;

import org.HdrHistogram.Histogram;

/**
 * Lets the soak report draw its latency-percentile PNG with the benchmarks module's {@link PercentilePlot} (package
 * private there) instead of a second copy. Drop this bridge once PercentilePlot.render is public.
 */
public final class SoakPlotBridge {
    private SoakPlotBridge() {
    }

    /**
     * @param title  chart title
     * @param series label to latency histogram in ns
     * @param file   PNG to write
     * @throws IOException if it cannot be written
     */
    public static void percentiles(final String title, final Map<String, Histogram> series, final File file) throws IOException {
        PercentilePlot.render(title, series, file);
    }
}
