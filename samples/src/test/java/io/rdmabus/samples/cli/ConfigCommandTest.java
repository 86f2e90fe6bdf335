package io.rdmabus.samples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;

import picocli.CommandLine;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code rdma-bus config}: the effective values and their sources, secrets masked, errors as usage errors. */
class ConfigCommandTest {
    private final StringWriter out = new StringWriter();
    private final StringWriter err = new StringWriter();
    @TempDir
    Path dir;

    private int run(final String... args) {
        final CommandLine cli = CliSupport.commandLine(new RdmaBusCli());
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        return cli.execute(args);
    }

    /** @param columns the cells of one row of the table, in order */
    private void assertRow(final String... columns) {
        final StringBuilder regex = new StringBuilder();
        for (final String column : columns) {
            regex.append(regex.isEmpty() ? "(?m)^" : " +").append(Pattern.quote(column));
        }
        assertTrue(Pattern.compile(regex.append(" *$").toString()).matcher(out.toString()).find(), String.join(" | ", columns) + " in:\n" + out);
    }

    @Test
    void printsEveryValueWithItsSourceAndMasksSecrets() throws IOException {
        final Path file = dir.resolve("bus.properties");
        Files.write(file, List.of("rdmabus.idle-strategy=sleeping", "tcp.bind=127.0.0.1:7701", "tcp.io.threads=1",
            "rdma.secret=0123456789abcdef-very-secret"));
        assertEquals(0, run("config", "-t", "tcp", "-p", "tcp.io.threads=2", "--file", file.toString()), out + " / " + err);
        assertTrue(out.toString().startsWith("transport tcp: transport factory name, or auto for the best available one\n"
            + "precedence: command line > sysprop > env > file > code > default"), out.toString());
        assertRow("rdmabus.transport", "tcp", "command line");
        assertRow("rdmabus.idle-strategy", "sleeping", "file:" + file);
        assertRow("tcp.bind", "127.0.0.1:7701", "file:" + file);
        assertRow("tcp.io.threads", "2", "command line");
        assertRow("tcp.linger.ms", "5000", "default");
        assertTrue(out.toString().contains("set for another transport, not used by tcp:"), out.toString());
        assertRow("rdma.secret", "****", "file:" + file, "for transport rdma");
        assertFalse(out.toString().contains("very-secret"), "the secret is never printed: " + out);
    }

    @Test
    void aeronKeysAreShownUnderTheirPrefix() {
        assertEquals(0, run("config", "-t", "aeron-udp", "-p", "endpoint=127.0.0.1:40999", "--describe"), out + " / " + err);
        assertRow("aeron.endpoint", "127.0.0.1:40999", "command line", "UDP unicast: this node's publication control endpoint host:port");
        assertRow("aeron.mtu", "1408", "default", "Aeron MTU, a multiple of 32 (1408 fits a 1500-byte Ethernet MTU)");
    }

    @Test
    void anUnknownKeyOrABadValueIsAUsageErrorNamingItsSource() throws IOException {
        final Path file = dir.resolve("typo.properties");
        Files.write(file, List.of("tcp.io.thread=2"));
        assertEquals(2, run("config", "-t", "tcp", "--file", file.toString()));
        assertTrue(err.toString().contains("Unknown tcp key 'tcp.io.thread' (from file:" + file + ") (did you mean tcp.io.threads?)"),
            err.toString());
        assertEquals(2, run("config", "-t", "tcp", "--idle", "lazy"));
        assertTrue(err.toString().contains("Bad value 'lazy' for rdmabus.idle-strategy (from command line): expected one of"), err.toString());
        assertFalse(err.toString().contains("\tat "), "no stack trace: " + err);
    }
}
