package io.rdmabus.transport.tcp;

import java.nio.file.Path;

import io.rdmabus.tck.CounterDescriptors;

import org.junit.jupiter.api.Test;

/** The TCP transport's per-connection counter descriptors (names kept: the CLI and tests read them) and their documentation. */
class TcpConnectionCounterTest {
    @Test
    void everyConnectionCounterHasAUniqueNameAndIsDocumented() throws Exception {
        CounterDescriptors.assertUniqueAndDocumented(TcpConnectionCounter.values(), Path.of("README.md"), "`%s`");
    }
}
