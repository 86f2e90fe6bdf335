package io.rdmabus.samples.cli;


import io.rdmabus.BusConfigurationException;
import io.rdmabus.BusException;

import picocli.CommandLine;

/** How every command line of the samples behaves: bad flags or settings give a message and exit 2, failures a one-line error and exit 1. */
public final class CliSupport {
    /** Exit code for bad flags or values (picocli's usage code). */
    public static final int EXIT_USAGE = CommandLine.ExitCode.USAGE;
    /** Exit code when the command ran and failed. */
    public static final int EXIT_FAILED = 1;

    private CliSupport() {
    }

    /**
     * @param command a picocli command object
     * @return a command line that prints errors without stack traces (set {@code RDMABUS_DEBUG=1} to see them)
     */
    public static CommandLine commandLine(final Object command) {
        final CommandLine cli = new CommandLine(command);
        cli.setParameterExceptionHandler(new CommandSuggestions(cli.getParameterExceptionHandler()));
        cli.setExecutionExceptionHandler((ex, commandLine, parseResult) -> {
            if (ex instanceof IllegalArgumentException) {
                // a value that parsed but is out of range: the user's to fix, like a bad flag
                commandLine.getErr().println("error: " + ex.getMessage());
                commandLine.usage(commandLine.getErr());
                return EXIT_USAGE;
            }
            if (ex instanceof BusConfigurationException) {
                // unknown transport, bad transport property...: also the user's to fix
                commandLine.getErr().println("error: " + ex.getMessage());
                commandLine.getErr().println("(see: " + commandLine.getCommandSpec().qualifiedName() + " --help)");
                return EXIT_USAGE;
            }
            final String what = ex instanceof BusException ? "" : ex.getClass().getSimpleName() + ": ";
            commandLine.getErr().println("error: " + what + ex.getMessage());
            if (System.getenv("RDMABUS_DEBUG") != null) {
                ex.printStackTrace(commandLine.getErr());
            }
            return EXIT_FAILED;
        });
        return cli;
    }
}
