package io.rdmabus.samples.cli;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.rdmabus.Bus;
import io.rdmabus.BusBuilder;
import io.rdmabus.ThreadingMode;
import io.rdmabus.config.BusConfig;

import picocli.CommandLine.Option;

/**
 * Transport selection shared by the commands. A flag given here wins over the same setting from system properties, the
 * environment or a configuration file (see {@code rdma-bus config}); a flag not given leaves them in effect.
 */
public final class TransportOptions {
    @Option(names = {"-t", "--transport"},
        description = "transport: auto (RDMA if a device exists, else the best fallback), aeron-udp, aeron-ipc, tcp (default: auto, or "
            + "rdmabus.transport from outside code)")
    String transport;

    @Option(names = {"-p", "--property"}, paramLabel = "KEY=VALUE",
        description = "transport property for a bus talking to other processes, e.g. -p endpoint=127.0.0.1:40500 (aeron-udp) or "
            + "-p tcp.bind=127.0.0.1:7701 (tcp); repeatable")
    Map<String, String> properties = new LinkedHashMap<>();

    @Option(names = "--seed", paramLabel = "TRANSPORT=HOST:PORT",
        description = "peer to contact, e.g. --seed tcp=127.0.0.1:7701 or --seed aeron-udp=127.0.0.1:40456; repeatable")
    List<String> seeds = new ArrayList<>();

    @Option(names = "--idle", description = "idle strategy: busy-spin, yielding, backoff, sleeping (default: backoff, or "
        + "rdmabus.idle-strategy from outside code)")
    String idleStrategy;

    @Option(names = "--threading", description = "threading mode: shared (one agent thread per bus for delivery and the "
        + "transport's receive duty where it can be hosted), dedicated (a thread each) or, for ping only, invoker (the pinging "
        + "thread runs its bus's duty cycles with Bus.doWork()) (default: shared, for ping invoker; or rdmabus.threading-mode from "
        + "outside code)")
    String threadingMode;

    /** True for a command that drives its buses with {@code Bus.doWork()} (it takes {@code --threading invoker}). */
    private boolean drivesInvoker;
    /** The mode when neither the flag nor outside code gives one. */
    private ThreadingMode defaultMode = ThreadingMode.SHARED;

    /** For picocli. */
    public TransportOptions() {
    }

    /** @return the transport name as given, or {@code auto} */
    public String transport() {
        return transport == null ? "auto" : transport;
    }

    /** @return the idle strategy name as given, or {@code backoff} */
    public String idleStrategy() {
        return idleStrategy == null ? "backoff" : idleStrategy;
    }

    /**
     * Lets the command take {@code invoker} (from the flag or from outside code): it runs its buses' duty cycles itself.
     *
     * @return this
     */
    TransportOptions drivesInvoker() {
        this.drivesInvoker = true;
        return this;
    }

    /**
     * @param mode the mode when neither the flag nor outside code gives one (set in code: outside code wins over it)
     * @return this
     */
    TransportOptions defaultThreadingMode(final ThreadingMode mode) {
        this.defaultMode = mode;
        return this;
    }

    /**
     * @return the threading mode as given, or the command's default ({@code shared} unless it says otherwise)
     * @throws IllegalArgumentException for a mode the command cannot drive ({@code invoker} needs a loop that calls
     *     {@code Bus.doWork()}: only commands that run one take it)
     */
    public ThreadingMode threadingMode() {
        if (threadingMode == null) {
            return defaultMode;
        }
        return switch (threadingMode.toLowerCase(Locale.ROOT)) {
            case "shared" -> ThreadingMode.SHARED;
            case "dedicated" -> ThreadingMode.DEDICATED;
            case "invoker" -> {
                if (!drivesInvoker) {
                    throw new IllegalArgumentException("--threading invoker needs a loop that calls Bus.doWork(), which only ping runs; "
                        + "use shared or dedicated");
                }
                yield ThreadingMode.INVOKER;
            }
            default -> throw new IllegalArgumentException("--threading must be shared, dedicated"
                + (drivesInvoker ? " or invoker" : "") + ", not '" + threadingMode + "'");
        };
    }

    /** @return true if the user gave properties or seeds, i.e. wants to talk to other processes */
    public boolean crossProcess() {
        return !properties.isEmpty() || !seeds.isEmpty();
    }

    /**
     * A builder with the configuration from outside code ({@link BusBuilder#fromEnvironment()}) and, above it, the flags
     * given here.
     *
     * @return a builder to add a name or a file to
     */
    public BusBuilder builder() {
        final BusBuilder builder = Bus.builder();
        if (defaultMode != ThreadingMode.SHARED) {
            builder.threadingMode(defaultMode); // the command's own default, in code: outside code still wins
        }
        builder.fromEnvironment();
        if (transport != null) {
            builder.commandLine(BusConfig.TRANSPORT, transport);
        }
        if (idleStrategy != null) {
            builder.commandLine(BusConfig.IDLE_STRATEGY, idleStrategy);
        }
        if (threadingMode != null) {
            builder.commandLine(BusConfig.THREADING_MODE, threadingMode().name().toLowerCase(Locale.ROOT));
        }
        properties.forEach(builder::commandLine);
        if (!seeds.isEmpty()) {
            builder.commandLine(BusConfig.SEEDS, String.join(",", seeds));
        }
        return builder;
    }

    /** @return the threading mode a bus built here gets: the flag's, else outside code's, else the command's default */
    public ThreadingMode effectiveThreadingMode() {
        return builder().effectiveConfig().threadingMode();
    }

    /**
     * A bus for talking to other processes: the transport with the given properties and seeds.
     *
     * @param busName the bus's name
     * @return a started bus
     * @throws IllegalArgumentException if the mode in effect is {@code invoker} and this command does not drive it
     */
    public Bus buildBus(final String busName) {
        final BusBuilder builder = builder().name(busName);
        checkDriven(builder.effectiveConfig());
        return builder.build();
    }

    /**
     * What a group of buses in this process ({@code LocalBuses}: ping's {@code --role both}, throughput) takes from the
     * flags, outside code and the command's defaults, as {@link #buildBus} would: the transport, the idle strategy and
     * the threading mode. The group gives each bus its own endpoint and seeds.
     *
     * @return the settings in effect
     * @throws IllegalArgumentException if the mode in effect is {@code invoker} and this command does not drive it
     */
    public InProcess inProcess() {
        final BusConfig effective = builder().effectiveConfig();
        checkDriven(effective);
        return new InProcess(effective.transportName(), effective.idleStrategy(), effective.threadingMode());
    }

    /**
     * The settings of a group of buses in this process.
     *
     * @param transport     the transport's name ({@code auto} resolved)
     * @param idleStrategy  the idle strategy's name
     * @param threadingMode the threading mode
     */
    public record InProcess(String transport, String idleStrategy, ThreadingMode threadingMode) {
    }

    private void checkDriven(final BusConfig effective) {
        if (!drivesInvoker && effective.threadingMode() == ThreadingMode.INVOKER) {
            // nobody would call Bus.doWork(): the bus would never deliver or send
            throw new IllegalArgumentException(BusConfig.THREADING_MODE + "=invoker (from " + effective.value(BusConfig.THREADING_MODE).source()
                + ") needs a loop that calls Bus.doWork(), which only ping runs; use shared or dedicated");
        }
    }
}
