package io.rdmabus.samples.cli;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;

import picocli.CommandLine;

/**
 * What an unknown command is answered with: {@code Did you mean: rdma-bus stats?} only for a close name (a prefix
 * either way, or one or two typos), else the list of commands. Picocli's own suggestions rank every command by
 * bigram similarity and so offered {@code sub} or {@code market-data} for unrelated words.
 */
final class CommandSuggestions implements CommandLine.IParameterExceptionHandler {
    private final CommandLine.IParameterExceptionHandler fallback;

    /** @param fallback picocli's handler, for every other parameter error (unknown options, bad values) */
    CommandSuggestions(final CommandLine.IParameterExceptionHandler fallback) {
        this.fallback = fallback;
    }

    @Override
    public int handleParseException(final CommandLine.ParameterException ex, final String[] args) throws Exception {
        final CommandLine cli = ex.getCommandLine();
        if (!(ex instanceof CommandLine.UnmatchedArgumentException unmatched) || cli.getSubcommands().isEmpty()
            || unmatched.getUnmatched().isEmpty() || unmatched.getUnmatched().getFirst().startsWith("-")) {
            return fallback.handleParseException(ex, args);
        }
        final String word = unmatched.getUnmatched().getFirst();
        final PrintWriter err = cli.getErr();
        final String qualified = cli.getCommandSpec().qualifiedName();
        final List<String> close = closeTo(word, cli.getSubcommands().keySet());
        err.println("Unknown command: '" + word + "'");
        if (close.isEmpty()) {
            err.println("Commands: " + String.join(", ", cli.getSubcommands().keySet()) + " (" + qualified + " --help)");
        } else {
            err.println("Did you mean: " + String.join(" or ", close.stream().map(c -> qualified + " " + c).toList()) + "?");
        }
        return cli.getCommandSpec().exitCodeOnInvalidInput();
    }

    /**
     * @param word  what the user typed
     * @param names the command names
     * @return the names close to the word: one starts with the other (at least 2 letters typed, and a command of at least
     *         3 letters as a prefix) or at most 1 edit apart (2 for names of 6 letters or more)
     */
    static List<String> closeTo(final String word, final Collection<String> names) {
        final String w = word.toLowerCase(Locale.ROOT);
        final List<String> close = new ArrayList<>();
        for (final String name : names) {
            final boolean prefix = (w.length() >= 2 && name.startsWith(w)) || (name.length() >= 3 && w.startsWith(name));
            if (prefix || editDistance(w, name) <= (name.length() >= 6 ? 2 : 1)) {
                close.add(name);
            }
        }
        return close;
    }

    /** Levenshtein distance (insertions, deletions, substitutions). */
    static int editDistance(final String a, final String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                final int substitute = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(substitute, Math.min(previous[j], current[j - 1]) + 1);
            }
            final int[] swap = previous;
            previous = current;
            current = swap;
        }
        return previous[b.length()];
    }
}
