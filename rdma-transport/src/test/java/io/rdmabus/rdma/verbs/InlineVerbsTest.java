package io.rdmabus.rdma.verbs;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The data-path downcalls pass pointers as 64-bit addresses and the {@code int} where C expects it: checked on the
 * host with libc functions of the same shape in place of the provider's ({@code memcmp} for the two posts'
 * {@code (ptr, ptr, ptr)}, {@code wctomb} for the poll's {@code (ptr, int, ptr)}, whose third argument it does not
 * read). A request, list or completion array refuses to give its address once closed, so nothing posts freed memory.
 * The real providers' calls run in the rxe lab (every rdma test).
 */
class InlineVerbsTest {
    private static final MemorySegment MEMCMP = Linker.nativeLinker().defaultLookup().findOrThrow("memcmp");
    private static final MemorySegment WCTOMB = Linker.nativeLinker().defaultLookup().findOrThrow("wctomb");
    /** {@code wctomb} as the poll, {@code memcmp} as both posts. */
    private static final InlineVerbs VERBS = new InlineVerbs(WCTOMB, MEMCMP, MEMCMP);

    @Test
    void thePostsPassEachPointerArgumentThrough() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment a = arena.allocateFrom("rdma-bus A");
            MemorySegment b = arena.allocateFrom("rdma-bus B");
            // memcmp(a, b, n): the third "pointer" is a length here, passed the same way
            assertEquals(0, VERBS.postSend(a.address(), b.address(), 9), "the first 9 bytes are equal");
            assertTrue(VERBS.postSend(a.address(), b.address(), 10) < 0, "'A' < 'B' at the tenth byte");
            assertTrue(VERBS.postRecv(b.address(), a.address(), 10) > 0, "'B' > 'A' at the tenth byte");
            assertEquals(0, VERBS.postRecv(b.address(), a.address(), 9), "the first 9 bytes are equal");
        }
    }

    @Test
    void thePollPassesItsCountBetweenTwoPointers() {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment out = arena.allocate(16);
            assertEquals(1, VERBS.pollCq(out.address(), 'Q', 0L), "wctomb writes one byte for 'Q'");
            assertEquals((byte) 'Q', out.get(ValueLayout.JAVA_BYTE, 0));
        }
    }

    @Test
    void aClosedRequestListOrCompletionArrayGivesNoAddress() {
        RecvRequest recv = new RecvRequest();
        SendRequest send = new SendRequest();
        RecvRequestList recvList = new RecvRequestList(4);
        SendRequestList sendList = new SendRequestList(4);
        WorkCompletions wcs = new WorkCompletions(4);
        recv.close();
        send.close();
        recvList.close();
        sendList.close();
        wcs.close();
        assertThrows(IllegalStateException.class, recv::wrAddress);
        assertThrows(IllegalStateException.class, send::wrAddress);
        assertThrows(IllegalStateException.class, recvList::firstAddress);
        assertThrows(IllegalStateException.class, sendList::firstAddress);
        assertThrows(IllegalStateException.class, wcs::address);
    }
}
