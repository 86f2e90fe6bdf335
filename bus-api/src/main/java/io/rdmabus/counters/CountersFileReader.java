package io.rdmabus.counters;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.errors.ErrorConsumer;
import org.agrona.concurrent.errors.ErrorLogReader;
import org.agrona.concurrent.status.CountersReader;

/**
 * Reads a bus's counters file ({@link CountersFile}) read-only, from any process that may read the file: the header,
 * the counters and the distinct error log. A file whose bus has closed is deleted; this reader's mapping stays valid
 * (and frozen) until {@link #close()}.
 */
public final class CountersFileReader implements AutoCloseable {
    private final Path file;
    private final MappedByteBuffer mapped;
    private final UnsafeBuffer header;
    private final CountersReader counters;
    private final UnsafeBuffer errorLog;

    /**
     * One counter.
     *
     * @param kind    scope kind ({@link CountersFile#KIND_BUS}, ...)
     * @param scopeId the scope's id in its bus
     * @param scope   the scope's label, e.g. {@code "subscription md.quotes"}
     * @param name    the counter's name, e.g. {@code "messagesDelivered"}
     * @param value   its value at the bus's last update
     */
    public record Counter(int kind, long scopeId, String scope, String name, long value) {
    }

    private CountersFileReader(final Path file, final MappedByteBuffer mapped) {
        this.file = file;
        this.mapped = mapped;
        final UnsafeBuffer all = new UnsafeBuffer(mapped);
        this.header = new UnsafeBuffer(all, 0, CountersFile.HEADER_LENGTH);
        final int version = header.getIntVolatile(CountersFile.VERSION_OFFSET);
        if (version != CountersFile.LAYOUT_VERSION) {
            IoUtil.unmap(mapped);
            throw new IllegalStateException(file + ": counters layout version " + version + ", this reader knows "
                + CountersFile.LAYOUT_VERSION + (version == 0 ? " (the bus is still creating it)" : ""));
        }
        final int capacity = header.getInt(CountersFile.CAPACITY_OFFSET);
        final int errorLength = header.getInt(CountersFile.ERROR_LOG_LENGTH_OFFSET);
        if (capacity <= 0 || errorLength <= 0 || CountersFile.fileLength(capacity, errorLength) > mapped.capacity()) {
            IoUtil.unmap(mapped);
            throw new IllegalStateException(file + ": header says " + capacity + " counters and a " + errorLength
                + "-byte error log, which do not fit its " + mapped.capacity() + " bytes");
        }
        this.counters = new CountersReader(
            new UnsafeBuffer(all, CountersFile.metadataOffset(), capacity * CountersReader.METADATA_LENGTH),
            new UnsafeBuffer(all, CountersFile.valuesOffset(capacity), capacity * CountersReader.COUNTER_LENGTH), StandardCharsets.UTF_8);
        this.errorLog = new UnsafeBuffer(all, CountersFile.errorLogOffset(capacity), errorLength);
    }

    /**
     * @param file a counters file
     * @return a reader over a read-only mapping of it
     * @throws IOException if it cannot be opened
     * @throws IllegalStateException if it is not a counters file of this layout (or its bus is still creating it)
     */
    public static CountersFileReader open(final Path file) throws IOException {
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ)) {
            final long size = channel.size();
            if (size < CountersFile.HEADER_LENGTH) {
                throw new IllegalStateException(file + ": " + size + " bytes, shorter than a counters file's header");
            }
            return new CountersFileReader(file, channel.map(FileChannel.MapMode.READ_ONLY, 0, size));
        }
    }

    /** @return the file */
    public Path file() {
        return file;
    }

    /** @return the bus's name */
    public String busName() {
        return getString(CountersFile.NAME_OFFSET);
    }

    /** @return the bus's transport */
    public String transportName() {
        return getString(CountersFile.TRANSPORT_OFFSET);
    }

    private String getString(final int offset) {
        final int length = header.getInt(offset);
        final byte[] bytes = new byte[Math.max(0, Math.min(length, CountersFile.MAX_NAME_LENGTH))];
        header.getBytes(offset + Integer.BYTES, bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** @return the pid of the bus's process */
    public long pid() {
        return header.getLong(CountersFile.PID_OFFSET);
    }

    /** @return when the bus started, epoch ms */
    public long startTimeMs() {
        return header.getLong(CountersFile.START_TIME_OFFSET);
    }

    /** @return the bus's last heartbeat, epoch ms */
    public long heartbeatMs() {
        return header.getLongVolatile(CountersFile.HEARTBEAT_OFFSET);
    }

    /**
     * @param nowMs epoch ms
     * @return null while the bus is live; else why the file is stale: its process is gone (killed, crashed), or its
     *     heartbeat is older than {@link CountersFile#STALE_AFTER_MS} (the process hangs or was stopped)
     */
    public String staleReason(final long nowMs) {
        final boolean alive = ProcessHandle.of(pid()).map(ProcessHandle::isAlive).orElse(false);
        if (!alive) {
            return "process " + pid() + " is not running";
        }
        final long age = nowMs - heartbeatMs();
        return age > CountersFile.STALE_AFTER_MS ? "no heartbeat for " + age / 1000 + " s (process " + pid() + ")" : null;
    }

    /** @return every allocated counter, in counter id order (scopes in the order they were added) */
    public List<Counter> counters() {
        final List<Counter> out = new ArrayList<>();
        counters.forEach((counterId, typeId, keyBuffer, label) -> {
            final String name = keyName(keyBuffer);
            final int colon = label.lastIndexOf(": ");
            final String scope = colon < 0 ? label : label.substring(0, colon);
            out.add(new Counter(typeId, counters.getCounterRegistrationId(counterId), scope, name, counters.getCounterValue(counterId)));
        });
        return out;
    }

    private static String keyName(final org.agrona.DirectBuffer key) {
        final int length = Math.max(0, Math.min(key.getInt(0), CountersReader.MAX_KEY_LENGTH - Integer.BYTES));
        final byte[] bytes = new byte[length];
        key.getBytes(Integer.BYTES, bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /**
     * @param consumer gets each distinct error: count, first and last time (epoch ms), and its text with the stack trace
     * @return the number of distinct errors
     */
    public int readErrors(final ErrorConsumer consumer) {
        return ErrorLogReader.read(errorLog, consumer);
    }

    /** Unmaps the file. */
    @Override
    public void close() {
        IoUtil.unmap(mapped);
    }
}
