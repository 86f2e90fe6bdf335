package io.rdmabus.samples.cli;

import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;

import io.rdmabus.BusConfigurationException;
import io.rdmabus.rdma.verbs.VerbsContext;
import io.rdmabus.rdma.verbs.VerbsException;
import io.rdmabus.samples.support.LocalBuses;
import io.rdmabus.spi.TransportFactory;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** {@code rdma-bus devices}: RDMA devices seen through the verbs library, and which transport {@code auto} picks. */
@Command(name = "devices", mixinStandardHelpOptions = true, description = "List RDMA devices and the transports available here.")
final class DevicesCommand implements Callable<Integer> {
    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    /** errno of a verbs call the kernel does not implement: libibverbs found no RDMA support in it. */
    private static final int ENOSYS = 38;

    DevicesCommand() {
    }

    @Override
    public Integer call() {
        final PrintWriter out = spec.commandLine().getOut();
        final List<String> devices = rdmaDevices(out);
        String auto;
        try {
            auto = LocalBuses.resolve("auto");
        } catch (final BusConfigurationException ex) {
            auto = null;
            out.println("no transport usable: " + ex.getMessage());
        }
        if (devices.isEmpty()) {
            out.println("no RDMA device: the bus will use " + (auto == null ? "nothing (see above)" : auto));
        } else {
            out.println("RDMA devices: " + String.join(", ", devices));
            out.println("transport 'auto' picks: " + auto + (auto != null && !auto.startsWith("rdma")
                ? " (no RDMA transport on the class path yet)" : ""));
        }
        out.println("transports on the class path (highest priority first):");
        for (final TransportFactory f : LocalBuses.factories()) {
            final String reason = f.unavailableReason();
            out.printf("  %-10s priority %3d  %s%n", f.name(), f.priority(), reason == null ? "available" : "unavailable: " + reason);
        }
        out.flush();
        return 0;
    }

    /** @return device names, or empty when there are none or the verbs library cannot be used here */
    private static List<String> rdmaDevices(final PrintWriter out) {
        try {
            return VerbsContext.deviceNames();
        } catch (final Throwable ex) { // no libibverbs, no native access, no kernel support: all mean "no device"
            out.println(whyNoDevices(ex));
            return List.of();
        }
    }

    /**
     * @param ex what asking libibverbs for its devices threw
     * @return one line: what is missing and what to do about it
     */
    static String whyNoDevices(final Throwable ex) {
        for (Throwable t = ex; t != null; t = t.getCause()) {
            if (t instanceof VerbsException v && v.errno() == ENOSYS) {
                return "libibverbs is installed but the kernel has no RDMA device (" + v.getMessage() + "); load the"
                    + " RDMA driver of your NIC, or add a soft-RoCE device: modprobe rdma_rxe; rdma link add rxe0 type rxe netdev eth0";
            }
            if (t instanceof IllegalCallerException) {
                return "the verbs library cannot be called: native access is not enabled (" + t.getMessage() + "); run with"
                    + " --enable-native-access=ALL-UNNAMED (scripts/rdma-bus does)";
            }
            if (t instanceof UnsatisfiedLinkError || t instanceof IllegalArgumentException && String.valueOf(t.getMessage()).contains("library")) {
                return "the verbs library libibverbs cannot be loaded (" + t.getMessage() + "); install rdma-core"
                    + " and libibverbs (Debian, Ubuntu: apt-get install rdma-core ibverbs-providers; RHEL, Fedora: dnf install"
                    + " rdma-core libibverbs)";
            }
        }
        return "the verbs library is unusable here (" + ex.getClass().getSimpleName()
            + (ex.getMessage() == null ? "" : ": " + ex.getMessage()) + ")";
    }
}
