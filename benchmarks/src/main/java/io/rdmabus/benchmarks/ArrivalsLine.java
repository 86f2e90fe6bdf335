package io.rdmabus.benchmarks;

/**
 * {@link Arrivals}'s fields between 128 bytes of padding on either side, as classes one above the other: the JVM lays
 * out a superclass's fields before its subclass's (within a class it orders them as it likes). The padding is longs,
 * and so are the fields, so no field fills the 4-byte gap after a compressed object header. {@code ArrivalsTest}
 * checks the layout.
 */
final class ArrivalsLine {
    private ArrivalsLine() {
    }

    /** 128 bytes before the fields. */
    @SuppressWarnings("unused")
    abstract static class Before {
        private long p00, p01, p02, p03, p04, p05, p06, p07, p08, p09, p10, p11, p12, p13, p14, p15;
    }

    /** What they mean: {@link Arrivals}. */
    abstract static class Fields extends Before {
        /** Messages so far: the receiving thread's release stores, any thread's volatile reads. */
        volatile long count;
        volatile long expected;
        volatile long lastNs;
    }

    /** 128 bytes after the fields. */
    @SuppressWarnings("unused")
    abstract static class After extends Fields {
        private long q00, q01, q02, q03, q04, q05, q06, q07, q08, q09, q10, q11, q12, q13, q14, q15;
    }
}
