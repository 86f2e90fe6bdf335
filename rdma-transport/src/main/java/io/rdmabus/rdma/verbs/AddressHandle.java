package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.RdmaCm;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/** A UD address handle (route to a peer or multicast group). */
public final class AddressHandle extends NativeResource {
    private static final MethodHandle DESTROY = Native.capturing(RdmaCm.ibv_destroy_ah$address(), RdmaCm.ibv_destroy_ah$descriptor());
    private final MemorySegment ah;

    AddressHandle(ProtectionDomain pd, MemorySegment ah) {
        super("AddressHandle", pd);
        this.ah = ah;
    }

    MemorySegment segment() {
        checkOpen();
        return ah;
    }

    @Override
    void release() {
        Native.callInt("ibv_destroy_ah", DESTROY, ah);
    }
}
