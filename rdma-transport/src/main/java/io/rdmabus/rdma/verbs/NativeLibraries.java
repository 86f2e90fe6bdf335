package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;

/** Loading of libibverbs and librdmacm, which the generated bindings look their symbols up in. */
public final class NativeLibraries {
    private NativeLibraries() {
    }

    /**
     * Loads both libraries (once per class loader; later calls return at once) and resolves one symbol of each. Throws
     * what the loading threw: {@code IllegalArgumentException} from the symbol lookup when a library is missing,
     * {@code IllegalCallerException} without native access, an {@code Error} of class initialisation.
     */
    public static void load() {
        RdmaCm.ibv_get_device_list$address();
        RdmaCm.rdma_create_event_channel$address();
    }
}
