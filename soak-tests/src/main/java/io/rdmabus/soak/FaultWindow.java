package io.rdmabus.soak;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * One fault of the soak schedule as a time window, read from {@code faults.log} ({@code epochMs guestN text} per line):
 * a kill is an instant, a NIC down lasts until its "up" line, netem until its "removed" line. The window reaches
 * {@link #RECOVERY_S} past the fault's end, because a subscriber sees a gap only with the first message after it (a
 * reconnect under TCG takes tens of seconds). The unauthenticated peer runs the whole time and is no window.
 *
 * @param id      F1, F2, ... in log order (the same numbering as the rate plot's markers)
 * @param guest   the guest the fault ran on (guest1 = the publisher's)
 * @param text    the fault as logged
 * @param startMs when it began, epoch ms
 * @param endMs   when it ended (= startMs for a kill), epoch ms
 * @param t0Ms    the planned start of the traffic window, epoch ms (for printing offsets)
 */
public record FaultWindow(String id, String guest, String text, long startMs, long endMs, long t0Ms) {
    /** How long after a fault's end a gap is still put in its window, seconds. */
    public static final long RECOVERY_S = 60;
    /** The window name for gaps outside every fault window. */
    public static final String NONE = "none (no fault: a healthy connection)";

    /**
     * @param faultLog the run's faults.log (may be missing: no windows)
     * @param t0Ms     the planned start of the traffic window, epoch ms
     * @return the windows in log order
     * @throws IOException if the log cannot be read
     */
    public static List<FaultWindow> parse(final Path faultLog, final long t0Ms) throws IOException {
        final List<FaultWindow> out = new ArrayList<>();
        if (!Files.exists(faultLog)) {
            return out;
        }
        int n = 0;
        for (final String line : Files.readAllLines(faultLog)) {
            final String[] p = line.split(" ", 3);
            if (p.length < 3) {
                continue;
            }
            n++; // every logged line is a marker F<n> on the rate plot, so the ids match the plot's
            final long at = Long.parseLong(p[0]);
            final String text = p[2];
            if (text.startsWith("ip link set eth0 up") || text.startsWith("tc netem removed")) {
                final String opens = text.startsWith("ip link") ? "ip link set eth0 down" : "tc netem loss";
                for (int i = out.size() - 1; i >= 0; i--) {
                    final FaultWindow w = out.get(i);
                    if (w.guest.equals(p[1]) && w.text.startsWith(opens) && w.endMs == w.startMs) {
                        out.set(i, new FaultWindow(w.id, w.guest, w.text, w.startMs, at, t0Ms));
                        break;
                    }
                }
            } else if (!text.startsWith("unauthenticated peer") && !text.startsWith("standby") && !text.contains("NOT APPLIED")) {
                out.add(new FaultWindow("F" + n, p[1], text, at, at, t0Ms));
            }
        }
        return out;
    }

    /**
     * @param windows    the run's windows
     * @param atMs       when a gap was seen, epoch ms
     * @param subscriber the subscriber's guest (guest2, ...), null for a fault anywhere (e.g. at the publisher)
     * @return the label of the latest window that began before {@code atMs} and ended less than {@link #RECOVERY_S}
     *         before it, preferring faults on the subscriber's own guest or the publisher's, or {@link #NONE}; a fault
     *         on another subscriber's guest is marked as such
     */
    public static String label(final List<FaultWindow> windows, final long atMs, final String subscriber) {
        for (final boolean mineOnly : new boolean[] {true, false}) { // a fault on the subscriber's own path first
            for (int i = windows.size() - 1; i >= 0; i--) {
                final FaultWindow w = windows.get(i);
                final boolean mine = subscriber == null || w.guest.equals(subscriber) || w.guest.equals("guest1");
                if ((mine || !mineOnly) && w.startMs <= atMs && atMs <= w.endMs + RECOVERY_S * 1000) {
                    return w.id + " " + w.guest + " " + w.text + (mine ? "" : " (on another subscriber's guest)");
                }
            }
        }
        return NONE;
    }

    /**
     * @param windows    the run's windows
     * @param gapEvents  a stream's gap events, {@code epochMs:firstMissing:count:reported} comma separated
     *                   ({@link StreamCheck#gapEvents()})
     * @param subscriber the subscriber's guest
     * @return window label to {gaps, messages lost, reported by the bus}, in first-seen order
     */
    public static Map<String, long[]> attribute(final List<FaultWindow> windows, final String gapEvents, final String subscriber) {
        final Map<String, long[]> out = new LinkedHashMap<>();
        if (gapEvents.isBlank()) {
            return out;
        }
        for (final String ev : gapEvents.split(",")) {
            final String[] f = ev.split(":");
            final long[] sums = out.computeIfAbsent(label(windows, Long.parseLong(f[0]), subscriber), k -> new long[3]);
            sums[0]++;
            sums[1] += Long.parseLong(f[2]);
            sums[2] += Long.parseLong(f[3]);
        }
        return out;
    }

    /** @return e.g. {@code F3 guest3 ip link set eth0 down (10 s): 84.0 s to 94.2 s} */
    public String describe() {
        return String.format(Locale.ROOT, "%s %s %s: %.1f s to %.1f s", id, guest, text, (startMs - t0Ms) / 1000.0, (endMs - t0Ms) / 1000.0);
    }
}
