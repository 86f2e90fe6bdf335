package io.rdmabus.samples.cli;

import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Callable;

import io.rdmabus.BusBuilder;
import io.rdmabus.config.BusConfig;
import io.rdmabus.config.ConfigValue;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code rdma-bus config}: the effective configuration of a bus with these flags, the system properties, the environment
 * and the configuration file, and where each value came from. Secrets are masked.
 */
@Command(name = "config", mixinStandardHelpOptions = true, sortOptions = false,
    description = {"Print the effective configuration (key, value, source) of a bus built here with these flags.",
        "Precedence: command line > system property > environment > file > code > default."})
final class ConfigCommand implements Callable<Integer> {
    @Mixin
    TransportOptions transport;
    @Option(names = {"-f", "--file"}, paramLabel = "PATH", description = "a properties file to read, below the one "
        + BusConfig.CONFIG_FILE + " or " + BusConfig.CONFIG_FILE_ENV + " names")
    Path file;
    @Option(names = "--describe", description = "add a column saying what each key does")
    boolean describe;
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    ConfigCommand() {
    }

    @Override
    public Integer call() {
        final BusBuilder builder = transport.builder();
        if (file != null) {
            builder.configFile(file);
        }
        final BusConfig config = builder.effectiveConfig();
        final PrintWriter out = spec.commandLine().getOut();
        out.println("transport " + config.transportName() + ": " + config.value(BusConfig.TRANSPORT).description());
        out.println("precedence: command line > sysprop > env > file > code > default");
        print(out, config.values(), describe);
        if (!config.unused().isEmpty()) {
            out.println();
            out.println("set for another transport, not used by " + config.transportName() + ":");
            print(out, config.unused(), true);
        }
        if (!config.ignored().isEmpty()) {
            out.println();
            out.println("not configuration keys (ignored): " + String.join(", ", config.ignored()));
        }
        out.flush();
        return 0;
    }

    private static void print(final PrintWriter out, final List<ConfigValue> values, final boolean withDescription) {
        int keyWidth = "KEY".length();
        int valueWidth = "VALUE".length();
        int sourceWidth = "SOURCE".length();
        for (final ConfigValue v : values) {
            keyWidth = Math.max(keyWidth, v.key().length());
            valueWidth = Math.max(valueWidth, Math.min(40, v.shown().length()));
            sourceWidth = Math.max(sourceWidth, v.source().length());
        }
        final String format = "%-" + keyWidth + "s  %-" + valueWidth + "s  " + (withDescription ? "%-" + sourceWidth + "s  %s" : "%s%s") + "%n";
        out.printf(format, "KEY", "VALUE", "SOURCE", withDescription ? "WHAT" : "");
        for (final ConfigValue v : values) {
            out.printf(format, v.key(), v.shown(), v.source(), withDescription ? v.description() : "");
        }
    }
}
