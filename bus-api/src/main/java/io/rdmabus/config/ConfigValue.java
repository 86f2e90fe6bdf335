package io.rdmabus.config;

/**
 * One effective setting and where it came from.
 *
 * @param key         the configuration key, e.g. {@code rdmabus.idle-strategy} or {@code tcp.bind}
 * @param value       the value in effect (the default when no source set it)
 * @param source      {@code default}, {@code code}, {@code file:PATH}, {@code env:NAME}, {@code sysprop:NAME} or
 *                    {@code command line}
 * @param description one line: what it does
 * @param secret      true if the value must never be printed
 */
public record ConfigValue(String key, String value, String source, String description, boolean secret) {
    /** The source of a value no one set. */
    public static final String DEFAULT = "default";
    /** The source of a value set by a {@link io.rdmabus.BusBuilder} call. */
    public static final String CODE = "code";
    /** The source of a value given to {@link io.rdmabus.BusBuilder#commandLine(String, String)}. */
    public static final String COMMAND_LINE = "command line";

    /** @return the value to print: a set secret is masked ({@code none}, an explicit "no secret", is shown) */
    public String shown() {
        return secret && !value.isEmpty() && !"none".equals(value) ? "****" : value;
    }
}
