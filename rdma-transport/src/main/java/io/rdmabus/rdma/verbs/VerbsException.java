package io.rdmabus.rdma.verbs;

/**
 * A verbs or rdma_cm call failed. Carries the verb's name, the errno value and its
 * {@code strerror} text, so the cause is visible without a debugger.
 */
public class VerbsException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String verb;
    private final int errno;

    /**
     * @param verb  the failing C function, e.g. {@code ibv_modify_qp}
     * @param errno the errno value it reported
     */
    public VerbsException(String verb, int errno) {
        this(verb, errno, verb + " failed: errno " + errno + " (" + Native.strerror(errno) + ")");
    }

    /**
     * @param verb    the failing C function or rdma_cm step
     * @param errno   the errno value (0 if the failure was reported otherwise, e.g. by an event)
     * @param message full message
     */
    protected VerbsException(String verb, int errno, String message) {
        super(message);
        this.verb = verb;
        this.errno = errno;
    }

    /** @return the failing C function (or rdma_cm step) */
    public String verb() {
        return verb;
    }

    /** @return errno value reported by the verb; 0 when the failure came from an rdma_cm event */
    public int errno() {
        return errno;
    }
}
