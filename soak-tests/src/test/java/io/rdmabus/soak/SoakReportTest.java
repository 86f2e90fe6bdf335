package io.rdmabus.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The checks behind the verdict, on synthetic node output (the real run needs the lab), and StreamCheck's arithmetic. */
class SoakReportTest {
    private static final String RES_BEFORE = "0: rxe0: pd 1 cq 1 qp 1 cm_id 0 mr 0 ctx 0 srq 0\n";

    @Test
    void streamCheckCountsGapsDuplicatesReorderingAndReports() {
        final StreamCheck c = new StreamCheck();
        c.onMessage(5, 99, true);   // joined live at 5: the report on the first message is not compared
        c.onMessage(6, 0, true);
        c.onMessage(9, 2, true);    // 7, 8 lost; bus reported 2
        c.onMessage(9, 0, true);    // duplicate
        c.onMessage(8, 0, false);   // late + bad content
        c.onMessage(10, 0, true);
        assertEquals(6, c.received());
        assertEquals(2, c.lost());
        assertEquals(1, c.lossEvents());
        assertEquals(2, c.reportedLost());
        assertEquals(1, c.duplicated());
        assertEquals(1, c.reordered());
        assertEquals(1, c.badContent());
        assertEquals(10, c.last());
    }

    @Test
    void streamCheckKeepsEachGapWithItsTime() {
        final StreamCheck c = new StreamCheck();
        c.onMessage(0, 0, true, 1000);
        c.onMessage(3, 2, true, 2000);   // 1, 2 lost, bus reported 2
        c.onMessage(4, 0, true, 3000);
        c.onMessage(10, 0, true, 4000);  // 5..9 lost, bus reported nothing
        assertEquals("2000:1:2:2,4000:5:5:0", c.gapEvents());
        assertEquals(1000, c.firstMs());
        assertEquals(4000, c.lastMs());
    }

    @Test
    void gapsArePutInTheFaultWindowTheyFollow(@TempDir final Path dir) throws IOException {
        final Path log = dir.resolve("faults.log");
        Files.writeString(log, "1000 guest3 unauthenticated peer started (no bus secret, pid 1): must receive nothing\n"
            + "10000 guest2 kill-9 subscriber JVM (pid 2) and restart it\n"
            + "100000 guest3 ip link set eth0 down (10 s)\n"
            + "110000 guest3 ip link set eth0 up\n"
            + "300000 guest1 kill-9 publisher JVM (pid 3) and restart it (new session)\n");
        final List<FaultWindow> w = FaultWindow.parse(log, 0);
        assertEquals(3, w.size());
        assertEquals("F3", w.get(1).id());      // numbered like the rate plot's markers: every logged line counts
        assertEquals(110000, w.get(1).endMs());
        final Map<String, long[]> byWindow = FaultWindow.attribute(w, "5000:1:1:1,120000:40:30:30,169000:90:2:0,171000:99:1:1,301000:7:3:3", "guest3");
        final List<String> keys = List.copyOf(byWindow.keySet());
        assertEquals(List.of(FaultWindow.NONE, "F3 guest3 ip link set eth0 down (10 s)",
            "F5 guest1 kill-9 publisher JVM (pid 3) and restart it (new session)"), keys);
        assertEquals(List.of(2L, 32L, 30L), java.util.Arrays.stream(byWindow.get(keys.get(1))).boxed().toList());
        assertEquals(List.of(2L, 2L, 2L), java.util.Arrays.stream(byWindow.get(FaultWindow.NONE)).boxed().toList()); // 5000 and 171000
        assertTrue(FaultWindow.label(w, 20000, "guest3").endsWith("(on another subscriber's guest)"));
    }

