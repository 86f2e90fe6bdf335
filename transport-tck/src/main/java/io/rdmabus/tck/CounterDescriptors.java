package io.rdmabus.tck;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;

import io.rdmabus.spi.CounterDescriptor;

/**
 * The check every transport runs on its counter descriptors: each name is unique and the transport's reference doc
 * names it. (A descriptor without a name, writer or description cannot be built: {@link CounterDescriptor.Text}.)
 */
public final class CounterDescriptors {
    private CounterDescriptors() {
    }

    /**
     * @param counters the descriptors, in id order (an enum's {@code values()})
     * @param doc      the reference doc that lists them
     * @param docForm  how the doc writes a counter's name, with {@code %s} for it (e.g. {@code "| `%s` |"} for a table row)
     * @throws IOException if the doc cannot be read
     */
    public static void assertUniqueAndDocumented(final CounterDescriptor[] counters, final Path doc, final String docForm) throws IOException {
        final String text = Files.readString(doc);
        final Set<String> names = new HashSet<>();
        for (int i = 0; i < counters.length; i++) {
            final CounterDescriptor d = counters[i];
            assertEquals(i, d.id(), d + ": id is its position");
            assertTrue(names.add(d.counterName()), d + ": name used twice: " + d.counterName());
            assertTrue(text.contains(docForm.formatted(d.counterName())), d.counterName() + " is not in " + doc + " as " + docForm);
        }
    }
}
