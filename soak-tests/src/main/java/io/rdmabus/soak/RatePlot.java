package io.rdmabus.soak;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.RenderingHints;
import java.awt.image.BufferedImage;
import java.io.File;
import java.io.IOException;
import java.util.List;
import java.util.Map;

import javax.imageio.ImageIO;

/** Message rate over time, one line per subscriber process, with vertical fault markers (Java2D, headless). */
final class RatePlot {
    private static final int WIDTH = 1200;
    private static final int HEIGHT = 620;
    private static final int LEFT = 80;
    private static final int RIGHT = 30;
    private static final int TOP = 60;
    private static final int BOTTOM = 120;
    private static final Color[] COLORS = {new Color(0x1f77b4), new Color(0x2ca02c), new Color(0xff7f0e), new Color(0x9467bd),
        new Color(0x8c564b), new Color(0x17becf)};

    /** A fault marker: seconds since the start, short label. */
    record Marker(double atS, String label) {
    }

    private RatePlot() {
    }

    /**
     * @param title  chart title
     * @param series label to points {seconds since start, messages/s}
     * @param faults markers
     * @param file   PNG to write
     * @throws IOException if it cannot be written
     */
    static void render(final String title, final Map<String, List<double[]>> series, final List<Marker> faults, final File file) throws IOException {
        System.setProperty("java.awt.headless", "true");
        final BufferedImage image = new BufferedImage(WIDTH, HEIGHT, BufferedImage.TYPE_INT_RGB);
        final Graphics2D g = image.createGraphics();
        g.setRenderingHint(RenderingHints.KEY_ANTIALIASING, RenderingHints.VALUE_ANTIALIAS_ON);
        g.setColor(Color.WHITE);
        g.fillRect(0, 0, WIDTH, HEIGHT);
        double maxX = 1;
        double maxY = 1;
        double minX = 0;
        for (final List<double[]> pts : series.values()) {
            for (final double[] p : pts) {
                maxX = Math.max(maxX, p[0]);
                minX = Math.min(minX, p[0]);
                maxY = Math.max(maxY, p[1]);
            }
        }
        for (final Marker m : faults) {
            maxX = Math.max(maxX, m.atS());
        }
        maxY *= 1.1;
        final int w = WIDTH - LEFT - RIGHT;
        final int h = HEIGHT - TOP - BOTTOM;
        final double x0 = minX;
        final double xSpan = maxX - x0;
        final double yMax = maxY;
        final java.util.function.DoubleUnaryOperator px = x -> LEFT + (x - x0) / xSpan * w;
        final java.util.function.DoubleUnaryOperator py = y -> TOP + h - y / yMax * h;
        g.setColor(Color.BLACK);
        g.setFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
        g.drawString(title, LEFT, 30);
        g.setFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        g.drawRect(LEFT, TOP, w, h);
        for (int k = 0; k <= 5; k++) {
            final double y = yMax * k / 5;
            final int yy = (int) py.applyAsDouble(y);
            g.setColor(new Color(0xDDDDDD));
            g.drawLine(LEFT, yy, LEFT + w, yy);
            g.setColor(Color.BLACK);
            g.drawString(String.format(java.util.Locale.ROOT, "%.0f", y), 10, yy + 4);
            final double x = x0 + xSpan * k / 5;
            g.drawString(String.format(java.util.Locale.ROOT, "%.0f s", x), (int) px.applyAsDouble(x) - 15, TOP + h + 18);
        }
        g.drawString("messages/s received (quotes + trades) per subscriber JVM; x: seconds since the traffic window opened", LEFT, TOP + h + 36);
        int c = 0;
        int legendY = TOP + h + 56;
        int legendX = LEFT;
        for (final Map.Entry<String, List<double[]>> e : series.entrySet()) {
            final Color color = COLORS[c++ % COLORS.length];
            g.setColor(color);
            g.setStroke(new BasicStroke(1.5f));
            double[] prev = null;
            for (final double[] p : e.getValue()) {
                if (prev != null) {
                    g.drawLine((int) px.applyAsDouble(prev[0]), (int) py.applyAsDouble(prev[1]), (int) px.applyAsDouble(p[0]), (int) py.applyAsDouble(p[1]));
                }
                prev = p;
            }
            g.fillRect(legendX, legendY - 9, 10, 10);
            g.setColor(Color.BLACK);
            g.drawString(e.getKey(), legendX + 14, legendY);
            legendX += 24 + g.getFontMetrics().stringWidth(e.getKey());
            if (legendX > WIDTH - 200) {
                legendX = LEFT;
                legendY += 16;
            }
        }
        g.setStroke(new BasicStroke(1f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {5f, 4f}, 0f));
        int n = 0;
        for (final Marker m : faults) {
            final int xx = (int) px.applyAsDouble(m.atS());
            g.setColor(new Color(0xd62728));
            g.drawLine(xx, TOP, xx, TOP + h);
            g.drawString("F" + (++n), xx + 3, TOP + 14 + (n % 3) * 14);
        }
        g.setColor(Color.BLACK);
        int ly = legendY + 18;
        n = 0;
        final StringBuilder line = new StringBuilder();
        for (final Marker m : faults) {
            final String text = "F" + (++n) + " " + m.label();
            if (g.getFontMetrics().stringWidth(line + text) > w) {
                g.drawString(line.toString(), LEFT, ly);
                ly += 14;
                line.setLength(0);
            }
            line.append(text).append("   ");
        }
        g.drawString(line.toString(), LEFT, ly);
        g.dispose();
        ImageIO.write(image, "png", file);
    }
}
