package io.rdmabus.samples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;

import picocli.CommandLine;

import org.junit.jupiter.api.Test;

/** An unknown command gets a suggestion only when it is close to a command's name. */
class CommandSuggestionsTest {
    private static final List<String> NAMES = List.of("devices", "ping", "throughput", "pub", "sub", "stats", "market-data", "help");

    @Test
    void closeNamesAreSuggested() {
        assertEquals(List.of("devices"), CommandSuggestions.closeTo("devics", NAMES));
        assertEquals(List.of("stats"), CommandSuggestions.closeTo("stat", NAMES));
        assertEquals(List.of("sub"), CommandSuggestions.closeTo("subscribe", NAMES));
        assertEquals(List.of("throughput"), CommandSuggestions.closeTo("througput", NAMES));
        assertEquals(List.of("market-data"), CommandSuggestions.closeTo("market", NAMES));
        assertEquals(List.of("pub", "sub"), CommandSuggestions.closeTo("rub", NAMES));
    }

    @Test
    void unrelatedWordsGetNoSuggestion() {
        for (final String word : List.of("latency", "frobnicate", "x", "s", "run", "bench", "sup2", "status-report")) {
            assertEquals(List.of(), CommandSuggestions.closeTo(word, NAMES), word);
        }
    }

    @Test
    void theCliAnswersAnUnknownCommandWithTheCommandsOrACloseOne() {
        final StringWriter err = new StringWriter();
        final CommandLine cli = CliSupport.commandLine(new RdmaBusCli());
        cli.setErr(new PrintWriter(err, true));
        assertEquals(2, cli.execute("latency"));
        assertTrue(err.toString().contains("Unknown command: 'latency'"), err.toString());
        assertTrue(err.toString().contains("Commands: devices, ping, "), err.toString());
        assertTrue(!err.toString().contains("Did you mean"), err.toString());
        assertEquals(2, cli.execute("devics"));
        assertTrue(err.toString().contains("Did you mean: rdma-bus devices?"), err.toString());
    }
}
