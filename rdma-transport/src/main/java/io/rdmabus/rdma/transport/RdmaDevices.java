package io.rdmabus.rdma.transport;

import io.rdmabus.rdma.verbs.NativeLibraries;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;

/**
 * Finds RDMA devices, their ACTIVE ports and their network interface's IPv4 address through sysfs
 * ({@code /sys/class/infiniband}), without loading libibverbs: so a host without RDMA gets a clear reason
 * instead of a native library error.
 */
final class RdmaDevices {
    static final Path SYSFS = Path.of("/sys/class/infiniband");

    /**
     * A device port.
     *
     * @param device device name, e.g. {@code rxe0}
     * @param port   port number
     * @param active whether its state is ACTIVE
     * @param netdev the network interface behind it (RoCE), or null
     */
    record DevicePort(String device, int port, boolean active, String netdev) {
    }

    private RdmaDevices() {
    }

    /** @return every device port sysfs lists (empty without RDMA) */
    static List<DevicePort> ports() {
        return ports(SYSFS);
    }

    static List<DevicePort> ports(final Path root) {
        if (!Files.isDirectory(root)) {
            return List.of();
        }
        List<DevicePort> out = new ArrayList<>();
        try (Stream<Path> devices = Files.list(root)) {
            for (Path dev : devices.sorted().toList()) {
                Path portsDir = dev.resolve("ports");
                if (!Files.isDirectory(portsDir)) {
                    continue;
                }
                try (Stream<Path> ports = Files.list(portsDir)) {
                    for (Path p : ports.sorted().toList()) {
                        int num;
                        try {
                            num = Integer.parseInt(p.getFileName().toString());
                        } catch (NumberFormatException ignored) {
                            continue;
                        }
                        String state = read(p.resolve("state"));
                        String netdev = read(p.resolve("gid_attrs/ndevs/0"));
                        out.add(new DevicePort(dev.getFileName().toString(), num, state != null && state.contains("ACTIVE"),
                                netdev == null || netdev.isBlank() ? null : netdev.trim()));
                    }
                }
            }
        } catch (IOException e) {
            return Collections.unmodifiableList(out);
        }
        return Collections.unmodifiableList(out);
    }

    /**
     * @return why the transport cannot run here, or null if some device has an ACTIVE port and the native libraries load
     */
    static String unavailableReason() {
        if (!Files.isDirectory(SYSFS)) {
            return "no RDMA device (no " + SYSFS + "): load an RDMA driver or soft-RoCE (modprobe rdma_rxe; "
                    + "rdma link add rxe0 type rxe netdev eth0), or use the aeron or tcp transport";
        }
        List<DevicePort> ports = ports();
        if (ports.stream().noneMatch(DevicePort::active)) {
            return "no RDMA device with an ACTIVE port (found " + ports + ")";
        }
        try {
            NativeLibraries.load();
        } catch (Throwable t) {
            return "RDMA device present but libibverbs/librdmacm cannot be loaded (install rdma-core and ibverbs-providers, "
                    + "run with --enable-native-access=ALL-UNNAMED): " + t;
        }
        return null;
    }

    /**
     * Picks the device port to use.
     *
     * @param device wanted device or null for the first with an ACTIVE port
     * @param port   wanted port
     * @return the port
     * @throws io.rdmabus.TransportException if none fits
     */
    static DevicePort select(final String device, final int port) {
        List<DevicePort> ports = ports();
        for (DevicePort p : ports) {
            if ((device == null || p.device().equals(device)) && p.port() == port && p.active()) {
                return p;
            }
        }
        if (device == null) {
            for (DevicePort p : ports) {
                if (p.active()) {
                    return p;
                }
            }
        }
        throw new io.rdmabus.TransportException("No ACTIVE RDMA port " + (device == null ? "" : device + "/") + port
                + " (ports present: " + ports + "); set " + RdmaTransportConfig.DEVICE + " / " + RdmaTransportConfig.PORT);
    }

    /**
     * @param netdev a network interface name
     * @return its first IPv4 address
     * @throws io.rdmabus.TransportException if it has none
     */
    static String ipv4Of(final String netdev) {
        try {
            NetworkInterface nif = netdev == null ? null : NetworkInterface.getByName(netdev);
            if (nif != null) {
                for (InetAddress a : Collections.list(nif.getInetAddresses())) {
                    if (a instanceof Inet4Address) {
                        return a.getHostAddress();
                    }
                }
            }
        } catch (SocketException e) {
            throw new io.rdmabus.TransportException("Cannot read the addresses of " + netdev + ": " + e.getMessage(), e);
        }
        throw new io.rdmabus.TransportException("The RDMA device's network interface " + netdev
                + " has no IPv4 address; set " + RdmaTransportConfig.BIND + " to the address rdma_cm should use");
    }

    /**
     * @param device device name
     * @param port   port number
     * @return false only if sysfs says the port is not ACTIVE now (true when it cannot be read: never hold work back on
     *         a guess)
     */
    static boolean portActive(final String device, final int port) {
        String state = read(SYSFS.resolve(device).resolve("ports").resolve(String.valueOf(port)).resolve("state"));
        return state == null || state.contains("ACTIVE");
    }

    private static String read(final Path p) {
        try {
            return Files.readString(p).trim();
        } catch (IOException e) {
            return null;
        }
    }
}