    @Test
    void soakMessagesVerifyTheirOwnContentOnly() {
        assertTrue(SoakMessages.verify(SoakMessages.quote(42, 123)));
        assertTrue(SoakMessages.verify(SoakMessages.trade(42, 123)));
        final var q = SoakMessages.quote(42, 123);
        assertTrue(!SoakMessages.verify(new io.rdmabus.codecs.Quote(q.instrumentId(), q.exchangeTimestampNs(), q.bidPriceE9() + 1, q.askPriceE9(),
            q.bidSize(), q.askSize(), q.feedSequence())));
        final var t = SoakMessages.trade(7, 1);
        assertTrue(!SoakMessages.verify(new io.rdmabus.codecs.Trade(t.instrumentId(), t.exchangeTimestampNs(), t.priceE9(), t.size(), 8,
            t.aggressorSide())));
    }

    private static void lab(final Path lab, final String subSummaryTrades, final String resAfter) throws IOException {
        final long end = 2_000_000_000L;
        Files.createDirectories(lab.resolve("shared"));
        Files.writeString(lab.resolve("shared/end-epoch-s"), end + "\n");
        Files.writeString(lab.resolve("shared/faults.log"), ((end - 50) * 1000) + " guest2 kill-9 subscriber JVM\n"
            + ((end - 30) * 1000) + " guest1 unauthenticated peer NOT RUN: no bus secret\n");
        final Path g1 = Files.createDirectories(lab.resolve("guest1"));
        final Path g2 = Files.createDirectories(lab.resolve("guest2"));
        for (final Path g : new Path[] {g1, g2}) {
            Files.writeString(g.resolve("exit-code"), "0\n");
            Files.writeString(g.resolve("res-before.txt"), RES_BEFORE);
            Files.writeString(g.resolve("res-after.txt"), g == g2 ? resAfter : RES_BEFORE);
        }
        Files.writeString(g1.resolve("pub-pub1-10.summary"), "role=publisher\nname=pub1-10\nquoteSession=11\ntradeSession=12\nquotesSent=400\n"
            + "tradesSent=100\nquotesNotSent=0\ntradeRetries=3\ncloseMs=20\nbusThreadsLeft=\nspinningThreads=\nfinal=true\n");
        Files.writeString(g2.resolve("sub-sub2-20.summary"), "role=subscriber\nname=sub2-20\nstate=closed\n"
            + "quotes.session.11=received=390 first=0 last=399 lost=10 lossEvents=3 reportedLost=10 duplicated=0 reordered=0 badContent=0\n"
            + "trades.session.12=" + subSummaryTrades + "\ncloseMs=30\nbusThreadsLeft=\nspinningThreads=\nfinal=true\n");
        final StringBuilder csv = new StringBuilder("epoch_ms,quotes,trades,quote_gaps_observed,quote_gaps_reported,trades_lost,p50_us,p99_us,max_us\n");
        for (int s = 0; s < 100; s++) {
            csv.append((end - 100 + s) * 1000).append(',').append(s * 4).append(',').append(s).append(",0,0,0,100,200,300\n");
        }
        Files.writeString(g2.resolve("sub-sub2-20.csv"), csv);
    }

    @Test
    void passesOnACleanRunAndWritesTheReport(@TempDir final Path dir) throws IOException {
        lab(dir.resolve("lab"), "received=100 first=0 last=99 lost=0 lossEvents=0 reportedLost=0 duplicated=0 reordered=0 badContent=0", RES_BEFORE);
        final String verdict = SoakReport.write(dir.resolve("lab"), dir.resolve("report"), "test", 100);
        assertTrue(verdict.startsWith("soak verdict: PASS profile=test duration=100s reliable lost=0 dup=0 reordered=0; best-effort gaps reported=10 "
            + "observed=10; faults=1;"), verdict);
        assertTrue(verdict.contains("res baseline ok") && verdict.contains("unauthenticated peer not run"), verdict);
        assertTrue(Files.size(dir.resolve("report/rate.png")) > 1000);
        assertTrue(Files.readString(dir.resolve("report/report.md")).contains("kill-9 subscriber JVM"));
    }

