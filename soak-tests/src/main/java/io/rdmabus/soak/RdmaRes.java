package io.rdmabus.soak;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * RDMA resource counts of one device as {@code rdma res show} (iproute2) prints them, e.g.
 * {@code 0: rxe0: pd 2 cq 1 qp 1 cm_id 0 mr 0 ctx 0 srq 0}. The counts are system-wide (every process, and the
 * kernel's own objects), so compare a snapshot with a baseline taken on the same machine, not with zero.
 *
 * @param device the device name
 * @param counts resource name to count, in the tool's order
 */
public record RdmaRes(String device, Map<String, Long> counts) {
    /** The resources a leak would show in. */
    public static final String[] WATCHED = {"pd", "cq", "qp", "cm_id", "mr"};

    /**
     * Runs {@code rdma res show} and returns the line of {@code device}.
     *
     * @param device e.g. {@code rxe0}
     * @return the counts
     * @throws IllegalStateException if the tool fails or prints no line for the device
     */
    public static RdmaRes read(final String device) {
        final String out = run("rdma", "res", "show");
        for (final String line : out.split("\n")) {
            final RdmaRes res = parse(line, device);
            if (res != null) {
                return res;
            }
        }
        throw new IllegalStateException("rdma res show printed no line for " + device + ":\n" + out);
    }

    /**
     * @param line   one line of {@code rdma res show}
     * @param device the device wanted
     * @return its counts, or null if the line is about another device
     */
    public static RdmaRes parse(final String line, final String device) {
        final String[] words = line.trim().split("\\s+");
        int at = -1;
        for (int i = 0; i < words.length; i++) {
            if (words[i].equals(device + ":") || words[i].equals(device)) {
                at = i + 1;
                break;
            }
        }
        if (at < 0) {
            return null;
        }
        final Map<String, Long> counts = new LinkedHashMap<>();
        for (int i = at; i + 1 < words.length; i += 2) {
            try {
                counts.put(words[i], Long.parseLong(words[i + 1]));
            } catch (final NumberFormatException ex) {
                break;
            }
        }
        return new RdmaRes(device, counts);
    }

    /** @param name resource @return its count, -1 if the tool did not print it */
    public long count(final String name) {
        return counts.getOrDefault(name, -1L);
    }

    /**
     * @param baseline an earlier snapshot
     * @return the watched resources that are above the baseline, e.g. {@code "qp 3>1"}, or empty
     */
    public String growthOver(final RdmaRes baseline) {
        final StringBuilder sb = new StringBuilder();
        for (final String name : WATCHED) {
            if (count(name) > baseline.count(name)) {
                sb.append(sb.isEmpty() ? "" : ", ").append(name).append(' ').append(count(name)).append('>').append(baseline.count(name));
            }
        }
        return sb.toString();
    }

    /** @return the watched counts, e.g. {@code "pd=2 cq=1 qp=1 cm_id=0 mr=0"} */
    public String brief() {
        final StringBuilder sb = new StringBuilder();
        for (final String name : WATCHED) {
            sb.append(sb.isEmpty() ? "" : " ").append(name).append('=').append(count(name));
        }
        return sb.toString();
    }

    private static String run(final String... command) {
        try {
            final Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            final String text;
            try (InputStream in = p.getInputStream()) {
                text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException(String.join(" ", command) + " did not finish in 10 s");
            }
            if (p.exitValue() != 0) {
                throw new IllegalStateException(String.join(" ", command) + " exited " + p.exitValue() + ": " + text);
            }
            return text;
        } catch (final IOException ex) {
            throw new IllegalStateException("cannot run " + String.join(" ", command) + " (iproute2's rdma tool): " + ex, ex);
        } catch (final InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted running " + String.join(" ", command), ex);
        }
    }
}
