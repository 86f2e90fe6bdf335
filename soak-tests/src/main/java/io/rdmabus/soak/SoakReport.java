package io.rdmabus.soak;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import io.rdmabus.benchmarks.PercentilePlot;

import org.HdrHistogram.Histogram;

/**
 * Reads a soak run's lab output (per guest: node CSVs and summaries, {@code rdma res} before/after; shared: the fault
 * log) and writes {@code report.md}, {@code rate.png} and {@code latency.png} into the report folder, then prints ONE
 * verdict line and exits 0 (PASS) or 1 (FAIL).
 *
 * <pre>SoakReport LAB_OUT_DIR REPORT_DIR PROFILE TRAFFIC_SECONDS</pre>
 */
public final class SoakReport {
    /** A node's "bus up" line in its guest's node.log (SoakNode); a standby's throwaway bus is named {@code <name>-warm}. */
    private static final java.util.regex.Pattern BUS_UP = java.util.regex.Pattern.compile("^soak (\\S+?)(-warm)?: bus up on ");
    /** The last part of a killed publisher's trades a subscriber may miss without a stall being named, ms. */
    static final long DEAD_TAIL_MS = 15_000;
    private final Path lab;
    private final Path report;
    private final String profile;
    private final long trafficS;
    private final List<String> problems = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();
    private final StringBuilder md = new StringBuilder();
    /** Longest RELIABLE stall at a publisher that still counts as progress (a reconnect under TCG), seconds. */
    static final long STALL_LIMIT_S = 60;
    private long longestStallS;

