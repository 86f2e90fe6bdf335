package io.rdmabus.samples.cli;

import io.rdmabus.samples.marketdata.MarketDataSample;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code rdma-bus} command line tool: inspect devices, measure latency and throughput, publish and subscribe from
 * the shell, watch bus counters, run the market-data sample. {@code rdma-bus <command> --help} for details.
 */
@Command(name = "rdma-bus", mixinStandardHelpOptions = true, version = "rdma-bus 0.1.0-SNAPSHOT",
    description = "Broker-less reactive pub/sub over RDMA, with Aeron and TCP fallbacks.",
    subcommands = {DevicesCommand.class, PingCommand.class, ThroughputCommand.class, PubCommand.class, SubCommand.class,
        StatsCommand.class, ErrorsCommand.class, ConfigCommand.class, MarketDataSample.class, CommandLine.HelpCommand.class})
public final class RdmaBusCli implements Runnable {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** For picocli. */
    public RdmaBusCli() {
    }

    /** @param args command line */
    public static void main(final String[] args) {
        System.exit(execute(args));
    }

    /**
     * Runs a command in this process (what {@link #main} and the tests do).
     *
     * @param args command line
     * @return the exit code: 0 ok, 1 failed, 2 bad usage
     */
    public static int execute(final String... args) {
        return CliSupport.commandLine(new RdmaBusCli()).execute(args);
    }

    @Override
    public void run() {
        // no subcommand: that is a usage error
        throw new CommandLine.ParameterException(spec.commandLine(),
            "missing command: one of devices, ping, throughput, pub, sub, stats, errors, config, market-data");
    }
}
