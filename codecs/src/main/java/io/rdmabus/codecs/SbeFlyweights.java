package io.rdmabus.codecs;

import io.rdmabus.codecs.sbe.md.BookLevelUpdateDecoder;
import io.rdmabus.codecs.sbe.md.BookLevelUpdateEncoder;
import io.rdmabus.codecs.sbe.md.MessageHeaderDecoder;
import io.rdmabus.codecs.sbe.md.MessageHeaderEncoder;
import io.rdmabus.codecs.sbe.md.QuoteDecoder;
import io.rdmabus.codecs.sbe.md.QuoteEncoder;
import io.rdmabus.codecs.sbe.md.TradeDecoder;
import io.rdmabus.codecs.sbe.md.TradeEncoder;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * One set of the generated SBE flyweights per thread. Flyweights are mutable cursors, so sharing them would make the
 * codecs thread-unsafe, and allocating them per message would put garbage on the hot path. After every decode the
 * decoders are re-pointed at an empty buffer ({@link #releaseDecoders()}), so no receive buffer stays referenced
 * once decode returns, as the {@link io.rdmabus.codec.Codec} contract requires. Encoders keep pointing at the last
 * destination until the next encode on the thread; they are never read through afterwards.
 */
final class SbeFlyweights {
    /** Wrapped in place of a receive buffer after decoding; never read (wrap and composite access do no I/O). */
    private static final DirectBuffer RELEASED = new UnsafeBuffer(new byte[0]);
    private static final ThreadLocal<SbeFlyweights> PER_THREAD = ThreadLocal.withInitial(SbeFlyweights::new);

    final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    final QuoteEncoder quoteEncoder = new QuoteEncoder();
    final QuoteDecoder quoteDecoder = new QuoteDecoder();
    final TradeEncoder tradeEncoder = new TradeEncoder();
    final TradeDecoder tradeDecoder = new TradeDecoder();
    final BookLevelUpdateEncoder bookLevelUpdateEncoder = new BookLevelUpdateEncoder();
    final BookLevelUpdateDecoder bookLevelUpdateDecoder = new BookLevelUpdateDecoder();

    private SbeFlyweights() {
    }

    /** Drops every decoder's reference to the last receive buffer, composite price flyweights included. */
    void releaseDecoders() {
        headerDecoder.wrap(RELEASED, 0);
        quoteDecoder.wrap(RELEASED, 0, QuoteDecoder.BLOCK_LENGTH, QuoteDecoder.SCHEMA_VERSION);
        quoteDecoder.bidPrice();
        quoteDecoder.askPrice();
        tradeDecoder.wrap(RELEASED, 0, TradeDecoder.BLOCK_LENGTH, TradeDecoder.SCHEMA_VERSION);
        tradeDecoder.price();
        bookLevelUpdateDecoder.wrap(
            RELEASED, 0, BookLevelUpdateDecoder.BLOCK_LENGTH, BookLevelUpdateDecoder.SCHEMA_VERSION);
        bookLevelUpdateDecoder.price();
    }

    /** @return whether any decoder still references {@code buffer}; for tests of the release */
    boolean decodersReference(final DirectBuffer buffer) {
        return headerDecoder.buffer() == buffer
            || quoteDecoder.buffer() == buffer || quoteDecoder.bidPrice().buffer() == buffer
            || quoteDecoder.askPrice().buffer() == buffer
            || tradeDecoder.buffer() == buffer || tradeDecoder.price().buffer() == buffer
            || bookLevelUpdateDecoder.buffer() == buffer || bookLevelUpdateDecoder.price().buffer() == buffer;
    }

    static SbeFlyweights get() {
        return PER_THREAD.get();
    }
}
