package io.rdmabus.codecs;

import io.rdmabus.codec.Codec;
import io.rdmabus.codec.CodecException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * A {@link String} as strict UTF-8 with no length prefix (the frame length is the string length).
 *
 * <p>Strict both ways: encoding rejects unpaired surrogates instead of silently writing {@code '?'}, and decoding
 * rejects malformed input (bad lead/continuation bytes, overlong forms, encoded surrogates, truncated sequences)
 * instead of substituting U+FFFD. Neither direction allocates beyond the decoded {@code String}: both use per-thread
 * scratch arrays (kept up to 64 KiB).
 */
final class Utf8Codec implements Codec<String> {
    static final Utf8Codec INSTANCE = new Utf8Codec();
    private static final String NAME = "utf8";

    /** Scratch arrays up to this size are kept per thread; bigger payloads use one-off arrays so memory is bounded. */
    private static final int MAX_RETAINED_SCRATCH_BYTES = 64 * 1024;

    /** CharsetDecoder is stateful and not thread-safe, and the scratch arrays avoid two allocations per decode. */
    private static final ThreadLocal<Scratch> SCRATCH = ThreadLocal.withInitial(Scratch::new);

    private Utf8Codec() {
    }

    @Override
    public int encodedLength(final String value) {
        Bounds.requireValue(NAME, value, " (use \"\" for an empty string)");
        long byteCount = 0;
        final int charCount = value.length();
        for (int i = 0; i < charCount; i++) {
            final char c = value.charAt(i);
            if (c < 0x80) {
                byteCount += 1;
            } else if (c < 0x800) {
                byteCount += 2;
            } else if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && i + 1 < charCount && Character.isLowSurrogate(value.charAt(i + 1))) {
                    byteCount += 4;
                    i++;
                } else {
                    throw unpairedSurrogate(c, i, charCount);
                }
            } else {
                byteCount += 3;
            }
        }
        if (byteCount > Integer.MAX_VALUE) {
            throw new CodecException(NAME + ": string encodes to " + byteCount + " bytes, more than a frame can hold");
        }
        return (int) byteCount;
    }

    @Override
    public void encode(final String value, final MutableDirectBuffer buffer, final int offset) {
        Bounds.requireValue(NAME, value, " (use \"\" for an empty string)");
        final int charCount = value.length();
        // One pass: each UTF-16 unit becomes at most 3 bytes (a surrogate pair, 2 units, becomes 4), so a scratch
        // array of 3 bytes per char always suffices. Bytes are built there with plain array stores and copied with
        // one bounds-checked putBytes; a string that turns out invalid leaves the destination untouched.
        final byte[] bytes = charCount <= MAX_RETAINED_SCRATCH_BYTES / 3
            ? SCRATCH.get().bytes(3 * charCount)
            : new byte[encodedLength(value)]; // huge: size exactly rather than reserve 3x
        final int byteCount = writeUtf8(value, bytes);
        Bounds.checkEncodeRange(NAME, buffer, offset, byteCount);
        buffer.putBytes(offset, bytes, 0, byteCount);
    }

    /** Writes {@code value} as UTF-8 into {@code bytes}, which has room; rejects unpaired surrogates. */
    private static int writeUtf8(final String value, final byte[] bytes) {
        final int charCount = value.length();
        int position = 0;
        for (int i = 0; i < charCount; i++) {
            final char c = value.charAt(i);
            if (c < 0x80) {
                bytes[position++] = (byte) c;
            } else if (c < 0x800) {
                bytes[position++] = (byte) (0xC0 | (c >> 6));
                bytes[position++] = (byte) (0x80 | (c & 0x3F));
            } else if (Character.isSurrogate(c)) {
                if (!Character.isHighSurrogate(c) || i + 1 >= charCount || !Character.isLowSurrogate(value.charAt(i + 1))) {
                    throw unpairedSurrogate(c, i, charCount);
                }
                final int codePoint = Character.toCodePoint(c, value.charAt(++i));
                bytes[position++] = (byte) (0xF0 | (codePoint >> 18));
                bytes[position++] = (byte) (0x80 | ((codePoint >> 12) & 0x3F));
                bytes[position++] = (byte) (0x80 | ((codePoint >> 6) & 0x3F));
                bytes[position++] = (byte) (0x80 | (codePoint & 0x3F));
            } else {
                bytes[position++] = (byte) (0xE0 | (c >> 12));
                bytes[position++] = (byte) (0x80 | ((c >> 6) & 0x3F));
                bytes[position++] = (byte) (0x80 | (c & 0x3F));
            }
        }
        return position;
    }

    private static CodecException unpairedSurrogate(final char c, final int index, final int charCount) {
        return new CodecException(NAME + ": cannot encode an unpaired UTF-16 surrogate 0x"
            + Integer.toHexString(c) + " at char index " + index + " of a string of length " + charCount);
    }

    @Override
    public String decode(final DirectBuffer buffer, final int offset, final int length) {
        Bounds.checkDecodeRange(NAME, buffer, offset, length);
        if (length == 0) {
            return "";
        }
        final Scratch scratch = SCRATCH.get();
        final byte[] bytes = scratch.bytes(length);
        buffer.getBytes(offset, bytes, 0, length);

        boolean ascii = true;
        for (int i = 0; i < length; i++) {
            if (bytes[i] < 0) {
                ascii = false;
                break;
            }
        }
        if (ascii) {
            // Every byte is a complete, valid code point; ISO-8859-1 maps them 1:1 and yields a compact string.
            return new String(bytes, 0, length, StandardCharsets.ISO_8859_1);
        }

        final ByteBuffer in = scratch.input(bytes, length);
        final CharBuffer out = scratch.output(length); // UTF-8 never yields more UTF-16 units than input bytes
        final CharsetDecoder decoder = scratch.decoder.reset();
        CoderResult result = decoder.decode(in, out, true);
        if (!result.isError()) {
            result = decoder.flush(out);
        }
        if (result.isError()) {
            throw malformed(bytes, length, in.position(), result.length());
        }
        return new String(out.array(), 0, out.position());
    }

    private static CodecException malformed(final byte[] bytes, final int length, final int index, final int badCount) {
        final StringBuilder hex = new StringBuilder();
        for (int i = index; i < Math.min(length, index + badCount); i++) {
            hex.append(hex.isEmpty() ? "0x" : " 0x").append(String.format("%02X", bytes[i] & 0xFF));
        }
        return new CodecException(NAME + ": malformed UTF-8 at byte index " + index + " of " + length
            + " (" + badCount + " invalid byte(s): " + hex + ")");
    }

    @Override
    public String name() {
        return NAME;
    }

    /** Per-thread decoder and scratch space, with reusable NIO views over the retained arrays. */
    private static final class Scratch {
        final CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
        private byte[] byteScratch = new byte[256];
        private ByteBuffer byteView = ByteBuffer.wrap(byteScratch);
        private char[] charScratch = new char[256];
        private CharBuffer charView = CharBuffer.wrap(charScratch);

        /** @return an array of at least {@code length} bytes: the retained one, grown if needed and not too big */
        byte[] bytes(final int length) {
            if (length <= byteScratch.length) {
                return byteScratch;
            }
            final byte[] grown = new byte[length];
            if (length <= MAX_RETAINED_SCRATCH_BYTES) {
                byteScratch = grown;
                byteView = ByteBuffer.wrap(grown);
            }
            return grown;
        }

        /** @return a view of the first {@code length} bytes of {@code bytes}, as returned by {@link #bytes} */
        ByteBuffer input(final byte[] bytes, final int length) {
            final ByteBuffer view = bytes == byteScratch ? byteView : ByteBuffer.wrap(bytes);
            view.clear().limit(length);
            return view;
        }

        /** @return an empty char buffer with room for {@code length} chars, backed by an array at offset 0 */
        CharBuffer output(final int length) {
            if (length > charScratch.length) {
                if (length > MAX_RETAINED_SCRATCH_BYTES) {
                    return CharBuffer.wrap(new char[length]);
                }
                charScratch = new char[length];
                charView = CharBuffer.wrap(charScratch);
            }
            charView.clear().limit(length);
            return charView;
        }
    }
}
