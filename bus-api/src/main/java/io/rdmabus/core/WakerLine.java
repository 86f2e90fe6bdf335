package io.rdmabus.core;

import io.rdmabus.spi.IdleSleeper;

/**
 * The two fields of {@link WakeableIdleStrategy} that a producer reads after every message it hands to the delivering
 * thread ({@link WakeableIdleStrategy#wake()}), on a cache line of their own: 64 bytes of padding before and after
 * them, as classes one above the other (the JVM lays out a superclass's fields before its subclass's; within a class
 * it orders them as it likes). The padding is bytes, not longs: the JVM fills a gap that alignment leaves in a
 * superclass (the 4 bytes after a compressed object header, before a long) with a subclass's field, which put
 * {@code idler} at byte 12, next to the header. {@code WakerLineTest} checks the layout.
 *
 * <p>Why: the delivering thread writes its own fields at every idle step (its count of empty duty cycles) and when it
 * finds work. On the line the producer reads, each of those writes took the line away from the producer's CPU, so
 * whenever the delivering thread kept up, and so idled between messages, each message moved that line between the
 * CPUs (docs/benchmarks.md, "The ring hand-off").
 */
final class WakerLine {
    private WakerLine() {
    }

    /** 64 bytes before the fields. */
    @SuppressWarnings("unused")
    abstract static class Before {
        private byte p00, p01, p02, p03, p04, p05, p06, p07;
        private byte p08, p09, p10, p11, p12, p13, p14, p15;
        private byte p16, p17, p18, p19, p20, p21, p22, p23;
        private byte p24, p25, p26, p27, p28, p29, p30, p31;
        private byte p32, p33, p34, p35, p36, p37, p38, p39;
        private byte p40, p41, p42, p43, p44, p45, p46, p47;
        private byte p48, p49, p50, p51, p52, p53, p54, p55;
        private byte p56, p57, p58, p59, p60, p61, p62, p63;
    }

    /** The fields; what they mean: {@link WakeableIdleStrategy}. */
    abstract static class Fields extends Before {
        /** The agent's thread while it is in its parking phase and no waker has taken it yet, else null. */
        volatile Thread idler;
        /**
         * Where the parking phase sleeps instead of parking, or null: set once by the thread that starts the transport,
         * cleared by the agent's thread once the sleeper says it is closed.
         */
        volatile IdleSleeper sleeper;
    }

    /** 64 bytes after the fields. */
    @SuppressWarnings("unused")
    abstract static class After extends Fields {
        private byte q00, q01, q02, q03, q04, q05, q06, q07;
        private byte q08, q09, q10, q11, q12, q13, q14, q15;
        private byte q16, q17, q18, q19, q20, q21, q22, q23;
        private byte q24, q25, q26, q27, q28, q29, q30, q31;
        private byte q32, q33, q34, q35, q36, q37, q38, q39;
        private byte q40, q41, q42, q43, q44, q45, q46, q47;
        private byte q48, q49, q50, q51, q52, q53, q54, q55;
        private byte q56, q57, q58, q59, q60, q61, q62, q63;
    }
}
