#!/bin/sh
# Guest script of lab/bench/rxe-vs-perftest.sh (runs in each rxe guest through lab/rxe-lab.sh).
# Usage: rxe-vs-perftest-guest.sh <jvm-argfile> <bench-argfile> <lat-iterations> <bw-seconds> [UD|RC]
#
# 2 guests: guest 1 is the server/publisher side, guest 2 the client/subscriber side.
# 1 guest : both sides in this guest, over rxe0 loopback.
# Order, never two measurements at once:
#   1. RC  ib_send_lat -R        (64 B, rdma_cm; guest 1 serves, guest 2 connects, retrying while guest 1 starts)
#   2. UD  ib_send_bw -c UD -R   (64 B, for a fixed time: UD drops datagrams, a fixed count may never complete), or
#      with RC as the last argument RC ib_send_bw -c RC -R (the bus's rate phase then runs RELIABLE)
#   3. both guests wait for each other's perftest to end (files in LAB_SHARED), then
#   4. the bus: io.rdmabus.benchmarks.RxeBusBench (RC RELIABLE ping-pong per idle strategy, BEST_EFFORT or RELIABLE rate).
# Outputs in LAB_OUT: ib_send_lat.txt, ib_send_bw-ud.txt (or -rc), bus.txt, bus-results.properties (client side),
# loadavg.txt (the guest's own load average before and after each step).
set -u
jvm_args=$1 bench_args=$2 iters=$3 bw_seconds=$4 bw_conn=${5:-UD}
case "$bw_conn" in UD|RC) ;; *) echo "bench: the bandwidth step's connection type is UD or RC, not '$bw_conn'" >&2; exit 2 ;; esac
bw_name=ib_send_bw-$(echo "$bw_conn" | tr 'A-Z' 'a-z')
SIZE=64
LAT_PORT=18515
BW_PORT=18516
STEP_TIMEOUT_S=180
CONNECT_RETRY_S=90
server_ip=$(echo "$LAB_GUEST_IPS" | cut -d' ' -f1)
sync_dir=$LAB_SHARED/bench
mkdir -p "$sync_dir"
uptime_s() { cut -d. -f1 /proc/uptime; }
load() { echo "$(date -u +%H:%M:%S) $1: $(cat /proc/loadavg)" >> "$LAB_OUT/loadavg.txt"; }

# perftest_server <port> <cmd...> / perftest_client <port> <server-ip> <cmd...>
perftest_server() { port=$1; shift; timeout "$STEP_TIMEOUT_S" "$@" -d "$LAB_RXE_DEV" -R -F -p "$port"; }
perftest_client() {
  port=$1 ip=$2; shift 2
  end=$(( $(uptime_s) + CONNECT_RETRY_S ))
  while :; do
    timeout "$STEP_TIMEOUT_S" "$@" -d "$LAB_RXE_DEV" -R -F -p "$port" "$ip"
    status=$?
    [ "$status" = 0 ] && return 0
    [ "$status" = 124 ] && return 124
    [ "$(uptime_s)" -lt "$end" ] || return "$status"
    echo "perftest: server not ready on $ip:$port, retrying"
    sleep 1
  done
}

# step <name> <port> <cmd...>: this guest's side of one perftest pair; output to LAB_OUT/<name>.txt and the console,
# exit status to LAB_OUT/<name>.rc (POSIX sh has no pipefail).
step() {
  name=$1 port=$2; shift 2
  load "before $name"
  echo "== $name: $* (guest $LAB_GUEST_INDEX of $LAB_GUEST_COUNT)"
  if [ "$LAB_GUEST_COUNT" -ge 2 ]; then
    case "$LAB_GUEST_INDEX" in
      1) { perftest_server "$port" "$@"; echo $? > "$LAB_OUT/$name.rc"; } 2>&1 | tee "$LAB_OUT/$name.txt" ;;
      2) { perftest_client "$port" "$server_ip" "$@"; echo $? > "$LAB_OUT/$name.rc"; } 2>&1 | tee "$LAB_OUT/$name.txt" ;;
      *) echo 0 > "$LAB_OUT/$name.rc" ;;
    esac
  else
    # one guest: the server in the background, the client over rxe0 loopback to this guest's own address
    perftest_server "$port" "$@" > "$LAB_OUT/$name-server.txt" 2>&1 &
    server_pid=$!
    sleep 1
    { perftest_client "$port" "$LAB_SELF_IP" "$@"; echo $? > "$LAB_OUT/$name.rc"; } 2>&1 | tee "$LAB_OUT/$name.txt"
    wait "$server_pid"
    echo $? > "$LAB_OUT/$name-server.rc"
    echo "-- server side:"; cat "$LAB_OUT/$name-server.txt"
  fi
  echo "== $name exit status $(cat "$LAB_OUT/$name.rc")"
  load "after $name"
}

rc=0
step ib_send_lat "$LAT_PORT" ib_send_lat -s "$SIZE" -n "$iters"
[ "$(cat "$LAB_OUT/ib_send_lat.rc")" = 0 ] || rc=1
step "$bw_name" "$BW_PORT" ib_send_bw -c "$bw_conn" -s "$SIZE" -D "$bw_seconds"
[ "$(cat "$LAB_OUT/$bw_name.rc")" = 0 ] || rc=1

# Never perftest and the bus at once: wait (bounded) until every guest's perftest is over.
touch "$sync_dir/perftest-done.$LAB_GUEST_INDEX"
end=$(( $(uptime_s) + 2 * STEP_TIMEOUT_S ))
i=1
while [ "$i" -le "$LAB_GUEST_COUNT" ]; do
  if [ -e "$sync_dir/perftest-done.$i" ]; then i=$((i + 1)); continue; fi
  [ "$(uptime_s)" -lt "$end" ] || { echo "bench: guest $i never finished perftest"; rc=1; break; }
  sleep 1
done

if [ "$LAB_GUEST_COUNT" -ge 2 ]; then
  case "$LAB_GUEST_INDEX" in
    1) role="--role server" ;;
    2) role="--role client --peer $server_ip --results $LAB_OUT/bus-results.properties" ;;
    *) exit "$rc" ;;
  esac
else
  role="--role both --results $LAB_OUT/bus-results.properties"
fi
load "before bus"
echo "== bus over rdma: RxeBusBench $role --bind $LAB_SELF_IP --sync $sync_dir @$bench_args"
# shellcheck disable=SC2086
{ "$JAVA_HOME/bin/java" -XX:-UsePerfData -Djava.io.tmpdir="$TMPDIR" @"$jvm_args" io.rdmabus.benchmarks.RxeBusBench \
    $role --bind "$LAB_SELF_IP" --sync "$sync_dir" @"$bench_args"; echo $? > "$LAB_OUT/bus.rc"; } 2>&1 | tee "$LAB_OUT/bus.txt"
echo "== bus exit status $(cat "$LAB_OUT/bus.rc")"
load "after bus"
[ "$(cat "$LAB_OUT/bus.rc")" = 0 ] || rc=1
exit "$rc"
