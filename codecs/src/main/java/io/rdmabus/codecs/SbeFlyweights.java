package io.rdmabus.codecs;

import io.rdmabus.codecs.sbe.md.BookLevelUpdateDecoder;
import io.rdmabus.codecs.sbe.md.BookLevelUpdateEncoder;
import io.rdmabus.codecs.sbe.md.MessageHeaderDecoder;
import io.rdmabus.codecs.sbe.md.MessageHeaderEncoder;
import io.rdmabus.codecs.sbe.md.QuoteDecoder;
import io.rdmabus.codecs.sbe.md.QuoteEncoder;
import io.rdmabus.codecs.sbe.md.TradeDecoder;
import io.rdmabus.codecs.sbe.md.TradeEncoder;

/**
 * One set of the generated SBE flyweights per thread. Flyweights are mutable cursors, so sharing them would make the
 * codecs thread-unsafe, and allocating them per message would put garbage on the hot path. A flyweight holds the
 * buffer it last wrapped only until the next wrap on the same thread; the codecs never read through it afterwards.
 */
final class SbeFlyweights {
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

    static SbeFlyweights get() {
        return PER_THREAD.get();
    }
}
