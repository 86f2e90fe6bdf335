package io.rdmabus.samples.support;

import java.io.File;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

import io.aeron.CommonContext;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.rdmabus.IdleStrategies;

import org.agrona.concurrent.IdleStrategy;

/**
 * One embedded Aeron media driver that several buses (and raw Aeron clients) in this JVM share through its directory:
 * {@code aeron-ipc} buses only reach each other through one driver, and {@code aeron-udp} buses in one JVM are better off
 * with one ({@link LocalBuses}). Settings match what the bus's Aeron transport uses
 * for its own embedded driver (shared threading, backoff idle strategy, 1 MiB terms, 1408-byte MTU), so raw Aeron and
 * the bus can be compared on equal terms.
 */
public final class SharedMediaDriver implements AutoCloseable {
    /** Term length used by the driver and expected by clients (same as the bus transport's default). */
    public static final int TERM_LENGTH_BYTES = 1024 * 1024;
    /** MTU used for UDP and IPC (same as the bus transport's default). */
    public static final int MTU_BYTES = 1408;

    private final MediaDriver driver;
    private final String directory;

    private SharedMediaDriver(final MediaDriver driver, final String directory) {
        this.driver = driver;
        this.directory = directory;
    }

    /**
     * Launches a driver in a fresh directory, removed again on {@link #close()}.
     *
     * @param label goes into the directory and thread names
     * @return the running driver
     */
    public static SharedMediaDriver launch(final String label) {
        // the machine may have 2 cores: back off to parking when idle, never busy-spin
        return launch(label, IdleStrategies.supplier("backoff").get());
    }

    /**
     * Launches a driver in a fresh directory, removed again on {@link #close()}.
     *
     * @param label goes into the directory and thread names
     * @param idle  the driver thread's idle strategy
     * @return the running driver
     */
    public static SharedMediaDriver launch(final String label, final IdleStrategy idle) {
        final String dir = CommonContext.getAeronDirectoryName() + "-rdma-bus-shared-" + label + "-" + UUID.randomUUID();
        final MediaDriver.Context ctx = new MediaDriver.Context()
            .aeronDirectoryName(dir)
            .dirDeleteOnStart(true)
            .dirDeleteOnShutdown(true)
            .warnIfDirectoryExists(false)
            .asyncExecutorEnabled(false)
            .termBufferSparseFile(true)
            .publicationTermBufferLength(TERM_LENGTH_BYTES)
            .ipcTermBufferLength(TERM_LENGTH_BYTES)
            .mtuLength(MTU_BYTES)
            .ipcMtuLength(MTU_BYTES)
            .flowControlReceiverTimeoutNs(TimeUnit.SECONDS.toNanos(2))
            .threadingMode(ThreadingMode.SHARED)
            .sharedIdleStrategy(idle)
            .sharedThreadFactory(r -> {
                final Thread t = new Thread(r, "rdma-bus-samples-driver-" + label);
                t.setDaemon(true);
                return t;
            });
        return new SharedMediaDriver(MediaDriver.launchEmbedded(ctx), dir);
    }

    /** @return the driver directory: pass it as transport property {@code aeron.dir} or to {@code Aeron.Context} */
    public String directory() {
        return directory;
    }

    @Override
    public void close() {
        driver.close();
        final File dir = new File(directory);
        if (dir.exists()) {
            org.agrona.IoUtil.delete(dir, true);
        }
    }
}
