#!/bin/sh
# Lab probe of rxe itself (guest script for lab/rxe-lab.sh, 2 guests; no rdma-bus code): what an rdma_cm handshake
# or teardown around a link flap does to the rxe device of the guest whose link flaps. Guest 1 serves one rping
# connection at a time; guest 2 runs the cases in order, each followed by a probe (a complete rping connection,
# up to 3 tries) that prints "RESULT <case>: ok|FAIL". A FAIL leaves the device deaf, so the cases after it say
# nothing; the last step re-creates the device and probes once more.
#   A  a plain flap, no rdma_cm activity
#   D  an established connection whose QP fails while the link is down, torn down (DREQ) only after the link is
#      back: what the rdma transport does (docs/rdma-transport.md, "Port down: the DREQ waits")
#   E  a handshake in flight when the link goes down: the REQ to an address that never answers (a static
#      neighbour entry for an unused address), retransmitted by the kernel while the link is down
# Usage: sudo lab/rxe-lab.sh --guests 2 -- lab/selftest/linkflap-cm.sh
# Results: docs/rdma-transport-history.md ("Incidents behind the failure handling").
set -u
if [ "$LAB_GUEST_COUNT" -lt 2 ]; then
  echo "linkflap-cm needs 2 guests, got $LAB_GUEST_COUNT (use --guests 2)"
  exit 2
fi
srv=$(echo "$LAB_GUEST_IPS" | cut -d' ' -f1)
D=$LAB_RXE_DEV
GHOST=10.77.0.250
counters() {
  printf '== %s: port %s' "$1" "$(cat /sys/class/infiniband/"$D"/ports/1/state 2>/dev/null)"
  for c in sent_pkts rcvd_pkts; do printf ' %s=%s' $c "$(cat /sys/class/infiniband/"$D"/ports/1/hw_counters/$c 2>/dev/null)"; done
  echo
}
probe() {
  for k in 1 2 3; do
    if timeout 20 rping -c -a "$srv" -p 7471 -C 2 -S 64 >/dev/null 2>&1; then echo "RESULT $1: ok (try $k)"; return 0; fi
    sleep 2
  done
  echo "RESULT $1: FAIL"; counters "$1 after the failed probe"; return 1
}
link_down() { ip link set eth0 down; }
link_up() {
  ip link set eth0 up
  ip neigh replace "$GHOST" lladdr 52:54:00:de:ad:fa dev eth0 nud permanent
  sleep 4
}
case "$LAB_GUEST_INDEX" in
  1)
    # serve until guest 2 says it is done (or 500 s)
    end=$(( $(cut -d. -f1 /proc/uptime) + 500 ))
    while [ ! -e "$LAB_SHARED/linkflap-done" ] && [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ]; do
      timeout 30 rping -s -a 0.0.0.0 -p 7471 >/dev/null 2>&1
    done ;;
  2)
    rc=0
    link_up; sleep 15; counters start; probe start || rc=1
    echo "## A: a plain flap"
    link_down; sleep 8; link_up; counters A; probe A || rc=1
    echo "## D: an established connection fails while the link is down; its DREQ after the link is back"
    for _ in 1 2 3 4 5; do  # guest 1's server may be between two connections: retry until one runs
      timeout 120 rping -c -a "$srv" -p 7471 -C 100000000 -S 64 >/dev/null 2>&1 &
      p=$!; sleep 4; kill -0 $p 2>/dev/null && break
    done
    echo "D: $(rdma res show cm_id | grep -c rping) rping cm id(s) before the link goes down"; kill -STOP $p
    link_down; sleep 8; link_up; kill -CONT $p; kill $p; wait $p 2>/dev/null; sleep 2; counters D; probe D || rc=1
    echo "## E: a handshake in flight when the link goes down"
    timeout 90 rping -c -a "$GHOST" -p 7471 -C 2 -S 64 >/dev/null 2>&1 &
    p=$!; sleep 2; echo "E: $(rdma res show cm_id | grep -c rping) rping cm id(s) before the link goes down"
    link_down; sleep 10; link_up; kill $p 2>/dev/null; wait $p 2>/dev/null; sleep 2; counters E
    probe E && rc=1   # expected to fail on the 6.1 guest kernel: say so if it no longer does
    echo "## re-creating $D"
    rdma link delete "$D" && rdma link add "$D" type rxe netdev eth0; sleep 3; probe re-created || rc=1
    touch "$LAB_SHARED/linkflap-done"
    [ "$rc" = 0 ] && echo "linkflap-cm: as documented (A, D ok; E deaf until the device is re-created)" \
      || echo "linkflap-cm: NOT as documented (see the RESULT lines)"
    exit "$rc" ;;
esac
exit 0
