package io.rdmabus.rdma.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The transport tells a dial that got no rdma_cm reply at all (rxe's deaf device) from one that was refused. */
class RdmaConnectExceptionTest {
    @Test
    void aTimeoutWithoutAnyEventIsMarkedAsSuch() {
        RdmaConnectException e = RdmaConnectException.noEventWithin("connect", 15_000);
        assertTrue(e.noEvent());
        assertEquals(CmEventType.UNKNOWN, e.eventType());
        assertEquals("connect failed: got UNKNOWN (status 0): no event within 15000 ms", e.getMessage());
    }

    @Test
    void aRejectOrAnUnexpectedEventIsNotSilent() {
        assertFalse(new RdmaConnectException("connect", CmEventType.REJECTED, 28, "expected ESTABLISHED").noEvent());
        // an event whose type this build does not know is still an event
        assertFalse(new RdmaConnectException("connect", CmEventType.UNKNOWN, 0, "expected ESTABLISHED").noEvent());
    }
}
