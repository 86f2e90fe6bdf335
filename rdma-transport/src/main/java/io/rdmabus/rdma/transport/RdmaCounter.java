package io.rdmabus.rdma.transport;

import io.rdmabus.spi.CounterDescriptor;

/**
 * The rdma transport's counters as data, one descriptor each (as Aeron's {@code SystemCounterDescriptor}): its id (the
 * index in {@link TransportCounters} and the order of {@link RdmaTransport#counters()}), the name
 * {@code BusStats.transportCounters()} and the CLI show, what it counts and which thread writes it. {@link #scope}
 * says when the transport reports it. The command-queue, UD and UD gap recovery counters are kept by their owners
 * ({@link CommandQueue}, {@link UdEndpoint}, {@link UdRecoveryReceiver}, {@link UdRecoveryServer}); {@link RdmaTransport#counters()}
 * reads those there.
 */
enum RdmaCounter implements CounterDescriptor {
    MALFORMED_MESSAGES("malformedMessages", Scope.ALWAYS, "poller",
            "RC messages dropped as malformed (truncated, unknown type, topic 0, too long, credits out of range); each also "
                    + "reported to the bus's error handler"),
    REFUSED_PEERS("refusedPeers", Scope.ALWAYS, "any",
            "peers refused: no or wrong bus secret, AUTH missing or wrong, a peer claiming this node's id (logged at most "
                    + "once per 10 s)"),
    POLLER_PROXY_FAILS("pollerProxyFails", Scope.ALWAYS, "any",
            "commands to the poller that found its bounded queue full (or its overflow in use): they waited in the overflow"),
    CM_PROXY_FAILS("cmProxyFails", Scope.ALWAYS, "any",
            "commands to the cm agent that found its bounded queue full (or its overflow in use): they waited in the overflow"),
    POLLER_COMMANDS_DISCARDED("pollerCommandsDiscarded", Scope.ALWAYS, "any", "commands to the poller left when the transport closed: not run"),
    CM_COMMANDS_DISCARDED("cmCommandsDiscarded", Scope.ALWAYS, "any", "commands to the cm agent left when the transport closed: not run"),
    TOPIC_WINDOW_VIOLATIONS("topicWindowViolations", Scope.ALWAYS, "poller",
            "connections closed because the peer broke a topic window: sent more frames of one topic than the window this node "
                    + "granted, or returned more of a window (TOPIC_CREDIT) than it was sent"),
    RESUME_REQUESTS("resumeRequests", Scope.STARTED, "poller", "RESUME sent as a subscriber after a reconnect"),
    RESUMES_SERVED("resumesServed", Scope.STARTED, "poller", "resumes served as a publisher"),
    FRAMES_REPLAYED("framesReplayed", Scope.STARTED, "poller", "retained frames re-posted to resumed subscribers"),
    RESUMES_REFUSED("resumesRefused", Scope.STARTED, "poller",
            "RESUME_FAILED sent: the stream is outside rdma.retention.frames or its session is gone"),
    RESUME_FAILURES("resumeFailures", Scope.STARTED, "poller",
            "RESUME_FAILED received: a local subscription failed with RetentionExceededException"),
    STREAM_STARTS_SENT("streamStartsSent", Scope.STARTED, "poller",
            "START sent as a publisher: where a RELIABLE publication's stream starts on a connection, before its first DATA there"),
    STREAM_STARTS_RECEIVED("streamStartsReceived", Scope.STARTED, "poller",
            "START received as a subscriber (kept as the stream's resume point unless it has one already)"),
    KEEPALIVE_SENDS("keepaliveSends", Scope.STARTED, "poller",
            "control messages sent on connections with nothing in flight (rdma.keepalive.ms)"),
    PEERS_LOST("peersLost", Scope.STARTED, "poller", "connections closed because the peer stopped acknowledging"),
    SENDS_STALLED("sendsStalled", Scope.STARTED, "poller",
            "connections closed because a signalled send got no completion for rdma.send.stall.ms"),
    CONNECTIONS_REPLACED("connectionsReplaced", Scope.STARTED, "cm agent",
            "a peer dialled again while this node still held the connection it had accepted from it: the old one is closed"),
    DISCONNECTS_DEFERRED("disconnectsDeferred", Scope.STARTED, "cm agent",
            "failed connections whose cm id, and so their DREQ, waited for the port to be ACTIVE again"),
    CM_STALLS("cmStalls", Scope.STARTED, "poller",
            "steps of the cm thread stuck beyond rdma.connect.timeout.ms + 10 s, each logged with its stack"),
    ADVERTS_SENT("advertsSent", Scope.DISCOVERY, "cm agent", "advert datagrams posted to the control group, one per page per interval"),
    ADVERTS_RECEIVED("advertsReceived", Scope.DISCOVERY, "cm agent", "well-formed, verified adverts of other nodes"),
    ADVERTS_REJECTED("advertsRejected", Scope.DISCOVERY, "cm agent",
            "well-formed adverts without a valid bus-secret MAC, or with one while this node has no secret: dropped, never dialled"),
    ADVERTS_MALFORMED("advertsMalformed", Scope.DISCOVERY, "cm agent", "adverts that failed a bounds check: dropped"),
    ADVERTS_DROPPED("advertsDropped", Scope.DISCOVERY, "cm agent (plus the UD endpoint's own count)",
            "adverts dropped because the poller's queue to the cm agent was full, or the advertiser table is"),
    DISCOVERED_PEERS("discoveredPeers", Scope.DISCOVERY, "cm agent",
            "advertisers heard within rdma.discovery.interval.ms x 5 (a gauge)"),
    DISCOVERY_DIALS("discoveryDials", Scope.DISCOVERY, "cm agent", "dials of discovered advertisers, retries included"),
    ADVERT_TOPICS_OMITTED("advertTopicsOmitted", Scope.DISCOVERY, "cm agent",
            "published topics beyond what the adverts carry: their subscribers need seeds"),
    UD_DELIVERED("udDelivered", Scope.UD, "poller", "UD frames delivered to local subscriptions (with gap recovery, recovered ones too)"),
    UD_MALFORMED("udMalformed", Scope.UD, "poller", "UD datagrams too short or long, or not a DATA envelope"),
    UD_UNKNOWN_TOPIC("udUnknownTopic", Scope.UD, "poller", "UD datagrams of a topic with no local subscription"),
    UD_OWN_LOOPBACK("udOwnLoopback", Scope.UD, "poller", "this node's own multicast datagrams, looped back"),
    UD_SINK_DROPPED("udSinkDropped", Scope.UD, "poller", "UD frames a back-pressuring sink did not take"),
    UD_RECEIVE_ERRORS("udReceiveErrors", Scope.UD, "poller", "failed UD receive completions"),
    UD_FOREIGN_PEERS("udForeignPeers", Scope.UD, "poller", "subscribers announcing another rdma.domain"),
    UD_DATAGRAMS_SENT("udDatagramsSent", Scope.UD, "publishers",
            "UD datagrams posted by the BEST_EFFORT publications (one per frame and subscriber unicast, one per frame multicast)"),
    UD_SEND_POSTS("udSendPosts", Scope.UD, "publishers",
            "ibv_post_send calls of the UD publications: one per frame, one per chain of a batch offer"),
    UD_DATAGRAMS_NOT_POSTED("udDatagramsNotPosted", Scope.UD, "publishers",
            "UD datagrams lost before the device: it refused the post, or a subscriber's address handle closed under the publisher"),
    UD_GAP_FRAMES("udGapFrames", Scope.UD_RECOVERY, "poller",
            "subscriber: frames found missing in UD streams (gap recovery on); each ends recovered, given up, not recoverable or "
                    + "filled by a late datagram"),
    UD_NAKS_SENT("udNaksSent", Scope.UD_RECOVERY, "poller", "subscriber: NAKs sent to publishers for missing UD frames"),
    UD_FRAMES_RECOVERED("udFramesRecovered", Scope.UD_RECOVERY, "poller",
            "subscriber: missing UD frames filled in time by a frame the publisher re-sent over RC"),
    UD_FRAMES_GIVEN_UP("udFramesGivenUp", Scope.UD_RECOVERY, "poller",
            "subscriber: missing UD frames not recovered within rdma.ud.recovery.ms (or pushed out of the hold): reported lost"),
    UD_GAPS_NOT_RECOVERABLE("udGapFramesNotRecoverable", Scope.UD_RECOVERY, "poller",
            "subscriber: missing UD frames not asked for (a gap of rdma.ud.recovery.frames or more, or no RC connection to the "
                    + "publisher): reported lost at once"),
    UD_NAKS_SERVED("udNaksServed", Scope.UD_RECOVERY, "poller", "publisher: NAKs received for a UD publication that retains frames"),
    UD_FRAMES_RESENT("udFramesResent", Scope.UD_RECOVERY, "poller", "publisher: retained UD frames re-sent over RC for NAKs");

    /** When the transport reports a counter. */
    enum Scope {
        /** Always, 0 before start. */
        ALWAYS,
        /** Once started. */
        STARTED,
        /** Once started, with {@code rdma.discovery=multicast}. */
        DISCOVERY,
        /** With the UD path ({@code rdma.ud.mode} unicast or multicast). */
        UD,
        /** With the UD path and gap recovery on ({@code rdma.ud.recovery.frames} above 0). */
        UD_RECOVERY
    }

    private final CounterDescriptor.Text text;
    private final Scope scope;

    RdmaCounter(final String counterName, final Scope scope, final String writer, final String description) {
        this.text = new CounterDescriptor.Text(counterName, writer, description);
        this.scope = scope;
    }

    @Override
    public CounterDescriptor.Text text() {
        return text;
    }

    Scope scope() {
        return scope;
    }
}
