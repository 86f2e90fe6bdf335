package io.rdmabus.samples.cli;

import io.rdmabus.Delivery;

import picocli.CommandLine.ITypeConverter;

/** Parses {@code reliable} / {@code best-effort} for {@code --delivery}. */
final class Topics implements ITypeConverter<Delivery> {
    Topics() {
    }

    @Override
    public Delivery convert(final String value) {
        return switch (value) {
            case "reliable", "RELIABLE" -> Delivery.RELIABLE;
            case "best-effort", "BEST_EFFORT" -> Delivery.BEST_EFFORT;
            default -> throw new picocli.CommandLine.TypeConversionException("use 'reliable' or 'best-effort', not '" + value + "'");
        };
    }
}
