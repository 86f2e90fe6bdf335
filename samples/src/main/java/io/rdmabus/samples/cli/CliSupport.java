package io.rdmabus.samples.cli;

import java.util.List;

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

    /** @return true if {@code word} is a prefix of {@code name} or within two edits of it (a typo, not another word) */
    static boolean isCloseTo(final String word, final String name) {
        if (word.length() >= 2 && name.startsWith(word)) {
            return true;
        }
        final int[] previous = new int[name.length() + 1];
        final int[] current = new int[name.length() + 1];
        for (int j = 0; j <= name.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= word.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= name.length(); j++) {
                final int substitution = previous[j - 1] + (word.charAt(i - 1) == name.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitution, Math.min(previous[j], current[j - 1]) + 1);
            }
            System.arraycopy(current, 0, previous, 0, current.length);
        }
        return previous[name.length()] <= 2;
    }

    /**
     * @param command a picocli command object
     * @return a command line that prints errors without stack traces (set {@code RDMABUS_DEBUG=1} to see them)
     */
    public static CommandLine commandLine(final Object command) {
        final CommandLine cli = new CommandLine(command);
        final CommandLine.IParameterExceptionHandler usage = cli.getParameterExceptionHandler();
        cli.setParameterExceptionHandler((ex, args) -> {
            final CommandLine where = ex.getCommandLine();
            if (ex instanceof CommandLine.UnmatchedArgumentException unmatched && !where.getSubcommands().isEmpty()
                && !unmatched.getUnmatched().isEmpty() && !unmatched.getUnmatched().get(0).startsWith("-")) {
                final String word = unmatched.getUnmatched().get(0);
                final List<String> close = where.getSubcommands().keySet().stream().filter(name -> isCloseTo(word, name)).toList();
                where.getErr().println("error: unknown command '" + word + "'" + (close.isEmpty() ? "" : "; did you mean " + String.join(" or ", close) + "?"));
                where.getErr().println("commands: " + String.join(", ", where.getSubcommands().keySet()) + " (" + where.getCommandName() + " --help)");
                return EXIT_USAGE;
            }
            return usage.handleParseException(ex, args);
        });
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
