package io.rdmabus.rdma.verbs;

/**
 * Device limits ({@code struct ibv_device_attr}, the fields the transport uses).
 *
 * @param maxMrSizeBytes   largest memory region
 * @param maxQp            queue pairs
 * @param maxQpWr          work requests per queue
 * @param maxSge           scatter/gather entries per work request
 * @param maxCq            completion queues
 * @param maxCqe           entries per completion queue
 * @param maxMr            memory regions
 * @param maxPd            protection domains
 * @param maxQpRdAtom      outstanding RDMA READ/atomic per QP as target
 * @param maxMcastGroups   multicast groups
 * @param physicalPorts    number of ports
 */
public record DeviceAttributes(long maxMrSizeBytes, int maxQp, int maxQpWr, int maxSge, int maxCq, int maxCqe, int maxMr,
                               int maxPd, int maxQpRdAtom, int maxMcastGroups, int physicalPorts) {
}
