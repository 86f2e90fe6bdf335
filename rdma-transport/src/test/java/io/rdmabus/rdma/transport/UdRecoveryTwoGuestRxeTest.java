package io.rdmabus.rdma.transport;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmabus.Delivery;
import io.rdmabus.IdleStrategies;
import io.rdmabus.frame.FrameHeader;
import io.rdmabus.spi.StaticSeedDiscovery;
import io.rdmabus.spi.SubscriptionSink;
import io.rdmabus.spi.TopicDescriptor;
import io.rdmabus.spi.TransportContext;
import io.rdmabus.spi.TransportPublication;
import io.rdmabus.spi.TransportStatus;

import java.io.IOException;
import java.nio.file.Files;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import org.agrona.DirectBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * UD gap recovery (NAK) across two rxe guests under real packet loss: guest 2 publishes 20,000 small BEST_EFFORT frames
 * on each of two topics over UD unicast, paced, with {@code tc netem loss 5%} on its eth0 for the run (the datagrams, and
 * the RC messages that carry the recovered frames, cross a lossy link), both from one transport whose recovery is on
 * for topic 41 only ({@code rdma.ud.recovery.topics}): it retains no frame of topic 42 and answers no NAK for it, so
 * the subscriber gives those gaps up at its time bound. Guest 1
 * subscribes both on one transport with recovery on. From the sequence numbers its sinks see, guest 1 checks: nothing
 * delivered twice or out of order; the frames the sinks see missing are exactly the ones the transport gave up or could
 * not ask for; every gap frame ended recovered, given up, not recoverable or filled by a late datagram; topic 41 lost
 * nothing it could recover in time, topic 42 reported its gaps lost. It prints the counts.
 */
