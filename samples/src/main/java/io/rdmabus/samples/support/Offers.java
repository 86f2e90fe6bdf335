package io.rdmabus.samples.support;

import io.rdmabus.BusPublication;
import io.rdmabus.PublishStatus;

/** How the CLI's and the benchmarks' publishing loops offer a run of values (their {@code --batch} options). */
public final class Offers {
    private Offers() {
    }

    /**
     * Offers {@code values[0]} to {@code values[length - 1]}: one value with the single offer (the path of a publisher
     * that sends one message at a time), more with the batch offer ({@link BusPublication#offer(Object[], int, int)}).
     *
     * @param publication where to offer them
     * @param values      the values
     * @param length      how many, at least 1
     * @return how many were taken (1 to {@code length}), or the refusal's {@link PublishStatus} code (negative)
     */
    public static <T> int offer(final BusPublication<T> publication, final T[] values, final int length) {
        if (length == 1) {
            final int status = publication.offer(values[0]);
            return status == PublishStatus.OK ? 1 : status;
        }
        return publication.offer(values, 0, length);
    }
}
