package io.rdmabus.rdma.verbs;

import io.rdmabus.rdma.verbs.ffm.ibv_ah_attr;
import io.rdmabus.rdma.verbs.ffm.ibv_comp_channel;
import io.rdmabus.rdma.verbs.ffm.ibv_context;
import io.rdmabus.rdma.verbs.ffm.ibv_context_ops;
import io.rdmabus.rdma.verbs.ffm.ibv_cq;
import io.rdmabus.rdma.verbs.ffm.ibv_device_attr;
import io.rdmabus.rdma.verbs.ffm.ibv_gid;
import io.rdmabus.rdma.verbs.ffm.ibv_global_route;
import io.rdmabus.rdma.verbs.ffm.ibv_mr;
import io.rdmabus.rdma.verbs.ffm.ibv_pd;
import io.rdmabus.rdma.verbs.ffm.ibv_port_attr;
import io.rdmabus.rdma.verbs.ffm.ibv_qp;
import io.rdmabus.rdma.verbs.ffm.ibv_qp_attr;
import io.rdmabus.rdma.verbs.ffm.ibv_qp_cap;
import io.rdmabus.rdma.verbs.ffm.ibv_qp_init_attr;
import io.rdmabus.rdma.verbs.ffm.ibv_recv_wr;
import io.rdmabus.rdma.verbs.ffm.ibv_send_wr;
import io.rdmabus.rdma.verbs.ffm.ibv_sge;
import io.rdmabus.rdma.verbs.ffm.ibv_wc;
import io.rdmabus.rdma.verbs.ffm.rdma_cm_event;
import io.rdmabus.rdma.verbs.ffm.rdma_cm_id;
import io.rdmabus.rdma.verbs.ffm.rdma_conn_param;
import io.rdmabus.rdma.verbs.ffm.rdma_event_channel;
import io.rdmabus.rdma.verbs.ffm.rdma_ud_param;
import io.rdmabus.rdma.verbs.ffm.sockaddr_in;
import io.rdmabus.rdma.verbs.ffm.sockaddr_storage;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.lang.foreign.GroupLayout;
import java.lang.foreign.MemoryLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Compares the jextract layouts with the C ABI of the installed rdma-core headers: a C probe
 * ({@code src/test/c/verbs_layout_probe.c}) is compiled with gcc and prints {@code sizeof} and
 * {@code offsetof} of every struct and field the wrappers touch. No RDMA device is needed.
 */
class VerbsLayoutTest {

    private static final Map<String, GroupLayout> LAYOUTS = new LinkedHashMap<>();

