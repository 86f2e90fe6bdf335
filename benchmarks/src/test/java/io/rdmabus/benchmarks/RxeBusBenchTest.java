package io.rdmabus.benchmarks;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import io.rdmabus.ThreadingMode;
import io.rdmabus.samples.cli.CliSupport;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import picocli.CommandLine;

/**
 * The host-side logic of {@link RxeBusBench}: reading {@code rdma resource show qp} and deciding which QP type carried
 * the best-effort phase, and option checking. The measurements themselves need rxe and run in the lab
 * ({@code lab/bench/rxe-vs-perftest.sh}).
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RxeBusBenchTest {
    private static final Set<String> OURS = Set.of("101", "102");

    private static String listing(final long rcPsn, final long udPsn) {
        return "link rxe0/1 lqpn 1 type GSI state RTS sq-psn 0 comm [ib_core]\n"
            + "link rxe0/1 lqpn 17 rqpn 18 type RC state RTS rq-psn 5 sq-psn " + rcPsn + " path-mig-state MIGRATED pdn 3 pid 102 comm rdma-bus-rdma-c\n"
            + "link rxe0/1 lqpn 19 type UD state RTS sq-psn " + udPsn + " pdn 3 pid 101 comm java\n"
            + "link rxe0/1 lqpn 20 rqpn 21 type RC state RTS rq-psn 0 sq-psn 77 pdn 4 pid 999 comm ib_send_lat\n";
    }

    @Test
    void keepsOnlyThisProcesssQueuePairs() {
        final RxeBusBench.QpSnapshot s = RxeBusBench.QpSnapshot.parse(listing(10, 20), OURS);
        assertEquals(2, s.qps().size());
        assertEquals("RC lqpn 17 sq-psn 10, UD lqpn 19 sq-psn 20", s.describe());
    }

    @Test
    void theQueuePairTypeWhoseSendPsnAdvancedIsThePath() {
        final RxeBusBench.QpSnapshot before = RxeBusBench.QpSnapshot.parse(listing(10, 20), OURS);
        assertTrue(RxeBusBench.QpSnapshot.parse(listing(30, 1020), OURS).pathSince(before, 1000).startsWith("UD (send PSNs advanced: RC 20, UD 1000"));
        assertTrue(RxeBusBench.QpSnapshot.parse(listing(1030, 20), OURS).pathSince(before, 1000).startsWith("RC (send PSNs advanced: RC 1020, UD 0"));
        // 24-bit PSNs wrap
        final RxeBusBench.QpSnapshot nearWrap = RxeBusBench.QpSnapshot.parse(listing((1 << 24) - 5, 20), OURS);
        assertTrue(RxeBusBench.QpSnapshot.parse(listing(995, 20), OURS).pathSince(nearWrap, 1000).startsWith("RC (send PSNs advanced: RC 1000,"));
        // nothing moved: no verdict
        assertTrue(RxeBusBench.QpSnapshot.parse(listing(10, 20), OURS).pathSince(before, 1000).startsWith("unclear"));
    }

    @Test
    void noQueuePairOfOursSaysSoWithTheListing() {
        final RxeBusBench.QpSnapshot s = RxeBusBench.QpSnapshot.parse(listing(1, 2), Set.of("5"));
        assertTrue(s.describe().startsWith("no QP of this process's threads among: link rxe0/1 lqpn 1"));
    }

    private static CommandLine cli() {
        return CliSupport.commandLine(new RxeBusBench()).setErr(new PrintWriter(new StringWriter()));
    }

    @Test
    void badOptionsFailBeforeAnyBusIsBuilt() {
        assertEquals(CommandLine.ExitCode.USAGE, cli().execute("--role", "client", "--size", "8"));
        assertEquals(CommandLine.ExitCode.USAGE, cli().execute("--role", "server"));
        assertEquals(CommandLine.ExitCode.USAGE, cli().execute("--role", "both", "--idle", "spinning"));
    }

    @Test
    void threadingDefaultsToSharedAndABadModeIsRefusedNamingTheOption() {
        final RxeBusBench bench = new RxeBusBench();
        CliSupport.commandLine(bench).parseArgs("--role", "client");
        assertEquals(ThreadingMode.SHARED, bench.threading, "today's mode unless --threading says otherwise");
        CliSupport.commandLine(bench).parseArgs("--role", "client", "--threading", "INVOKER");
        assertEquals(ThreadingMode.INVOKER, bench.threading);
        final StringWriter err = new StringWriter();
        final int exit = CliSupport.commandLine(new RxeBusBench()).setErr(new PrintWriter(err)).execute("--role", "client", "--threading", "POOLED");
        assertEquals(CommandLine.ExitCode.USAGE, exit);
        assertTrue(err.toString().contains("--threading"), err.toString());
    }
}