@Tag("rxe")
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class UdRecoveryTwoGuestRxeTest {
    private static final int FRAMES = 20_000;
    private static final int PORT = 19921;
    private static final int TOPIC_ID = 41;
    private static final int TOPIC_PLAIN = 42;
    private static final long WAIT_MS = 300_000;
    private static final String LOSS = "5%";

    @Test
    void lostDatagramsAreRecoveredInOrderOrReportedLost() throws Exception {
        LabGuests.subscriberOnGuest1PublisherOnGuest2((self, subscriberIp, errors) -> subscribe(self, errors), UdRecoveryTwoGuestRxeTest::publish);
    }

    private static RdmaTransport start(final String name, final String self, final int port, final String recoveryTopics, final List<String> seeds,
                                       final List<Throwable> errors) {
        Map<String, String> p = new HashMap<>();
        p.put(RdmaTransportConfig.CM_PORT_BASE, String.valueOf(port));
        p.put(RdmaTransportConfig.CM_PORT_RANGE, "1");
        p.put(RdmaTransportConfig.BIND, self);
        p.put(UdConfig.DOMAIN, "nak-recovery-lab"); // one bus (same Q_Key on both guests), not the other lab tests' identity
        p.put(UdConfig.RECOVERY_FRAMES, "512");
        p.put(UdConfig.RECOVERY_TOPICS, recoveryTopics);
        p.put(UdConfig.RECOVERY_MS, "500");
        // a lost RC packet is retransmitted after 67 ms instead of the kernel's ~2 s, so recovered frames beat the bound
        p.put(RdmaTransportConfig.ACK_TIMEOUT_EXP, "14");
        RdmaTransport t = new RdmaTransport(RdmaTransportConfig.parse(p));
        t.start(new TransportContext(name, IdleStrategies.supplier("backoff"), errors::add, new StaticSeedDiscovery(Map.of("rdma", seeds))));
        System.err.println(name + " on " + t.listenEndpoint() + ": " + t.udEndpoint());
        return t;
    }

    private static void subscribe(final String self, final List<Throwable> errors) throws Exception {
        RdmaTransport t = start("g1", self, PORT, "", List.of(), errors); // every topic
        try {
            SequenceSink sink = new SequenceSink();
            SequenceSink plain = new SequenceSink();
            t.addSubscription(new TopicDescriptor("nak-ud", TOPIC_ID, Delivery.BEST_EFFORT, 1000), sink);
            t.addSubscription(new TopicDescriptor("nak-ud-plain", TOPIC_PLAIN, Delivery.BEST_EFFORT, 1000), plain);
            LabGuests.signal("nak-ready");
            LabGuests.awaitFile("nak-published", WAIT_MS);
            long published = Long.parseLong(Files.readString(LabGuests.shared("nak-published")).trim());
            UdRecoveryReceiver r = t.udEndpoint().recoveryReceiver;
            // settled: nothing reached the sink for 2 s, four times rdma.ud.recovery.ms, so no frame is held any more (a
            // hold ends within the bound, by delivering); the tail lost after the last delivered frame is revealed by none
            await("the subscriber to settle").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(200))
                    .until(() -> sink.delivered > 0 && plain.delivered > 0 && sink.quietFor(2) && plain.quietFor(2));
            LabGuests.signal("nak-done");
            Map<String, Long> c = t.counters();
            System.err.println("UD gap recovery under netem loss " + LOSS + " on the publisher's eth0: published " + published + " per topic; "
                    + "of the topic with recovery: delivered " + sink.delivered + " (first " + sink.first + ", last " + sink.last
                    + "), reported lost at the sink " + sink.lost + "; of the topic without: delivered " + plain.delivered + " (first "
                    + plain.first + ", last " + plain.last + "), reported lost " + plain.lost + "; both streams: gap frames " + r.gapFrames()
                    + " = recovered " + r.recovered() + " + given up " + r.givenUp() + " + not recoverable "
                    + r.notRecoverable() + " + filled by late datagrams " + r.filledByUd() + "; NAKs sent " + r.naksSent()
                    + "; duplicates dropped " + r.duplicatesDropped() + "; counters " + c);
            for (SequenceSink s : List.of(sink, plain)) {
                assertEquals(0, s.violations, "frames delivered twice or out of order: " + s.firstViolation);
                assertEquals(s.last - s.first + 1, s.delivered + s.lost, "every sequence from the first to the last delivered or reported lost");
            }
            assertEquals(r.givenUp() + r.notRecoverable(), sink.lost + plain.lost,
                    "the sinks see lost exactly what the transport gave up or could not ask for");
            assertEquals(r.gapFrames(), r.recovered() + r.givenUp() + r.notRecoverable() + r.filledByUd(), "every gap frame accounted for");
            assertTrue(r.gapFrames() > 0, "netem loss " + LOSS + " made no gap: the test did not test recovery");
            assertTrue(r.recovered() > 0, "nothing was recovered");
            assertTrue(plain.lost > 0 && r.givenUp() > 0, "the gaps of the topic without recovery at the publisher were not given up and reported lost");
            assertEquals(r.recovered(), c.get("udFramesRecovered"));
            assertEquals(r.givenUp(), c.get("udFramesGivenUp"));
            assertEquals(r.naksSent(), c.get("udNaksSent"));
            Thread.sleep(2000); // let guest 2 see the signal before our connection goes
        } catch (Exception | AssertionError ex) {
            if (!Files.exists(LabGuests.shared("nak-done"))) {
                LabGuests.publish("nak-done", "guest 1 failed: " + ex); // guest 2 ends now instead of after its wait
            }
            throw ex;
        } finally {
            t.close();
        }
    }

    private static void publish(final String self, final String subscriberIp, final List<Throwable> errors) throws Exception {
        LabGuests.awaitFile("nak-ready", WAIT_MS);
        RdmaTransport t = start("g2", self, PORT, "nak-ud", List.of(subscriberIp + ":" + PORT), errors); // topic 41 only
        boolean lossy = false;
        try {
            TransportPublication pub = t.addPublication(new TopicDescriptor("nak-ud", TOPIC_ID, Delivery.BEST_EFFORT, 1000));
            TransportPublication plain = t.addPublication(new TopicDescriptor("nak-ud-plain", TOPIC_PLAIN, Delivery.BEST_EFFORT, 1000));
            await("the subscriber to be known").atMost(Duration.ofSeconds(120)).pollInterval(Duration.ofMillis(50))
                    .until(() -> pub.isConnected() && plain.isConnected());
            run("modprobe", "sch_netem");
            run("tc", "qdisc", "add", "dev", "eth0", "root", "netem", "loss", LOSS);
            lossy = true;
            long t0 = System.nanoTime();
            long deadline = t0 + TimeUnit.MILLISECONDS.toNanos(WAIT_MS);
            long seq = 0;
            long refused = 0;
            long seqPlain = 0;
            while ((seq < FRAMES || seqPlain < FRAMES) && System.nanoTime() < deadline) {
                if (seq < FRAMES && offer(pub, TOPIC_ID, seq)) {
                    seq++;
                } else if (seq < FRAMES) {
                    refused++;
                }
                if (seqPlain < FRAMES && offer(plain, TOPIC_PLAIN, seqPlain)) {
                    seqPlain++;
                } else if (seqPlain < FRAMES) {
                    refused++;
                }
                LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(500)); // modest: about 1000-2000 frames/s in a TCG guest
            }
            System.err.println("guest 2 published " + seq + " + " + seqPlain + " frames in " + (System.nanoTime() - t0) / 1_000_000 + " ms (" + refused
                    + " claims refused); counters " + t.counters());
            LabGuests.publish("nak-published", Long.toString(seq));
            assertEquals(List.of((long) FRAMES, (long) FRAMES), List.of(seq, seqPlain), "published within " + WAIT_MS + " ms (claims refused: "
                    + refused + ")");
            LabGuests.awaitFile("nak-done", WAIT_MS);
            String done = Files.readString(LabGuests.shared("nak-done")).trim();
            assertEquals("1", done, "guest 1 signalled nak-done without its subscriber settling");
            System.err.println("guest 2 after the subscriber settled: counters " + t.counters());
            assertTrue(t.counters().get("udNaksServed") > 0, "no NAK reached the publisher");
            pub.close();
            plain.close();
        } finally {
            if (lossy) {
                run("tc", "qdisc", "del", "dev", "eth0", "root");
            }
            t.close();
        }
    }

    private static boolean offer(final TransportPublication pub, final int topicId, final long seq) {
        if (pub.tryClaim(FrameHeader.LENGTH + 8) != TransportStatus.OK) {
            return false;
        }
        FrameHeader.write(pub.claim().buffer(), pub.claim().offset(), FrameHeader.FLAGS_UNFRAGMENTED, FrameHeader.LENGTH + 8, topicId, 7, seq, 0);
        pub.claim().commit();
        return true;
    }

    private static void run(final String... command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(command).inheritIO().start();
        assertTrue(p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0, String.join(" ", command) + " failed");
    }

    /** Records the sequence of every frame the transport hands over (poller thread), and whether it moved forward. */
    private static final class SequenceSink extends AcceptingSink {
        volatile long delivered;
        volatile long lost;
        volatile long first = -1;
        volatile long last = -1;
        volatile long violations;
        volatile String firstViolation = "none";
        private volatile long lastArrivalNs = System.nanoTime();

        @Override
        public int onFrame(final DirectBuffer buffer, final int offset, final int length) {
            long seq = FrameHeader.sequence(buffer, offset);
            lastArrivalNs = System.nanoTime();
            if (first < 0) {
                first = seq;
            } else if (seq <= last) {
                if (violations++ == 0) {
                    firstViolation = "sequence " + seq + " after " + last;
                }
                return SubscriptionSink.CONTINUE;
            } else {
                lost += seq - last - 1;
            }
            last = seq;
            delivered++;
            return SubscriptionSink.CONTINUE;
        }

        boolean quietFor(final long seconds) {
            return System.nanoTime() - lastArrivalNs > TimeUnit.SECONDS.toNanos(seconds);
        }
    }
}