    static {
        LAYOUTS.put("ibv_context", ibv_context.layout());
        LAYOUTS.put("ibv_context_ops", ibv_context_ops.layout());
        LAYOUTS.put("ibv_device_attr", ibv_device_attr.layout());
        LAYOUTS.put("ibv_port_attr", ibv_port_attr.layout());
        LAYOUTS.put("ibv_gid", ibv_gid.layout());
        LAYOUTS.put("ibv_pd", ibv_pd.layout());
        LAYOUTS.put("ibv_mr", ibv_mr.layout());
        LAYOUTS.put("ibv_comp_channel", ibv_comp_channel.layout());
        LAYOUTS.put("ibv_cq", ibv_cq.layout());
        LAYOUTS.put("ibv_qp", ibv_qp.layout());
        LAYOUTS.put("ibv_qp_cap", ibv_qp_cap.layout());
        LAYOUTS.put("ibv_qp_init_attr", ibv_qp_init_attr.layout());
        LAYOUTS.put("ibv_qp_attr", ibv_qp_attr.layout());
        LAYOUTS.put("ibv_ah_attr", ibv_ah_attr.layout());
        LAYOUTS.put("ibv_global_route", ibv_global_route.layout());
        LAYOUTS.put("ibv_sge", ibv_sge.layout());
        LAYOUTS.put("ibv_send_wr", ibv_send_wr.layout());
        LAYOUTS.put("ibv_recv_wr", ibv_recv_wr.layout());
        LAYOUTS.put("ibv_wc", ibv_wc.layout());
        LAYOUTS.put("rdma_event_channel", rdma_event_channel.layout());
        LAYOUTS.put("rdma_cm_id", rdma_cm_id.layout());
        LAYOUTS.put("rdma_cm_event", rdma_cm_event.layout());
        LAYOUTS.put("rdma_conn_param", rdma_conn_param.layout());
        LAYOUTS.put("rdma_ud_param", rdma_ud_param.layout());
        LAYOUTS.put("sockaddr_in", sockaddr_in.layout());
        LAYOUTS.put("sockaddr_storage", sockaddr_storage.layout());
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void javaLayoutsMatchTheCompiledHeaders() throws Exception {
        List<String> probe = runProbe();
        assertTrue(probe.size() > 150, "probe printed too little: " + probe);
        List<String> mismatches = new ArrayList<>();
        int checked = 0;
        for (String line : probe) {
            String[] parts = line.trim().split(" ");
            assertEquals(3, parts.length, "malformed probe line: " + line);
            long cValue = Long.parseLong(parts[2]);
            String[] path = parts[1].split("\\.");
            GroupLayout root = LAYOUTS.get(path[0]);
            if (root == null) {
                mismatches.add(parts[1] + ": no Java layout registered in this test");
                continue;
            }
            long javaValue = parts[0].equals("sizeof") ? root.byteSize() : offsetOf(root, path, 1, parts[1]);
            if (javaValue != cValue) {
                mismatches.add(line + " but Java has " + javaValue);
            }
            checked++;
        }
        assertTrue(mismatches.isEmpty(), "FFM layouts drifted from the installed headers (regenerate with "
                + "rdma-transport/jextract/regenerate.sh):\n" + String.join("\n", mismatches));
        assertTrue(checked > 150, "checked only " + checked + " entries");
    }

    /** Resolves a dotted field path, looking through C anonymous members (jextract names them $anon$...). */
    private static long offsetOf(GroupLayout group, String[] path, int index, String whole) {
        long found = findMember(group, path[index]);
        if (found < 0) {
            throw new AssertionError("no field " + path[index] + " in Java layout " + group.name().orElse("?") + " for " + whole);
        }
        if (index == path.length - 1) {
            return found;
        }
        MemoryLayout member = memberAt(group, path[index]);
        if (!(member instanceof GroupLayout g)) {
            throw new AssertionError(path[index] + " is not a struct/union in " + whole);
        }
        return found + offsetOf(g, path, index + 1, whole);
    }

    private static MemoryLayout memberAt(GroupLayout group, String name) {
        for (MemoryLayout m : group.memberLayouts()) {
            if (m.name().filter(name::equals).isPresent()) {
                return m;
            }
            if (m instanceof GroupLayout g && isAnonymous(m) && findMember(g, name) >= 0) {
                return memberAt(g, name);
            }
        }
        throw new AssertionError("no member " + name);
    }

    /** Offset of the member named {@code name} in {@code group}, or -1. */
    private static long findMember(GroupLayout group, String name) {
        long offset = 0;
        boolean union = group instanceof java.lang.foreign.UnionLayout;
        for (MemoryLayout m : group.memberLayouts()) {
            if (m.name().filter(name::equals).isPresent()) {
                return union ? 0 : offset;
            }
            if (m instanceof GroupLayout g && isAnonymous(m)) {
                long inner = findMember(g, name);
                if (inner >= 0) {
                    return (union ? 0 : offset) + inner;
                }
            }
            offset += m.byteSize();
        }
        return -1;
    }

    private static boolean isAnonymous(MemoryLayout m) {
        return m.name().map(n -> n.startsWith("$anon$")).orElse(true);
    }

    private static List<String> runProbe() throws IOException, InterruptedException {
        Path source = Path.of("src", "test", "c", "verbs_layout_probe.c").toAbsolutePath();
        assertTrue(Files.isRegularFile(source), "layout probe source not found at " + source
                + " (run the test from the rdma-transport module directory)");
        Path dir = Files.createTempDirectory("verbs-layout");
        Path exe = dir.resolve("probe");
        Process gcc;
        try {
            gcc = new ProcessBuilder("gcc", "-o", exe.toString(), source.toString()).redirectErrorStream(true).start();
        } catch (IOException e) {
            fail("gcc not found: the FFM layout test compiles a C probe against the rdma-core headers. "
                    + "Install it: apt-get install gcc libibverbs-dev librdmacm-dev", e);
            return List.of();
        }
        String gccOut = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!gcc.waitFor(60, TimeUnit.SECONDS)) {
            gcc.destroyForcibly();
            fail("gcc did not finish in 60 s");
        }
        if (gcc.exitValue() != 0) {
            String hint = gccOut.contains("verbs.h") || gccOut.contains("rdma_cma.h")
                    ? "the rdma-core headers are missing: apt-get install libibverbs-dev librdmacm-dev\n"
                    : "";
            fail(hint + "gcc failed to compile " + source + ":\n" + gccOut);
        }
        Process run = new ProcessBuilder(exe.toString()).redirectErrorStream(true).start();
        String out = new String(run.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(run.waitFor(30, TimeUnit.SECONDS), "probe hung");
        assertEquals(0, run.exitValue(), "probe failed: " + out);
        Files.deleteIfExists(exe);
        Files.deleteIfExists(dir);
        return out.lines().filter(l -> !l.isBlank()).toList();
    }
}
