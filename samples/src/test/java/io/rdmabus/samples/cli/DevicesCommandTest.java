package io.rdmabus.samples.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdmabus.rdma.verbs.VerbsException;

import org.junit.jupiter.api.Test;

/** {@code rdma-bus devices} says what is missing when libibverbs cannot list devices. */
class DevicesCommandTest {
    @Test
    void libibverbsWithoutKernelSupportSaysToLoadADriver() {
        assertEquals("libibverbs is installed but the kernel has no RDMA device (ibv_get_device_list failed: errno 38 (Function not"
                + " implemented)); load the RDMA driver of your NIC, or add a soft-RoCE device: modprobe rdma_rxe; rdma link add rxe0"
                + " type rxe netdev eth0",
            DevicesCommand.whyNoDevices(new VerbsException("ibv_get_device_list", 38)));
    }

    @Test
    void missingLibibverbsSaysToInstallIt() {
        // what the generated bindings' class initialisation throws where libibverbs.so.1 is absent
        final Throwable absent = new ExceptionInInitializerError(new IllegalArgumentException("Cannot open library: libibverbs.so.1"));
        assertEquals("the verbs library libibverbs cannot be loaded (Cannot open library: libibverbs.so.1); install rdma-core and"
                + " libibverbs (Debian, Ubuntu: apt-get install rdma-core ibverbs-providers; RHEL, Fedora: dnf install rdma-core libibverbs)",
            DevicesCommand.whyNoDevices(absent));
    }

    @Test
    void anythingElseIsNamed() {
        assertEquals("the verbs library is unusable here (IllegalStateException: odd)",
            DevicesCommand.whyNoDevices(new IllegalStateException("odd")));
    }
}
