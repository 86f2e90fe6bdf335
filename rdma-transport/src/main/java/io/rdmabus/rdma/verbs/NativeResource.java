package io.rdmabus.rdma.verbs;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Base of every wrapper: one owner, idempotent close, {@link IllegalStateException} on use after
 * close, and ordered teardown. <b>Ordering choice:</b> a resource that others depend on (a PD with
 * MRs/QPs/AHs, a CQ used by QPs, a context with PDs/CQs) <em>refuses</em> to close while dependents
 * are open, naming them, instead of closing them behind their owners' backs.
 */
public abstract class NativeResource implements AutoCloseable {
    private final String kind;
    private final Set<NativeResource> dependents = new LinkedHashSet<>();
    private final List<NativeResource> dependsOn = new ArrayList<>();
    private boolean closed;

    NativeResource(String kind, NativeResource... parents) {
        this.kind = kind;
        for (NativeResource p : parents) {
            if (p != null) {
                p.checkOpen();
                p.addDependent(this);
                dependsOn.add(p);
            }
        }
    }

    private synchronized void addDependent(NativeResource r) {
        dependents.add(r);
    }

    private synchronized void removeDependent(NativeResource r) {
        dependents.remove(r);
    }

    /** @return true once {@link #close()} has completed */
    public final synchronized boolean isClosed() {
        return closed;
    }

    /** Throws {@link IllegalStateException} if closed. */
    final synchronized void checkOpen() {
        if (closed) {
            throw new IllegalStateException(kind + " is closed");
        }
    }

    @Override
    public final void close() {
        if (!isClosed()) {
            beforeClose();
        }
        synchronized (this) {
            if (closed) {
                return;
            }
            if (!dependents.isEmpty()) {
                List<String> names = new ArrayList<>();
                for (NativeResource d : dependents) {
                    names.add(d.kind);
                }
                throw new IllegalStateException("cannot close " + kind + ": still used by " + names + "; close those first");
            }
            closed = true;
        }
        try {
            release();
        } finally {
            for (NativeResource p : dependsOn) {
                p.removeDependent(this);
            }
        }
    }

    /** Hook run before the dependents check, e.g. to close an internally owned dependent. */
    void beforeClose() {
    }

    /** Frees the native object; called once, after the dependents check. */
    abstract void release();
}
