package io.rdmabus.rdma.verbs.rxe;

import java.util.Arrays;
import java.util.List;

/** The rxe lab's per-guest environment (lab/rxe-lab.sh contract). */
final class LabEnv {
    static final String DEVICE = env("LAB_RXE_DEV", "rxe0");

    private LabEnv() {
    }

    /** @return this guest's index, 1-based */
    static int guestIndex() {
        return Integer.parseInt(require("LAB_GUEST_INDEX"));
    }

    /** @return the guests' IPv4 addresses in index order */
    static List<String> guestIps() {
        return Arrays.asList(require("LAB_GUEST_IPS").trim().split("\\s+"));
    }

    /** @return this guest's own IPv4 address */
    static String selfIp() {
        return require("LAB_SELF_IP");
    }

    /** Fails (does not skip) when the lab booted fewer guests than the scenario needs. */
    static void requireGuests(int n) {
        int count = Integer.parseInt(require("LAB_GUEST_COUNT"));
        if (count < n) {
            throw new AssertionError("this scenario needs " + n + " rxe guests but the lab booted " + count
                    + ": run lab/run-junit.sh --module rdma-transport --guests " + n);
        }
    }

    private static String require(String name) {
        String v = System.getenv(name);
        if (v == null || v.isBlank()) {
            throw new AssertionError(name + " is not set: rxe tests run inside the guest lab (lab/run-junit.sh --module rdma-transport)");
        }
        return v;
    }

    private static String env(String name, String dflt) {
        String v = System.getenv(name);
        return v == null || v.isBlank() ? dflt : v;
    }
}
