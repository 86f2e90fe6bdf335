package io.rdmabus.benchmarks;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.File;
import java.io.IOException;
import java.util.Map;

import javax.imageio.ImageIO;

import org.HdrHistogram.Histogram;

/**
 * Renders latency-by-percentile curves (the usual HdrHistogram view: x = percentile on a "number of nines" log scale,
 * y = latency) into a PNG with Java2D, so the benchmark run needs no external plotting tool. Public for the soak
 * report (soak-tests), which draws one-way latencies with it.
 */
public final class PercentilePlot {
    private static final Color[] COLORS = {new Color(0x1f77b4), new Color(0xd62728), new Color(0x2ca02c), new Color(0xff7f0e),
        new Color(0x9467bd), new Color(0x8c564b)};
    private static final double MAX_NINES = 4; // up to 99.99%
    private static final int WIDTH = 1000;
    private static final int HEIGHT = 620;
    private static final int LEFT = 90;
    private static final int RIGHT = 30;
    private static final int TOP = 60;
    private static final int BOTTOM = 70;

    private PercentilePlot() {
    }

    /**
     * @param title  the chart title
     * @param series label -> round-trip histogram in ns (iteration order = legend order)
     * @param file   the PNG to write
     * @throws IOException if it cannot be written
     */
    public static void render(final String title, final Map<String, Histogram> series, final File file) throws IOException {
        render(title, "round-trip latency (us, log scale)", series, file);
    }

    /**
     * @param title      the chart title
     * @param yAxisLabel what the latencies are, e.g. "one-way latency (us, log scale)"
     * @param series     label -> latency histogram in ns (iteration order = legend order)
     * @param file       the PNG to write
     * @throws IOException if it cannot be written
     */
    public static void render(final String title, final String yAxisLabel, final Map<String, Histogram> series, final File file) throws IOException {
        System.setProperty("java.awt.headless", "true");
        final BufferedImage image = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
        final Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setRenderingHint(RenderingHints.KEY_TEXT_ANTIALIASING, RenderingHints.VALUE_TEXT_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, WIDTH, HEIGHT);
        final int plotW = WIDTH - LEFT - RIGHT;
        final int plotH = HEIGHT - TOP - BOTTOM;
        // log scale: tails are orders of magnitude above the median on a shared machine
        double maxUs = 1;
        double minUs = Double.MAX_VALUE;
        for (final Histogram h : series.values()) {
            maxUs = Math.max(maxUs, h.getMaxValue() / 1e3);
            minUs = Math.min(minUs, Math.max(0.1, h.getMinValue() / 1e3));
        }
        final int lowDecade = (int) Math.floor(Math.log10(minUs));
        final int highDecade = Math.max(lowDecade + 1, (int) Math.ceil(Math.log10(maxUs)));
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 18));
        g.setColor(Color.BLACK);
        g.drawString(title, LEFT, 35);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        // grid and axes
        for (int nines = 0; nines <= MAX_NINES; nines++) {
            final int x = LEFT + (int) (plotW * nines / MAX_NINES);
            g.setColor(new Color(0xDDDDDD));
            g.drawLine(x, TOP, x, TOP + plotH);
            g.setColor(Color.BLACK);
            final String label = switch (nines) {
                case 0 -> "0%";
                case 1 -> "90%";
                case 2 -> "99%";
                case 3 -> "99.9%";
                default -> "99.99%";
            };
            g.drawString(label, x - g.getFontMetrics().stringWidth(label) / 2, TOP + plotH + 20);
        }
        for (int decade = lowDecade; decade <= highDecade; decade++) {
            final int y = TOP + plotH - plotH * (decade - lowDecade) / (highDecade - lowDecade);
            g.setColor(new Color(0xDDDDDD));
            g.drawLine(LEFT, y, LEFT + plotW, y);
            g.setColor(Color.BLACK);
            final String label = decade < 0 ? String.format("%." + (-decade) + "f", Math.pow(10, decade)) : String.format("%,.0f", Math.pow(10, decade));
            g.drawString(label, LEFT - 10 - g.getFontMetrics().stringWidth(label), y + 5);
        }
        g.drawRect(LEFT, TOP, plotW, plotH);
        g.drawString("percentile", LEFT + plotW / 2 - 30, HEIGHT - 25);
        final Graphics2D rotated = (Graphics2D) g.create();
        rotated.rotate(-Math.PI / 2);
        rotated.drawString(yAxisLabel, -(TOP + plotH / 2) - 70, 25);
        rotated.dispose();
        // curves
        int index = 0;
        for (final Map.Entry<String, Histogram> e : series.entrySet()) {
            final Color color = COLORS[index % COLORS.length];
            g.setColor(color);
            g.setStroke(new BasicStroke(2.2f));
            int prevX = -1;
            int prevY = -1;
            for (int px = 0; px <= plotW; px += 2) {
                final double nines = MAX_NINES * px / plotW;
                final double percentile = 100 - 100 * Math.pow(10, -nines);
                final double us = e.getValue().getValueAtPercentile(percentile) / 1e3;
                final int x = LEFT + px;
                final double scaled = (Math.log10(Math.max(us, Math.pow(10, lowDecade))) - lowDecade) / (highDecade - lowDecade);
                final int y = TOP + plotH - (int) Math.min(plotH, plotH * scaled);
                if (prevX >= 0) {
                    g.drawLine(prevX, prevY, x, y);
                }
                prevX = x;
                prevY = y;
            }
            final Histogram h = e.getValue();
            final String legend = String.format("%s  (p50 %.0f us, p99 %.0f us, n=%d)", e.getKey(), h.getValueAtPercentile(50) / 1e3,
                h.getValueAtPercentile(99) / 1e3, h.getTotalCount());
            g.fillRect(LEFT + 15, TOP + 15 + index * 22, 18, 4);
            g.setColor(Color.BLACK);
            g.drawString(legend, LEFT + 40, TOP + 21 + index * 22);
            index++;
        }
        g.dispose();
        final File parent = file.getAbsoluteFile().getParentFile();
        if (parent != null && !parent.isDirectory() && !parent.mkdirs()) {
            throw new IOException("cannot create " + parent);
        }
        ImageIO.write(image, "png", file);
    }
}