    @Test
    void saysWhereReliableLossesHappenedAndCountsADeadPublishersTailApart(@TempDir final Path dir) throws IOException {
        final Path lab = dir.resolve("lab");
        lab(lab, "received=97 first=0 last=99 lost=3 lossEvents=1 reportedLost=3 duplicated=0 reordered=0 badContent=0", RES_BEFORE);
        final long end = 2_000_000_000L;
        Files.writeString(lab.resolve("shared/faults.log"), ((end - 60) * 1000) + " guest2 ip link set eth0 down (10 s)\n"
            + ((end - 50) * 1000) + " guest2 ip link set eth0 up\n"
            + ((end - 20) * 1000) + " guest1 kill-9 publisher JVM (pid 9) and restart it (new session)\n");
        final Path g1 = lab.resolve("guest1");
        final Path g2 = lab.resolve("guest2");
        final Path sub = g2.resolve("sub-sub2-20.summary");
        Files.writeString(sub, Files.readString(sub).replace("final=true", "trades.gaps.12=" + ((end - 45) * 1000) + ":50:3:3\n"
            + "trades.session.30=received=40 first=0 last=39 lost=0 lossEvents=0 reportedLost=0 duplicated=0 reordered=0 badContent=0\nfinal=true"));
        Files.writeString(g1.resolve("pub-pub1-11.start"), "name=pub1-11\nquoteSession=29\ntradeSession=30\n");
        Files.writeString(g1.resolve("pub-pub1-11.csv"), "epoch_ms,quotes_sent,trades_sent,quotes_not_sent,trade_retries\n1,160,45,0,0\n");
        final String verdict = SoakReport.write(lab, dir.resolve("report"), "test", 100);
        assertTrue(verdict.startsWith("soak verdict: FAIL") && verdict.contains("reliable lost=3 dup=0 reordered=0 where=F1:3 lostWithDeadPublisher=5;"),
            verdict);
        final String md = Files.readString(dir.resolve("report/report.md"));
        assertTrue(md.contains("| F1 guest2 ip link set eth0 down (10 s) | sub2-20 | trades RELIABLE | 12 | 1 | 3 | 3 |"), md);
        assertTrue(md.contains("ended at 39; the publisher had sent at least up to 44 (5 lost with the dead publisher: not promised)"), md);
    }

    @Test
    void failsWhenTheReliableStreamStallsAtThePublisher(@TempDir final Path dir) throws IOException {
        final Path lab = dir.resolve("lab");
        lab(lab, "received=100 first=0 last=99 lost=0 lossEvents=0 reportedLost=0 duplicated=0 reordered=0 badContent=0", RES_BEFORE);
        final long end = 2_000_000_000L;
        final StringBuilder csv = new StringBuilder("epoch_ms,quotes_sent,trades_sent,quotes_not_sent,trade_retries,refused_peers\n");
        for (int s = 0; s < 100; s++) {   // trades stop at 10 s into the 100 s window: 89 s without progress
            csv.append((end - 100 + s) * 1000).append(',').append(s * 4).append(',').append(Math.min(s, 10)).append(",0,").append(Math.max(0, s - 10))
                .append(",3\n");
        }
        Files.writeString(lab.resolve("guest1/pub-pub1-10.csv"), csv);
        final String verdict = SoakReport.write(lab, dir.resolve("report"), "test", 100);
        assertTrue(verdict.startsWith("soak verdict: FAIL") && verdict.contains("reliableStalled=89s"), verdict);
        assertTrue(Files.readString(dir.resolve("report/report.md")).contains("RELIABLE stalled: the publisher could not send a trade for 89 s"));
    }

