package io.rdmabus.codecs;

/**
 * Maps the public enums to and from the generated SBE enums. Decoding works on the raw wire value, so that the
 * SBE null value and undeclared values become a {@link io.rdmabus.codec.CodecException} naming the field rather than
 * the generated code's {@code IllegalArgumentException} or a {@code NULL_VAL} constant leaking to the user.
 */
final class SbeEnums {
    private static final short SIDE_BUY = io.rdmabus.codecs.sbe.md.AggressorSide.BUY.value();
    private static final short SIDE_SELL = io.rdmabus.codecs.sbe.md.AggressorSide.SELL.value();
    private static final short BOOK_BID = io.rdmabus.codecs.sbe.md.BookSide.BID.value();
    private static final short BOOK_ASK = io.rdmabus.codecs.sbe.md.BookSide.ASK.value();
    private static final short ACTION_NEW = io.rdmabus.codecs.sbe.md.BookAction.NEW.value();
    private static final short ACTION_CHANGE = io.rdmabus.codecs.sbe.md.BookAction.CHANGE.value();
    private static final short ACTION_DELETE = io.rdmabus.codecs.sbe.md.BookAction.DELETE.value();

    private SbeEnums() {
    }

    static io.rdmabus.codecs.sbe.md.AggressorSide toSbe(final AggressorSide side) {
        return switch (side) {
            case BUY -> io.rdmabus.codecs.sbe.md.AggressorSide.BUY;
            case SELL -> io.rdmabus.codecs.sbe.md.AggressorSide.SELL;
        };
    }

    static io.rdmabus.codecs.sbe.md.BookSide toSbe(final BookSide side) {
        return switch (side) {
            case BID -> io.rdmabus.codecs.sbe.md.BookSide.BID;
            case ASK -> io.rdmabus.codecs.sbe.md.BookSide.ASK;
        };
    }

    static io.rdmabus.codecs.sbe.md.BookAction toSbe(final BookAction action) {
        return switch (action) {
            case NEW -> io.rdmabus.codecs.sbe.md.BookAction.NEW;
            case CHANGE -> io.rdmabus.codecs.sbe.md.BookAction.CHANGE;
            case DELETE -> io.rdmabus.codecs.sbe.md.BookAction.DELETE;
        };
    }

    static AggressorSide aggressorSide(final String codecName, final short raw) {
        if (raw == SIDE_BUY) {
            return AggressorSide.BUY;
        }
        if (raw == SIDE_SELL) {
            return AggressorSide.SELL;
        }
        throw SbeMessageCodec.badEnum(codecName, "Trade.aggressorSide", raw,
            io.rdmabus.codecs.sbe.md.AggressorSide.NULL_VAL.value(), SIDE_BUY + "=BUY, " + SIDE_SELL + "=SELL");
    }

    static BookSide bookSide(final String codecName, final short raw) {
        if (raw == BOOK_BID) {
            return BookSide.BID;
        }
        if (raw == BOOK_ASK) {
            return BookSide.ASK;
        }
        throw SbeMessageCodec.badEnum(codecName, "BookLevelUpdate.side", raw,
            io.rdmabus.codecs.sbe.md.BookSide.NULL_VAL.value(), BOOK_BID + "=BID, " + BOOK_ASK + "=ASK");
    }

    static BookAction bookAction(final String codecName, final short raw) {
        if (raw == ACTION_NEW) {
            return BookAction.NEW;
        }
        if (raw == ACTION_CHANGE) {
            return BookAction.CHANGE;
        }
        if (raw == ACTION_DELETE) {
            return BookAction.DELETE;
        }
        throw SbeMessageCodec.badEnum(codecName, "BookLevelUpdate.action", raw,
            io.rdmabus.codecs.sbe.md.BookAction.NULL_VAL.value(),
            ACTION_NEW + "=NEW, " + ACTION_CHANGE + "=CHANGE, " + ACTION_DELETE + "=DELETE");
    }
}
