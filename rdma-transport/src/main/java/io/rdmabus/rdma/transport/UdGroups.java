package io.rdmabus.rdma.transport;

import io.rdmabus.rdma.verbs.AddressHandle;
import io.rdmabus.rdma.verbs.CmId;
import io.rdmabus.rdma.verbs.ProtectionDomain;
import io.rdmabus.rdma.verbs.UdPeer;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.HashMap;
import java.util.Map;

import static io.rdmabus.rdma.transport.DeviceResources.closeQuietly;

/**
 * The multicast groups of one {@link UdEndpoint}, counted: joined for receiving through the data id (the QP is attached
 * to the group) and for sending through the join-only id (the group's address handle), each left by its last user.
 *
 * <p>Threads: control path only (application threads adding publications and subscriptions, the start thread joining
 * the control group, close()); every method holds this object's monitor, and never calls out while holding it.
 */
final class UdGroups {
    private static final long JOIN_TIMEOUT_MS = 10_000;

    private final CmId dataId;
    /** The join-only id; null in unicast mode without discovery. */
    private final CmId sendId;
    private final ProtectionDomain pd;
    private final Map<Integer, int[]> receiveJoins = new HashMap<>();
    private final Map<Integer, Group> sendJoins = new HashMap<>();

    /** A multicast group this transport sends to: the address handle from the join event. */
    static final class Group {
        final int address;
        final AddressHandle ah;
        /** Guarded by the {@link UdGroups} monitor. */
        int users;

        Group(final int address, final AddressHandle ah) {
            this.address = address;
            this.ah = ah;
        }
    }

    UdGroups(final CmId dataId, final CmId sendId, final ProtectionDomain pd) {
        this.dataId = dataId;
        this.sendId = sendId;
        this.pd = pd;
    }

    /** @return whether groups can be joined for sending (the join-only id exists) */
    boolean canSend() {
        return sendId != null;
    }

    /** Joins {@code address} for sending (or counts one more user) and returns its address handle. */
    synchronized Group joinForSending(final int address) {
        Group g = sendJoins.get(address);
        if (g == null) {
            InetAddress group = inet(address);
            UdPeer peer = sendId.joinMulticast(group, JOIN_TIMEOUT_MS);
            AddressHandle ah;
            try {
                ah = peer.createAddressHandle(pd);
            } catch (RuntimeException e) {
                leaveQuietly(sendId, group);
                throw e;
            }
            g = new Group(address, ah);
            sendJoins.put(address, g);
        }
        g.users++;
        return g;
    }

    /** One user of {@code g} fewer; the last one leaves the group and frees its handle. */
    synchronized void releaseGroup(final Group g) {
        if (--g.users > 0) {
            return;
        }
        sendJoins.remove(g.address);
        leaveQuietly(sendId, inet(g.address));
        closeQuietly(g.ah);
    }

    /** Attaches the QP to {@code address} (or counts one more user). */
    synchronized void joinForReceiving(final int address) {
        int[] count = receiveJoins.get(address);
        if (count == null) {
            dataId.joinMulticast(inet(address), JOIN_TIMEOUT_MS);
            count = new int[1];
            receiveJoins.put(address, count);
        }
        count[0]++;
    }

    /** Undoes {@link #joinForReceiving}: the last user detaches the QP. */
    synchronized void leaveForReceiving(final int address) {
        int[] count = receiveJoins.get(address);
        if (count != null && --count[0] == 0) {
            receiveJoins.remove(address);
            leaveQuietly(dataId, inet(address));
        }
    }

    /** Leaves every group (while the QP exists) and frees the handles. */
    synchronized void close() {
        for (int address : receiveJoins.keySet()) {
            leaveQuietly(dataId, inet(address)); // detach while the QP exists
        }
        receiveJoins.clear();
        for (Group g : sendJoins.values()) {
            leaveQuietly(sendId, inet(g.address));
            closeQuietly(g.ah);
        }
        sendJoins.clear();
    }

    /** @return the IPv4 address of a big-endian int (a group, or an advertised endpoint) */
    static InetAddress inet(final int address) {
        try {
            return InetAddress.getByAddress(new byte[] {(byte) (address >>> 24), (byte) (address >>> 16), (byte) (address >>> 8), (byte) address});
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void leaveQuietly(final CmId id, final InetAddress group) {
        try {
            id.leaveMulticast(group);
        } catch (RuntimeException ignored) {
            // the group goes away with the id anyway
        }
    }
}
