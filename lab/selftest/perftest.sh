#!/bin/sh
# Lab self-test (guest script for lab/rxe-lab.sh, 2 guests): perftest over rxe between
# two guests. Guest 1 serves, guest 2 connects (retrying while guest 1 starts).
#   RC  ib_send_lat -R           (rdma_cm, 64 B, a fixed number of iterations)
#   UD  ib_send_bw -c UD -R -D   (rdma_cm, 64 B, for a fixed time: UD may drop datagrams,
#                                 and a fixed count then never completes)
# Usage: sudo lab/rxe-lab.sh --guests 2 -- lab/selftest/perftest.sh [lat-iterations] [ud-seconds]
set -u
ITERS=${1:-2000}
UD_SECONDS=${2:-10}
SIZE=64
# Bound every perftest run: a lost peer must fail the test, not hang the guest.
STEP_TIMEOUT_S=180
if [ "$LAB_GUEST_COUNT" -lt 2 ]; then
  echo "perftest self-test needs 2 guests, got $LAB_GUEST_COUNT (use --guests 2)"
  exit 2
fi
server_ip=$(echo "$LAB_GUEST_IPS" | cut -d' ' -f1)

# run_pair <port> <perftest command...>: guest 1 serves once; guest 2 retries for up to 60 s.
run_pair() {
  port=$1; shift
  case "$LAB_GUEST_INDEX" in
    1) timeout "$STEP_TIMEOUT_S" "$@" -d "$LAB_RXE_DEV" -R -F -p "$port" ;;
    2)
      end=$(( $(cut -d. -f1 /proc/uptime) + 60 ))
      while :; do
        timeout "$STEP_TIMEOUT_S" "$@" -d "$LAB_RXE_DEV" -R -F -p "$port" "$server_ip"
        status=$?
        [ "$status" = 0 ] && return 0
        [ "$status" = 124 ] && return 124
        [ "$(cut -d. -f1 /proc/uptime)" -lt "$end" ] || return "$status"
        echo "perftest: server not ready on port $port, retrying"
        sleep 1
      done ;;
    *) return 0 ;;
  esac
}

# record <name> <port> <command...>: run_pair, output also to $LAB_OUT/<name>.txt, keeping
# perftest's exit status (POSIX sh has no pipefail).
record() {
  name=$1; shift
  { run_pair "$@"; echo $? > "$TMPDIR/$name.rc"; } 2>&1 | tee "$LAB_OUT/$name.txt"
  status=$(cat "$TMPDIR/$name.rc")
  echo "== $name exit status $status"
  return "$status"
}

rc=0
echo "== RC ib_send_lat -R, ${SIZE} B, $ITERS iterations"
record ib_send_lat-rc 18515 ib_send_lat -s "$SIZE" -n "$ITERS" || rc=1
echo "== UD ib_send_bw -c UD -R, ${SIZE} B, ${UD_SECONDS} s"
record ib_send_bw-ud 18516 ib_send_bw -c UD -s "$SIZE" -D "$UD_SECONDS" || rc=1

exit "$rc"