    @Test
    void failsWhenASubscriberWhoseBusCameUpLeftNoSummary(@TempDir final Path dir) throws IOException {
        lab(dir.resolve("lab"), "received=100 first=0 last=99 lost=0 lossEvents=0 reportedLost=0 duplicated=0 reordered=0 badContent=0", RES_BEFORE);
        // sub2-20 left its summary; sub2-19 (killed before it subscribed) and the standby's throwaway bus did not
        Files.writeString(dir.resolve("lab/guest2/node.log"), "soak sub2-19: bus up on 10.77.0.12:7900 at 1\nsoak sub2-20-warm: bus up on "
            + "10.77.0.12:7904 at 2\nsoak sub2-20: bus up on 10.77.0.12:7903 at 3\n");
        final String verdict = SoakReport.write(dir.resolve("lab"), dir.resolve("report"), "test", 100);
        assertTrue(verdict.startsWith("soak verdict: FAIL"), verdict);
        final String md = Files.readString(dir.resolve("report/report.md"));
        assertTrue(md.contains("sub2-19 (guest2) had its bus up but left no summary") && !md.contains("sub2-20 (guest2)"), md);
    }

    @Test
    void namesASubscriberThatStoppedGettingAReliableStreamLongBeforeItsPublisherDied(@TempDir final Path dir) throws IOException {
        final Path lab = dir.resolve("lab");
        lab(lab, "received=100 first=0 last=99 lost=0 lossEvents=0 reportedLost=0 duplicated=0 reordered=0 badContent=0", RES_BEFORE);
        // a second publisher, killed: 10 trades/s for 60 s; the subscriber got its first 200 only (a stall 40 s before the kill)
        final StringBuilder pub = new StringBuilder("epoch_ms,quotes_sent,trades_sent,quotes_not_sent,trade_retries\n");
        for (int s = 1; s <= 60; s++) {
            pub.append(1_000_000L + s * 1000L).append(',').append(s * 40).append(',').append(s * 10).append(",0,0\n");
        }
        Files.writeString(lab.resolve("guest1/pub-pub1-11.csv"), pub);
        Files.writeString(lab.resolve("guest1/pub-pub1-11.start"), "name=pub1-11\nquoteSession=29\ntradeSession=30\n");
        final Path sub = lab.resolve("guest2/sub-sub2-20.summary");
        Files.writeString(sub, Files.readString(sub).replace("final=true", "trades.session.30=received=200 first=0 last=199 lost=0 lossEvents=0 "
            + "reportedLost=0 duplicated=0 reordered=0 badContent=0\nfinal=true"));
        String verdict = SoakReport.write(lab, dir.resolve("report"), "test", 100);
        assertTrue(verdict.startsWith("soak verdict: FAIL"), verdict);
        assertTrue(Files.readString(dir.resolve("report/report.md")).contains("sub2-20: trades session 30 of the killed publisher stopped at 199, but 15 s "
            + "before its kill the publisher had already sent up to 449: a RELIABLE stall"));
        // and one that got nothing of a publisher that ran to the end
        Files.writeString(sub, Files.readString(sub).replace("trades.session.12=", "tradesX.session.12="));
        verdict = SoakReport.write(lab, dir.resolve("report2"), "test", 100);
        assertTrue(Files.readString(dir.resolve("report2/report.md")).contains("sub2-20: got no trade of session 12 (its publisher sent 100)"), verdict);
    }

    @Test
    void failsOnReliableLossTailLossAndResourceGrowth(@TempDir final Path dir) throws IOException {
        lab(dir.resolve("lab"), "received=95 first=0 last=97 lost=3 lossEvents=1 reportedLost=3 duplicated=0 reordered=0 badContent=0",
            "0: rxe0: pd 2 cq 3 qp 3 cm_id 1 mr 2 ctx 0 srq 0\n");
        final String verdict = SoakReport.write(dir.resolve("lab"), dir.resolve("report"), "test", 100);
        assertTrue(verdict.startsWith("soak verdict: FAIL") && verdict.contains("reliable lost=3") && verdict.contains("tailLost=2")
            && verdict.contains("res baseline GREW"), verdict);
        final String md = Files.readString(dir.resolve("report/report.md"));
        assertTrue(md.contains("qp 3>1") && md.contains("ended at 97 but the publisher sent up to 99"), md);
    }
}