    // What build() gathers, phase by phase. build() runs once per instance, on the caller's thread.
    /** Start of the traffic window, epoch ms. */
    private long t0Ms;
    private final List<RatePlot.Marker> markers = new ArrayList<>();
    private final List<String> faultLines = new ArrayList<>();
    private List<FaultWindow> windows = List.of();
    private long faultsApplied;
    private long tradesSent;
    private long quotesSent;
    /** Trade session -> trades sent, of the publishers that closed. */
    private final Map<String, Long> finalTradeCount = new TreeMap<>();
    /** Trade session of a killed publisher -> trades it had sent at least (its last per-second line; it died up to 1 s later). */
    private final Map<String, Long> deadTradeCount = new TreeMap<>();
    /**
     * Trade session of a killed publisher -> trades it had sent {@link #DEAD_TAIL_MS} before its last line: a subscriber
     * short of those had stalled before the kill (e.g. after a NIC fault), it was not merely behind when the publisher died.
     */
    private final Map<String, Long> deadTradeCountEarlier = new TreeMap<>();
    /** Trades that died with a killed publisher (sent, not delivered: not promised). */
    private long deadTail;
    private final StringBuilder lossTable = new StringBuilder("| window | subscriber JVM | topic | publisher session | gaps | messages lost "
        + "| reported by bus |\n|---|---|---|---|---|---|---|\n");
    private final Map<String, Long> reliableLostByWindow = new TreeMap<>();
    private long relLost;
    private long relDup;
    private long relReordered;
    private long relReported;
    private long badContent;
    private long beObserved;
    private long beReported;
    private long received;
    private long tailLost;
    private final Map<String, Histogram> latency = new LinkedHashMap<>();
    private final StringBuilder subTable = new StringBuilder("| subscriber JVM | state | topic | publisher session | received | first | last "
        + "| lost (gaps) | reported by bus | dup | reordered | bad content |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    private String unauthLine = "unauthenticated peer not run";
    private final StringBuilder resTable = new StringBuilder("| guest | before | after | growth |\n|---|---|---|---|\n");
    private boolean resOk = true;

    private SoakReport(final Path lab, final Path report, final String profile, final long trafficS) {
        this.lab = lab;
        this.report = report;
        this.profile = profile;
        this.trafficS = trafficS;
    }

    /**
     * @param args lab output dir, report dir, profile, traffic seconds
     * @throws IOException if files cannot be read or written
     */
    public static void main(final String[] args) throws IOException {
        if (args.length != 4) {
            System.err.println("usage: SoakReport LAB_OUT_DIR REPORT_DIR PROFILE TRAFFIC_SECONDS");
            System.exit(2);
        }
        final String verdict = write(Path.of(args[0]), Path.of(args[1]), args[2], Long.parseLong(args[3]));
        System.out.println(verdict);
        System.exit(verdict.startsWith("soak verdict: PASS") ? 0 : 1);
    }

    /**
     * @param lab      the lab output folder (guest1.., shared)
     * @param report   the report folder to write
     * @param profile  profile name
     * @param trafficS length of the traffic window, seconds
     * @return the verdict line
     * @throws IOException if files cannot be read or written
     */
    public static String write(final Path lab, final Path report, final String profile, final long trafficS) throws IOException {
        return new SoakReport(lab, report, profile, trafficS).build();
    }

    private static Map<String, String> props(final Path file) throws IOException {
        final Map<String, String> m = new LinkedHashMap<>();
        for (final String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            final int eq = line.indexOf('=');
            if (eq > 0) {
                m.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        return m;
    }

    private static Map<String, Long> kv(final String summary) {
        final Map<String, Long> m = new LinkedHashMap<>();
        for (final String part : summary.trim().split("\\s+")) {
            final int eq = part.indexOf('=');
            if (eq > 0) {
                m.put(part.substring(0, eq), Long.parseLong(part.substring(eq + 1)));
            }
        }
        return m;
    }

    private List<Path> files(final String glob) throws IOException {
        final List<Path> out = new ArrayList<>();
        try (Stream<Path> guests = Files.list(lab)) {
            for (final Path g : guests.filter(p -> p.getFileName().toString().startsWith("guest")).sorted().toList()) {
                try (var ds = Files.newDirectoryStream(g, glob)) {
                    ds.forEach(out::add);
                }
            }
        }
        out.sort(null);
        return out;
    }

    private String build() throws IOException {
        Files.createDirectories(report);
        final long endS = Long.parseLong(Files.readString(lab.resolve("shared/end-epoch-s")).trim());
        t0Ms = (endS - trafficS) * 1000;
        readFaults();
        readPublishers();
        checkRefusalsAndStalls();
        checkSubscribersWithoutSummary();
        for (final Path p : files("sub-*.summary")) {
            readSubscriber(p);
        }
        if (received == 0) {
            problems.add("no subscriber received anything");
        }
        if (relLost + relDup + relReordered + badContent > 0) {
            problems.add("RELIABLE: lost=" + relLost + " dup=" + relDup + " reordered=" + relReordered + " bad content=" + badContent
                + " (bus reported " + relReported + " of the lost as lostBefore); lost by window: " + reliableLostByWindow);
        }
        checkRdmaRes();
        plot();
        final String verdict = verdict();
        writeMarkdown(verdict);
        return verdict;
    }

    /** The fault log: markers for the rate plot, the faults table, the windows gaps are put in. */
    private void readFaults() throws IOException {
        final Path faultLog = lab.resolve("shared/faults.log");
        if (Files.exists(faultLog)) {
            for (final String line : Files.readAllLines(faultLog)) {
                final String[] p = line.split(" ", 3);
                if (p.length == 3) {
                    final double at = (Long.parseLong(p[0]) - t0Ms) / 1000.0;
                    markers.add(new RatePlot.Marker(at, p[1] + " " + p[2]));
                    faultLines.add(String.format(Locale.ROOT, "| F%d | %.1f s | %s | %s |", markers.size(), at, p[1], p[2]));
                }
            }
        }
        windows = FaultWindow.parse(faultLog, t0Ms);
        faultsApplied = faultLines.stream().filter(l -> !l.contains("NOT") && !l.contains(" up |") && !l.contains("removed")).count();
        for (final String l : faultLines) {
            if (l.contains("NOT")) {
                notes.add("fault not applied: " + l.replace("|", " ").trim());
            }
        }
    }

    /** What the publishers sent: from their summaries, or from a killed one's last per-second line. */
    private void readPublishers() throws IOException {
        for (final Path p : files("pub-*.summary")) {
            final Map<String, String> s = props(p);
            tradesSent += Long.parseLong(s.get("tradesSent"));
            quotesSent += Long.parseLong(s.get("quotesSent"));
            finalTradeCount.put(s.get("tradeSession"), Long.parseLong(s.get("tradesSent")));
            if (Long.parseLong(s.get("tradesSent")) == 0) {
                problems.add(s.get("name") + ": the publisher sent no trade (no subscriber reached it): its part of the schedule was not exercised");
            }
            checkClose(p, s);
        }
        for (final Path csv : files("pub-*.csv")) {
            if (!Files.exists(Path.of(csv.toString().replace(".csv", ".summary")))) {
                final List<String> lines = Files.readAllLines(csv);
                final Path start = Path.of(csv.toString().replace(".csv", ".start"));
                final String session = Files.exists(start) ? props(start).get("tradeSession") : null;
                long trades = 0;
                long tradesEarlier = 0;
                if (lines.size() > 1) {
                    final String[] last = lines.get(lines.size() - 1).split(",");
                    quotesSent += Long.parseLong(last[1]);
                    trades = Long.parseLong(last[2]);
                    tradesSent += trades;
                    final long lastMs = Long.parseLong(last[0]);
                    for (final String line : lines.subList(1, lines.size())) {
                        final String[] f = line.split(",");
                        if (Long.parseLong(f[0]) <= lastMs - DEAD_TAIL_MS) {
                            tradesEarlier = Long.parseLong(f[2]);
                        }
                    }
                }
                notes.add(csv.getFileName() + ": publisher killed (trade session " + session + "); its counts are from its last per-second line "
                    + "(up to 1 s short): " + trades + " trades");
                if (session != null) {
                    deadTradeCount.put(session, trades);
                    deadTradeCountEarlier.put(session, tradesEarlier);
                }
            }
        }
    }

    /** The publishers must have refused the peer without the bus secret, which must have received nothing; RELIABLE must not stall. */
    private void checkRefusalsAndStalls() throws IOException {
        long refusedByPublisher = 0;
        for (final Path csv : files("pub-*.csv")) {
            // a killed publisher leaves no summary: its per-second line has the count too
            final Path summary = Path.of(csv.toString().replace(".csv", ".summary"));
            long refused = Files.exists(summary) ? Long.parseLong(props(summary).getOrDefault("refusedPeers", "0")) : 0;
            final List<String> lines = Files.readAllLines(csv);
            final String[] last = lines.get(lines.size() - 1).split(",");
            if (lines.size() > 1 && last.length > 5) {
                refused = Math.max(refused, Long.parseLong(last[5]));
            }
            refusedByPublisher += Math.max(0, refused);
            stallCheck(csv, lines, t0Ms, windows);
        }
        for (final Path p : files("sub-unauth*.summary")) {
            final Map<String, String> s = props(p);
            long got = 0;
            for (final Map.Entry<String, String> e : s.entrySet()) {
                if (e.getKey().contains(".session.")) {
                    got += kv(e.getValue()).get("received");
                }
            }
            unauthLine = "unauthenticated peer got " + got + " (publisher refused " + refusedByPublisher + " attempts)";
            if (got > 0) {
                problems.add(s.get("name") + " (no bus secret) received " + got + " messages");
            }
            if (refusedByPublisher == 0) {
                problems.add(s.get("name") + " (no bus secret): the publisher never refused it, so its attempt to join is not proven");
            }
        }
    }

    private void checkSubscribersWithoutSummary() throws IOException {
        // a subscriber JVM whose bus came up but that left no summary (killed before it subscribed) proved nothing
        final java.util.Set<String> summarised = new java.util.HashSet<>();
        for (final Path p : files("sub-*.summary")) {
            summarised.add(props(p).get("name"));
        }
        for (final Path log : files("node.log")) {
            for (final String line : Files.readAllLines(log)) {
                final java.util.regex.Matcher m = BUS_UP.matcher(line);
                if (m.find() && m.group(1).startsWith("sub") && !summarised.contains(m.group(1))) {
                    problems.add(m.group(1) + " (" + log.getParent().getFileName() + ") had its bus up but left no summary: it was killed or died "
                        + "before it subscribed, so nothing it should have received is proven");
                }
            }
        }
    }

    /** One subscriber JVM's summary: a row per publisher session it got, its failures, its latency, its close. */
    private void readSubscriber(final Path p) throws IOException {
        final Map<String, String> s = props(p);
        final String name = s.get("name");
        if (name.startsWith("unauth")) {
            return;
        }
        final String state = s.get("state") + ("true".equals(s.get("final")) ? "" : " (killed)");
        if (s.keySet().stream().noneMatch(k -> k.startsWith("quotes.session.") || k.startsWith("trades.session."))) {
            // a subscriber JVM (e.g. the one restarted after a kill -9) that got nothing did not take part: its part of
            // the schedule (rejoining) is not proven; usually its cold start outlasted the window
            problems.add(name + " received nothing in the traffic window (its JVM came up too late, or it never joined): its part of "
                + "the schedule is not proven");
        }
        for (final Map.Entry<String, String> e : s.entrySet()) {
            if (e.getKey().startsWith("quotes.session.") || e.getKey().startsWith("trades.session.")) {
                readSession(p, s, name, state, e.getKey(), e.getValue());
            }
        }
        for (final String topic : new String[] {"quotes", "trades"}) {
            if (s.containsKey(topic + ".errors")) {
                for (final String err : s.get(topic + ".errors").split("\\|")) {
                    final String[] f = err.split(":", 2);
                    final String when = FaultWindow.label(windows, Long.parseLong(f[0]), p.getParent().getFileName().toString());
                    final double atS = (Long.parseLong(f[0]) - t0Ms) / 1000.0;
                    problems.add(name + ": " + topic + " subscription failed at " + String.format(Locale.ROOT, "%.1f s", atS) + " (" + when + "): "
                        + f[1] + " (subscribed again)");
                }
            }
        }
        if (s.containsKey("latencyHistogram")) {
            final byte[] bytes = Base64.getDecoder().decode(s.get("latencyHistogram"));
            try {
                final Histogram us = Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(bytes), 0);
                final Histogram ns = new Histogram(3);
                for (final var v : us.recordedValues()) {
                    ns.recordValueWithCount(v.getValueIteratedTo() * 1000, v.getCountAtValueIteratedTo());
                }
                if (ns.getTotalCount() > 0) {
                    latency.put(name, ns);
                }
            } catch (final java.util.zip.DataFormatException ex) {
                notes.add(name + ": latency histogram unreadable: " + ex);
            }
        }
        if ("true".equals(s.get("final"))) {
            checkClose(p, s);
            for (final Map.Entry<String, Long> pub : finalTradeCount.entrySet()) {
                // a subscriber that ran to the end must have got the trades of every publisher that ran to the end
                if (pub.getValue() > 0 && !s.containsKey("trades.session." + pub.getKey())) {
                    problems.add(name + ": got no trade of session " + pub.getKey() + " (its publisher sent " + pub.getValue()
                        + ") although it ran to the end: it never (re)joined that publisher's RELIABLE stream");
                }
            }
        }
    }

    /** One publisher session as one subscriber JVM saw it ({@code key} is {@code quotes.session.N} or {@code trades.session.N}). */
    private void readSession(final Path p, final Map<String, String> s, final String name, final String state, final String key,
                             final String value) {
        final boolean quotes = key.startsWith("quotes.session.");
        final boolean trades = !quotes;
        final String session = key.substring(key.lastIndexOf('.') + 1);
        final Map<String, Long> c = kv(value);
        received += c.get("received");
        badContent += c.get("badContent");
        subTable.append("| ").append(name).append(" | ").append(state).append(" | ").append(quotes ? "quotes BEST_EFFORT" : "trades RELIABLE")
            .append(" | ").append(session).append(" | ").append(c.get("received")).append(" | ").append(c.get("first")).append(" | ")
            .append(c.get("last")).append(" | ").append(c.get("lost")).append(" | ").append(c.get("reportedLost")).append(" | ")
            .append(c.get("duplicated")).append(" | ").append(c.get("reordered")).append(" | ").append(c.get("badContent")).append(" |\n");
        final String gapKey = (quotes ? "quotes" : "trades") + ".gaps." + session;
        final String guest = p.getParent().getFileName().toString();
        final Map<String, long[]> byWindow = FaultWindow.attribute(windows, s.getOrDefault(gapKey, ""), guest);
        long kept = 0;
        for (final Map.Entry<String, long[]> w : byWindow.entrySet()) {
            kept += w.getValue()[0];
            lossTable.append("| ").append(w.getKey()).append(" | ").append(name).append(" | ").append(quotes ? "quotes BEST_EFFORT" : "trades RELIABLE")
                .append(" | ").append(session).append(" | ").append(w.getValue()[0]).append(" | ").append(w.getValue()[1]).append(" | ")
                .append(w.getValue()[2]).append(" |\n");
            if (trades) {
                reliableLostByWindow.merge(w.getKey().replaceAll(" .*", ""), w.getValue()[1], Long::sum);
            }
        }
        if (kept < c.get("lossEvents")) {
            lossTable.append("| (not timed: only the first ").append(StreamCheck.MAX_GAP_EVENTS).append(" gaps are kept) | ").append(name)
                .append(" | ").append(quotes ? "quotes" : "trades").append(" | ").append(session).append(" | ").append(c.get("lossEvents") - kept)
                .append(" | | |\n");
        }
        final Long deadSent = deadTradeCount.get(session);
        final long deadEarlier = deadTradeCountEarlier.getOrDefault(session, 0L);
        if (trades && deadSent != null && "true".equals(s.get("final")) && c.get("last") < deadEarlier - 1) {
            problems.add(name + ": trades session " + session + " of the killed publisher stopped at " + c.get("last") + ", but "
                + DEAD_TAIL_MS / 1000 + " s before its kill the publisher had already sent up to " + (deadEarlier - 1)
                + ": a RELIABLE stall, not the dead publisher's tail");
        } else if (trades && deadSent != null && "true".equals(s.get("final")) && c.get("last") < deadSent - 1) {
            // the publisher died: what it had sent and not delivered died with it (retention is in its memory)
            deadTail += deadSent - 1 - c.get("last");
            notes.add(name + ": trades session " + session + " of the killed publisher ended at " + c.get("last") + "; the publisher had sent "
                + "at least up to " + (deadSent - 1) + " (" + (deadSent - 1 - c.get("last")) + " lost with the dead publisher: not promised)");
        }
        if (trades) {
            relLost += c.get("lost");
            relDup += c.get("duplicated");
            relReordered += c.get("reordered");
            relReported += c.get("reportedLost");
            final Long sent = finalTradeCount.get(session);
            if (sent != null && "true".equals(s.get("final")) && c.get("last") != sent - 1) {
                tailLost += sent - 1 - c.get("last");
                problems.add(name + ": trades session " + session + " ended at " + c.get("last") + " but the publisher sent up to " + (sent - 1));
            }
        } else {
            beObserved += c.get("lost");
            beReported += c.get("reportedLost");
            if (!c.get("lost").equals(c.get("reportedLost"))) {
                problems.add(name + ": quotes session " + session + ": gaps observed " + c.get("lost") + " != reported " + c.get("reportedLost"));
            }
        }
    }

    /** Every guest script exited 0, and the rdma resources returned to their baseline. */
    private void checkRdmaRes() throws IOException {
        try (Stream<Path> guests = Files.list(lab)) {
            for (final Path g : guests.filter(p -> p.getFileName().toString().startsWith("guest")).sorted().toList()) {
                final Path exit = g.resolve("exit-code");
                final String code = Files.exists(exit) ? Files.readString(exit).trim() : "missing";
                if (!"0".equals(code)) {
                    problems.add(g.getFileName() + ": guest script exit code " + code + " (124 = timed out; see its console.log and node.log)");
                }
                final Path b = g.resolve("res-before.txt");
                final Path a = g.resolve("res-after.txt");
                if (!Files.exists(b) || !Files.exists(a)) {
                    resOk = false;
                    problems.add(g.getFileName() + ": no rdma res before/after (guest did not finish)");
                    continue;
                }
                final RdmaRes rb = RdmaRes.parse(Files.readString(b).lines().findFirst().orElse(""), "rxe0");
                final RdmaRes ra = RdmaRes.parse(Files.readString(a).lines().findFirst().orElse(""), "rxe0");
                if (rb == null || ra == null) {
                    resOk = false;
                    problems.add(g.getFileName() + ": rdma res unreadable");
                    continue;
                }
                final String growth = ra.growthOver(rb);
                resTable.append("| ").append(g.getFileName()).append(" | ").append(rb.brief()).append(" | ").append(ra.brief()).append(" | ")
                    .append(growth.isEmpty() ? "none" : growth).append(" |\n");
                if (!growth.isEmpty()) {
                    resOk = false;
                    problems.add(g.getFileName() + ": rdma resources did not return to baseline: " + growth);
                }
            }
        }
    }

    private void plot() throws IOException {
        final Map<String, List<double[]>> rates = new TreeMap<>();
        for (final Path csv : files("sub-*.csv")) {
            final List<String> lines = Files.readAllLines(csv);
            final List<double[]> pts = new ArrayList<>();
            long prevMs = -1;
            long prevCount = 0;
            for (final String line : lines.subList(Math.min(1, lines.size()), lines.size())) {
                final String[] f = line.split(",");
                final long ms = Long.parseLong(f[0]);
                final long count = Long.parseLong(f[1]) + Long.parseLong(f[2]);
                if (prevMs > 0 && ms > prevMs) {
                    pts.add(new double[] {(ms - t0Ms) / 1000.0, (count - prevCount) * 1000.0 / (ms - prevMs)});
                }
                prevMs = ms;
                prevCount = count;
            }
            rates.put(csv.getFileName().toString().replace("sub-", "").replace(".csv", ""), pts);
        }
        RatePlot.render("soak " + profile + ": receive rate per subscriber JVM, faults marked", rates, markers, report.resolve("rate.png").toFile());
        if (!latency.isEmpty()) {
            PercentilePlot.render("soak " + profile + ": one-way latency per subscriber JVM (clock skew included)", "one-way latency (us, log scale)",
                latency, report.resolve("latency.png").toFile());
        }
    }

    private String verdict() {
        final boolean pass = problems.isEmpty();
        return String.format(Locale.ROOT, "soak verdict: %s profile=%s duration=%ds reliable lost=%d dup=%d reordered=%d%s; "
                + "best-effort gaps reported=%d observed=%d; faults=%d; received=%d of sent quotes=%d trades=%d; res baseline %s%s",
            pass ? "PASS" : "FAIL", profile, trafficS, relLost, relDup, relReordered,
            (relLost > 0 ? " " + compact(reliableLostByWindow) : "") + (tailLost > 0 ? " tailLost=" + tailLost : "")
                + (deadTail > 0 ? " lostWithDeadPublisher=" + deadTail : "") + (longestStallS > STALL_LIMIT_S ? " reliableStalled=" + longestStallS + "s" : ""),
            beReported, beObserved,
            faultsApplied, received, quotesSent, tradesSent, resOk ? "ok" : "GREW/UNKNOWN", "; " + unauthLine);
    }

    private void writeMarkdown(final String verdict) throws IOException {
        md.append("# Soak run: profile ").append(profile).append("\n\n`").append(verdict).append("`\n\n");
        md.append("Lab output: `").append(lab).append("`. Traffic window: ").append(trafficS).append(" s from ")
            .append(java.time.Instant.ofEpochMilli(t0Ms)).append(".\n\n");
        md.append("## Problems\n\n").append(problems.isEmpty() ? "none\n" : "- " + String.join("\n- ", problems) + "\n");
        md.append("\n## Notes\n\n").append(notes.isEmpty() ? "none\n" : "- " + String.join("\n- ", notes) + "\n");
        md.append("\n## Faults\n\n| marker | at (s into traffic) | guest | fault |\n|---|---|---|---|\n").append(String.join("\n", faultLines)).append("\n");
        md.append("\n## Fault windows (a gap is put in the latest fault that began before it was seen and ended less than ")
            .append(FaultWindow.RECOVERY_S).append(" s before it)\n\n");
        for (final FaultWindow w : windows) {
            md.append("- ").append(w.describe()).append('\n');
        }
        md.append("\n## What each subscriber JVM proved\n\n").append(subTable);
        md.append("\n## Where the losses happened\n\n").append(lossTable);
        md.append("\n## rdma res (pd cq qp cm_id mr) before the JVMs started and after they exited\n\n").append(resTable);
        md.append("\n## Plots\n\n![rate](rate.png)\n\n").append(latency.isEmpty() ? "(no latency samples)\n" : "![latency](latency.png)\n");
        md.append("\n## How to read this\n\nSee soak-tests/README.md, section \"Reading the report\".\n");
        Files.writeString(report.resolve("report.md"), md.toString(), StandardCharsets.UTF_8);
    }

    /**
     * RELIABLE must make progress: a publisher that could not send a single trade for more than {@link #STALL_LIMIT_S}
     * (back-pressure: it kept offering, {@code trade_retries} grew, {@code trades_sent} did not) while subscribers were
     * connected is a stall the bus must not have (e.g. a dead subscriber's connection never noticed, its credits never
     * returned). Only the traffic window counts.
     */
    private void stallCheck(final Path csv, final List<String> lines, final long t0Ms, final List<FaultWindow> windows) {
        long stallStartMs = -1;
        long prevTrades = -1;
        final long endMs = t0Ms + trafficS * 1000;
        for (final String line : lines.subList(1, lines.size())) {
            final String[] f = line.split(",");
            final long ms = Long.parseLong(f[0]);
            final long trades = Long.parseLong(f[2]);
            if (ms < t0Ms || ms > endMs) {
                prevTrades = trades;
                continue;
            }
            if (trades == prevTrades && trades > 0) {
                if (stallStartMs < 0) {
                    stallStartMs = ms - 1000;
                }
            } else {
                endStall(csv, stallStartMs, ms, t0Ms, windows);
                stallStartMs = -1;
            }
            prevTrades = trades;
        }
        if (!lines.isEmpty() && stallStartMs >= 0) {
            endStall(csv, stallStartMs, Long.parseLong(lines.get(lines.size() - 1).split(",")[0]), t0Ms, windows);
        }
    }

    private void endStall(final Path csv, final long fromMs, final long toMs, final long t0Ms, final List<FaultWindow> windows) {
        if (fromMs < 0) {
            return;
        }
        final long s = (toMs - fromMs) / 1000;
        longestStallS = Math.max(longestStallS, s);
        if (s > STALL_LIMIT_S) {
            final String began = FaultWindow.label(windows, fromMs, null);
            problems.add(String.format(Locale.ROOT, "%s: RELIABLE stalled: the publisher could not send a trade for %d s (%.1f s to %.1f s into the "
                + "window; began in: %s)", csv.getFileName(), s, (fromMs - t0Ms) / 1000.0, (toMs - t0Ms) / 1000.0, began));
        }
    }

    /** @return e.g. {@code where=F2:12,none:3} */
    private static String compact(final Map<String, Long> byWindow) {
        final StringBuilder sb = new StringBuilder("where=");
        byWindow.forEach((w, n) -> {
            if (n > 0) {
                sb.append(sb.length() > 6 ? "," : "").append(w).append(':').append(n);
            }
        });
        return sb.toString();
    }

    private void checkClose(final Path p, final Map<String, String> s) {
        if (!s.getOrDefault("busThreadsLeft", "").isBlank()) {
            problems.add(p.getFileName() + ": bus threads left after close: " + s.get("busThreadsLeft"));
        }
        if (!s.getOrDefault("spinningThreads", "").isBlank()) {
            problems.add(p.getFileName() + ": threads spinning after close: " + s.get("spinningThreads"));
        }
        if (s.containsKey("closeMs")) {
            notes.add(p.getFileName() + ": closed in " + s.get("closeMs") + " ms, heap after GC " + s.get("heapBeforeCloseKiB") + " KiB before close, "
                + s.get("heapAfterCloseKiB") + " KiB after");
        }
    }
}
