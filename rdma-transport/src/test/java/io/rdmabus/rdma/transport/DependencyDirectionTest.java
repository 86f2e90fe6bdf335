package io.rdmabus.rdma.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.classfile.ClassFile;
import java.lang.classfile.ClassModel;
import java.lang.classfile.constantpool.MemberRefEntry;
import java.lang.classfile.constantpool.PoolEntry;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * Dependencies in the package point one way, from the SPI face down (docs/rdma-transport.md, "Code layout"): no compiled
 * class but {@link RdmaTransport} itself and the factory that constructs it calls a method or reads a field of
 * {@link RdmaTransport}. Naming its class (the shared logger's name) is not a call back. Reads the package's class files
 * with the JDK's class-file API.
 */
class DependencyDirectionTest {
    private static final String FACE = RdmaTransport.class.getName().replace('.', '/');

    @Test
    void noClassCallsBackIntoTheTransport() throws IOException, URISyntaxException {
        Path dir = Path.of(RdmaTransport.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                .resolve(RdmaTransport.class.getPackageName().replace('.', '/'));
        List<String> callers = new ArrayList<>();
        int scanned = 0;
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".class")).toList()) {
                ClassModel model = ClassFile.of().parse(f);
                String name = model.thisClass().asInternalName();
                scanned++;
                if (name.equals(FACE) || name.startsWith(FACE + "$") || name.endsWith("/RdmaTransportFactory")) {
                    continue;
                }
                for (PoolEntry e : model.constantPool()) {
                    if (e instanceof MemberRefEntry ref && ref.owner().asInternalName().equals(FACE)) {
                        callers.add(name + " -> " + ref.name().stringValue());
                    }
                }
            }
        }
        assertTrue(scanned > 30, "found the package's class files in " + dir + " (" + scanned + ")");
        assertEquals(List.of(), callers, "classes calling back into RdmaTransport");
    }
}
