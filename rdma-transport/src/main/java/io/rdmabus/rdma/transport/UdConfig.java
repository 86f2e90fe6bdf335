package io.rdmabus.rdma.transport;

import io.rdmabus.BusConfigurationException;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Settings of the best-effort UD path (parsed with the other {@code rdma.*} properties by {@link RdmaTransportConfig}).
 *
 * @param mode          how BEST_EFFORT frames travel: UD unicast to each subscriber, UD multicast per topic, or the RC connections
 * @param domain        the bus identity: the Q_Key and the multicast group addresses derive from it
 * @param groupBase     first address of the multicast group range (IPv4, big-endian int)
 * @param groupBits     host bits of the group range (the range holds {@code 2^groupBits} groups; 0 = one group)
 * @param recvBuffers   UD receive buffers pre-posted per transport
 * @param recoveryFrames gap recovery (NAK) for BEST_EFFORT over UD: frames each UD publication retains for NAKs, and the
 *                      most frames a subscriber holds per stream while it waits for a gap's frames; 0 = off
 * @param recoveryMs    how long a subscriber holds a stream's later frames for a missing one before it reports it lost
 */
public record UdConfig(Mode mode, String domain, int groupBase, int groupBits, int recvBuffers, int recoveryFrames, long recoveryMs,
                       Set<String> recoveryTopics) {
    /** BEST_EFFORT path: {@code unicast} (default), {@code multicast} or {@code rc}. */
    public static final String MODE = "rdma.ud.mode";
    /** Bus identity (default {@code rdma-bus}): buses with different identities do not see each other's datagrams. */
    public static final String DOMAIN = "rdma.domain";
    /** Multicast group range as IPv4 CIDR (default {@code 239.192.0.0/16}, organisation-local scope). */
    public static final String GROUPS = "rdma.ud.groups";
    /** UD receive buffers per transport (default 4096). */
    public static final String RECV_BUFFERS = "rdma.ud.recv.buffers";

    /**
     * Gap recovery for BEST_EFFORT over UD (default 0 = off): frames each UD publication retains for NAKs, and the most
     * frames a subscriber holds per stream while it waits for a gap's frames; 1..{@link Wire#NAK_MAX_FRAMES}.
     */
    public static final String RECOVERY_FRAMES = "rdma.ud.recovery.frames";
    /** How long a subscriber waits for a gap's frames before it reports them lost, milliseconds (default 50, 1..10000). */
    public static final String RECOVERY_MS = "rdma.ud.recovery.ms";
    /**
     * The BEST_EFFORT topics gap recovery is for, by name, comma-separated (default empty: every BEST_EFFORT topic once
     * {@link #RECOVERY_FRAMES} is above 0). A publication of a topic not listed retains nothing; a subscriber does not
     * hold or NAK the gaps of a topic not listed.
     */
    public static final String RECOVERY_TOPICS = "rdma.ud.recovery.topics";
    private static final java.util.regex.Pattern TOPIC_NAME = java.util.regex.Pattern.compile("[A-Za-z0-9._-]{1,128}");

    /** How BEST_EFFORT frames travel. */
    public enum Mode {
        /** One UD datagram per subscriber, to the address it announced on the RC control connection. */
        UNICAST,
        /** One UD datagram per frame to the topic's multicast group (rdma_join_multicast). */
        MULTICAST,
        /** Over the RC connections, like reliable frames (drop when a subscriber has no credit). */
        RC
    }

    /** Validates ranges. */
    public UdConfig {
        if (domain == null || domain.isBlank() || domain.length() > 256) {
            throw new BusConfigurationException("Bad value '" + domain + "' for " + DOMAIN + ": expected a non-empty bus identity of at most 256 chars");
        }
        if (groupBits < 0 || groupBits > 24) {
            throw new BusConfigurationException("Bad prefix /" + (32 - groupBits) + " for " + GROUPS + ": expected /8../32");
        }
        if ((groupBase >>> 28) != 0xE) {
            throw new BusConfigurationException("Bad value for " + GROUPS + ": expected an IPv4 multicast range (224.0.0.0/4), e.g. 239.192.0.0/16");
        }
        if (recvBuffers < 2 || recvBuffers > 16384) {
            throw new BusConfigurationException("Bad value '" + recvBuffers + "' for " + RECV_BUFFERS + ": expected 2..16384");
        }
        if (recoveryFrames < 0 || recoveryFrames > Wire.NAK_MAX_FRAMES) {
            throw new BusConfigurationException("Bad value '" + recoveryFrames + "' for " + RECOVERY_FRAMES + ": expected 0 (off) or 1.."
                    + Wire.NAK_MAX_FRAMES + " (frames retained per UD publication and held per subscribed stream)");
        }
        if (recoveryMs < 1 || recoveryMs > 10_000) {
            throw new BusConfigurationException("Bad value '" + recoveryMs + "' for " + RECOVERY_MS + ": expected 1..10000 (milliseconds)");
        }
        recoveryTopics = Set.copyOf(recoveryTopics);
        if (!recoveryTopics.isEmpty() && recoveryFrames == 0) {
            throw new BusConfigurationException(RECOVERY_TOPICS + " names topics " + new java.util.TreeSet<>(recoveryTopics) + " but "
                    + RECOVERY_FRAMES + " is 0 (recovery off): set " + RECOVERY_FRAMES + " to 1.." + Wire.NAK_MAX_FRAMES + " or clear "
                    + RECOVERY_TOPICS);
        }
        if (recoveryFrames > 0 && mode == Mode.RC) {
            throw new BusConfigurationException(RECOVERY_FRAMES + "=" + recoveryFrames + " recovers UD datagrams, but " + MODE
                    + "=rc sends BEST_EFFORT over RC: set " + MODE + " to unicast or multicast, or " + RECOVERY_FRAMES + " to 0");
        }
    }

    /** @return whether gap recovery (NAK) is on ({@link #RECOVERY_FRAMES} above 0) */
    boolean recovery() {
        return recoveryFrames > 0;
    }

    /**
     * @param topicName a BEST_EFFORT topic's name
     * @return whether gap recovery is on for it: on, and {@link #RECOVERY_TOPICS} empty or naming it
     */
    boolean recovers(final String topicName) {
        return recovery() && (recoveryTopics.isEmpty() || recoveryTopics.contains(topicName));
    }

    /** @return the keys with their defaults */
    static Map<String, String> defaults() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(MODE, "unicast");
        m.put(DOMAIN, "rdma-bus");
        m.put(GROUPS, "239.192.0.0/16");
        m.put(RECV_BUFFERS, "4096");
        m.put(RECOVERY_FRAMES, "0");
        m.put(RECOVERY_MS, "50");
        m.put(RECOVERY_TOPICS, "");
        return m;
    }

    /** Parses the UD keys of {@code properties} (other keys are ignored here). */
    static UdConfig parse(final Map<String, String> properties) {
        Map<String, String> d = defaults();
        String modeText = properties.getOrDefault(MODE, d.get(MODE)).trim().toLowerCase(Locale.ROOT);
        Mode mode = switch (modeText) {
            case "unicast" -> Mode.UNICAST;
            case "multicast" -> Mode.MULTICAST;
            case "rc" -> Mode.RC;
            default -> throw new BusConfigurationException("Bad value '" + modeText + "' for " + MODE + ": expected unicast, multicast or rc");
        };
        String domain = properties.getOrDefault(DOMAIN, d.get(DOMAIN)).trim();
        String groups = properties.getOrDefault(GROUPS, d.get(GROUPS)).trim();
        int slash = groups.indexOf('/');
        int base;
        int prefix;
        try {
            if (slash < 0) {
                throw new NumberFormatException();
            }
            base = ipv4(groups.substring(0, slash));
            prefix = Integer.parseInt(groups.substring(slash + 1));
        } catch (NumberFormatException e) {
            throw new BusConfigurationException("Bad value '" + groups + "' for " + GROUPS + ": expected an IPv4 CIDR such as 239.192.0.0/16");
        }
        if (prefix < 8 || prefix > 32) {
            throw new BusConfigurationException("Bad prefix in '" + groups + "' for " + GROUPS + ": expected /8../32");
        }
        int bits = 32 - prefix;
        int mask = bits == 0 ? -1 : -(1 << bits);
        int recvBuffers = intOf(properties, d, RECV_BUFFERS);
        int recoveryFrames = intOf(properties, d, RECOVERY_FRAMES);
        int recoveryMs = intOf(properties, d, RECOVERY_MS);
        Set<String> recoveryTopics = new java.util.LinkedHashSet<>();
        for (String name : properties.getOrDefault(RECOVERY_TOPICS, d.get(RECOVERY_TOPICS)).split(",")) {
            String t = name.trim();
            if (t.isEmpty()) {
                continue;
            }
            if (!TOPIC_NAME.matcher(t).matches()) {
                throw new BusConfigurationException("Bad topic name '" + t + "' in " + RECOVERY_TOPICS
                        + ": expected comma-separated topic names of 1..128 characters A-Z a-z 0-9 . _ -");
            }
            recoveryTopics.add(t);
        }
        return new UdConfig(mode, domain, base & mask, Math.min(bits, 24), recvBuffers, recoveryFrames, recoveryMs, recoveryTopics);
    }

    private static int intOf(final Map<String, String> properties, final Map<String, String> defaults, final String key) {
        String v = properties.getOrDefault(key, defaults.get(key)).trim();
        try {
            return Integer.parseInt(v);
        } catch (NumberFormatException e) {
            throw new BusConfigurationException("Bad value '" + v + "' for " + key + ": expected an integer");
        }
    }

    /**
     * The Q_Key of this bus identity: the first 31 bits of SHA-256("rdma-bus qkey\0" + domain). The high bit stays
     * clear (Q_Keys with it set are controlled keys that only privileged QPs may send), and the well-known rdma_cm
     * key 0x01234567 is avoided, so a bus never accepts datagrams meant for plain rdma_cm UD users either.
     *
     * @return the Q_Key
     */
    int qkey() {
        return qkeyOf(digest("rdma-bus qkey\0" + domain));
    }

    /**
     * The Q_Key of a bus with a bus secret: the first 31 bits of HMAC-SHA256(secret, "rdma-bus qkey\0" + domain). A
     * node without the secret cannot compute it, so its UD QP (with the plain {@link #qkey()}) never receives the bus's
     * datagrams, not even from a multicast group it joined: the device drops them. A filter, not encryption: RoCE
     * datagrams cross the wire in clear, and 31 bits do not stand up to someone who sees them.
     *
     * @param secret the bus secret's bytes, or null without one
     * @return the Q_Key
     */
    int qkey(final byte[] secret) {
        if (secret == null) {
            return qkey();
        }
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            byte[] d = mac.doFinal(("rdma-bus qkey\0" + domain).getBytes(StandardCharsets.UTF_8));
            return qkeyOf(((d[0] & 0xFF) << 24) | ((d[1] & 0xFF) << 16) | ((d[2] & 0xFF) << 8) | (d[3] & 0xFF));
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is always available", e);
        }
    }

    private static int qkeyOf(final int hash) {
        int k = hash & 0x7FFFFFFF;
        return k == 0x01234567 ? k ^ 1 : k;
    }

    /**
     * The multicast group of a topic: {@code groupBase + (hash(domain, topic) mod 2^groupBits)}. Deterministic, so
     * every node of the bus computes the same group without asking anyone. Two topics may share a group (the envelope's
     * topic id keeps them apart); two buses may too (their Q_Keys keep them apart).
     *
     * @param topicName the topic's name
     * @return the group as a big-endian IPv4 int
     */
    int groupOf(final String topicName) {
        if (groupBits == 0) {
            return groupBase;
        }
        int h = digest("rdma-bus group\0" + domain + "\0" + topicName);
        return groupBase | (h & ((1 << groupBits) - 1));
    }

    /**
     * The discovery control group of this bus identity ({@code rdma.discovery=multicast}, unless
     * {@code rdma.discovery.group} names one): {@code groupBase + (hash("rdma-bus discovery", domain) mod 2^groupBits)},
     * inside {@code rdma.ud.groups}, so every node of the bus computes the same group alone. It may coincide with a
     * topic's group: the envelope type (ADVERT, not DATA) keeps adverts and frames apart.
     *
     * @return the group as a big-endian IPv4 int
     */
    int discoveryGroup() {
        if (groupBits == 0) {
            return groupBase;
        }
        int h = digest("rdma-bus discovery\0" + domain);
        return groupBase | (h & ((1 << groupBits) - 1));
    }

    static String ipv4Text(final int ip) {
        return (ip >>> 24) + "." + ((ip >>> 16) & 0xFF) + "." + ((ip >>> 8) & 0xFF) + "." + (ip & 0xFF);
    }

    static int ipv4(final String text) {
        String[] parts = text.trim().split("\\.");
        if (parts.length != 4) {
            throw new NumberFormatException(text);
        }
        int ip = 0;
        for (String p : parts) {
            int b = Integer.parseInt(p);
            if (b < 0 || b > 255) {
                throw new NumberFormatException(text);
            }
            ip = (ip << 8) | b;
        }
        return ip;
    }

    private static int digest(final String s) {
        try {
            byte[] d = MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8));
            return ((d[0] & 0xFF) << 24) | ((d[1] & 0xFF) << 16) | ((d[2] & 0xFF) << 8) | (d[3] & 0xFF);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is always available", e);
        }
    }
}
