#!/usr/bin/env bash
# Bus over RDMA vs perftest on rxe, in the QEMU lab: in ONE lab run per topology, perftest first
# (RC `ib_send_lat -R`, UD `ib_send_bw -c UD -R` or with --rate-delivery reliable RC `ib_send_bw -c RC -R`, 64 B),
# then the same two measurements through the bus over the rdma transport (RELIABLE 64 B ping-pong round trip per idle
# strategy, BEST_EFFORT or RELIABLE 64 B message rate), one after the other, never at the same time. Prints a table and the ratio lines, writes raw logs + summary.md to the output folder.
#
#   rxe-vs-perftest.sh [--guests 2|1|2,1] [--count N] [--warmup N] [--warmup-s S] [--ud-seconds S] [--rate-s S] [--rate-warmup-s S]
#                      [--rate-batch N] [--rate-delivery best-effort|reliable] [--idle backoff,yielding,busy-spin] [--subscriber copy|in-place] [--property KEY=VALUE]...
#                      [--threading DEDICATED|SHARED|INVOKER] [--jfr] [--java-opt OPT]... [--out DIR] [--timeout-s S]
#
#   --guests     2 = guest 1 server/publisher, guest 2 client/subscriber (cross-host, default); 1 = both in one
#                guest over rxe0 loopback; 2,1 = both topologies, one lab run each
#   --count      ib_send_lat iterations and measured bus round trips per idle strategy (default 2000)
#   --warmup     bus round trips before measuring (default 1000; perftest has its own few warm-up iterations)
#   --warmup-s   and at least this many seconds of them (default 30): under TCG the JIT needs time, and with a count
#                alone the phase measured first came out slowest, whatever its idle strategy
#   --ud-seconds ib_send_bw duration (default 10); --rate-s: measured seconds of the bus rate (default 10,
#                after --rate-warmup-s, default 15, of unmeasured publishing: the JIT under TCG needs that long)
#   --rate-batch messages per offer in the bus rate phase (default 1); above 1 the publisher uses the batch offer,
#                which posts a batch's messages with one ibv_post_send (over RC, one per connection); perftest's
#                ib_send_bw posts one at a time
#   --rate-delivery the rate phase's topic (default best-effort: UD, against ib_send_bw -c UD); reliable: RC, lossless
#                and bound by the subscriber's credits, against ib_send_bw -c RC
#   --idle       idle strategies of the bus ping phases (default backoff,yielding,busy-spin); the rate phase: backoff
#   --subscriber the ping phases' subscribers: copy (Bus.subscribe, default) or in-place (Bus.subscribeInPlace, zero-copy)
#   --property   extra rdma transport property for every bus (repeatable), e.g. --property rdma.ud.mode=rc
#   --threading  the buses' threading mode (default SHARED): DEDICATED (the rdma poller and the delivery agent on
#                threads of their own), SHARED (one shared thread), INVOKER (the bench's waiting threads call Bus.doWork())
#   --jfr        record each guest's bus JVM with JFR (settings=profile, thread CPU load every 1 s) into
#                <out>/guests<N>/guest<i>/bus.jfr (the guest's /mnt/out); slows the bus: profile with it, never rate
#   --java-opt   extra JVM option for every bus JVM in the guests (repeatable), after the bench's own; the bench runs
#                C1 only (-XX:TieredStopAtLevel=1, see below): --java-opt -XX:TieredStopAtLevel=4 for tiered C1+C2
#
# The guests have one vCPU each unless RXE_LAB_CPUS says otherwise (lab/rxe-lab.sh); the summary says how many.
# Takes the shared lab lock (/var/tmp/rdma-bus-lab.lock, or RXE_LAB_LOCK; RXE_LAB_LOCK=none if the caller already
# holds it) only around the lab run, after building. Exit: 0 if every measurement of every topology completed;
# 1 if any is missing or failed (the summary says which, and prints no ratio for it); 77 if the lab cannot run.
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$BENCH_DIR/../.." && pwd)
WORK=${RXE_LAB_WORK:-/var/tmp/rdma-bus-lab}
LOCK=${RXE_LAB_LOCK:-/var/tmp/rdma-bus-lab.lock}
TOPOLOGIES=2
COUNT=2000
WARMUP=1000
WARMUP_S=30
UD_SECONDS=10
RATE_S=10
RATE_WARMUP_S=15
RATE_BATCH=1
RATE_DELIVERY=best-effort
IDLES=backoff,yielding,busy-spin
SUBSCRIBER=copy
THREADING=SHARED
OUT=
TIMEOUT_S=900
PROPERTIES=()
JFR=0
JAVA_OPTS=()

usage() { sed -n '2,33p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }
while [ $# -gt 0 ]; do
  case "$1" in
    --guests) TOPOLOGIES=${2:?}; shift 2 ;;
    --count) COUNT=${2:?}; shift 2 ;;
    --warmup) WARMUP=${2:?}; shift 2 ;;
    --warmup-s) WARMUP_S=${2:?}; shift 2 ;;
    --ud-seconds) UD_SECONDS=${2:?}; shift 2 ;;
    --rate-s) RATE_S=${2:?}; shift 2 ;;
    --rate-warmup-s) RATE_WARMUP_S=${2:?}; shift 2 ;;
    --rate-batch) RATE_BATCH=${2:?}; shift 2 ;;
    --rate-delivery) RATE_DELIVERY=${2:?}; shift 2 ;;
    --idle) IDLES=${2:?}; shift 2 ;;
    --subscriber) SUBSCRIBER=${2:?}; shift 2 ;;
    --threading) THREADING=${2:?}; shift 2 ;;
    --out) OUT=${2:?}; shift 2 ;;
    --property) [[ ${2:-} =~ ^rdma\.[a-z.]+=[^[:space:]]+$ ]] || { echo "rxe-vs-perftest: --property wants rdma.KEY=VALUE" >&2; exit 2; }
      PROPERTIES+=("$2"); shift 2 ;;
    --timeout-s) TIMEOUT_S=${2:?}; shift 2 ;;
    --jfr) JFR=1; shift ;;
    --java-opt) [[ ${2:-} =~ ^-[^[:space:]#]+$ ]] || { echo "rxe-vs-perftest: --java-opt wants one JVM option (no spaces, no '#')" >&2; exit 2; }
      JAVA_OPTS+=("$2"); shift 2 ;;
    -h|--help) usage ;;
    *) echo "rxe-vs-perftest: unknown argument '$1'" >&2; usage ;;
  esac
done
case "$RATE_DELIVERY" in
  best-effort) BW_CONN=UD BENCH_DELIVERY=BEST_EFFORT ;;
  reliable) BW_CONN=RC BENCH_DELIVERY=RELIABLE ;;
  *) echo "rxe-vs-perftest: --rate-delivery wants best-effort or reliable" >&2; exit 2 ;;
esac
BW_NAME=ib_send_bw-$(echo "$BW_CONN" | tr 'A-Z' 'a-z')
[[ $SUBSCRIBER =~ ^(copy|in-place)$ ]] || { echo "rxe-vs-perftest: --subscriber wants copy or in-place" >&2; exit 2; }
[[ $THREADING =~ ^(DEDICATED|SHARED|INVOKER)$ ]] || { echo "rxe-vs-perftest: --threading wants DEDICATED, SHARED or INVOKER" >&2; exit 2; }
[[ $TOPOLOGIES =~ ^[12](,[12])*$ ]] || { echo "rxe-vs-perftest: --guests wants 2, 1 or a list like 2,1" >&2; exit 2; }
for v in "$COUNT" "$WARMUP" "$WARMUP_S" "$UD_SECONDS" "$RATE_S" "$RATE_WARMUP_S" "$RATE_BATCH" "$TIMEOUT_S"; do
  is_uint "$v" || { echo "rxe-vs-perftest: '$v' is not a non-negative integer" >&2; exit 2; }
done
[ "$COUNT" -ge 10 ] && [ "$UD_SECONDS" -ge 1 ] && [ "$RATE_S" -ge 1 ] && [ "$RATE_BATCH" -ge 1 ] \
  || { echo "rxe-vs-perftest: need --count >= 10, --ud-seconds >= 1, --rate-s >= 1, --rate-batch >= 1" >&2; exit 2; }
[[ $IDLES =~ ^(busy-spin|yielding|backoff|sleeping)(,(busy-spin|yielding|backoff|sleeping))*$ ]] \
  || { echo "rxe-vs-perftest: --idle wants a list of busy-spin, yielding, backoff, sleeping" >&2; exit 2; }

PROP_TEXT=
for p in ${PROPERTIES[@]+"${PROPERTIES[@]}"}; do PROP_TEXT+=" --property $p"; done

# The lab first: nothing to build if it cannot run (rxe-lab.sh prints the SKIPPED line).
set +e
"$ROOT/lab/rxe-lab.sh" --check
check=$?
set -e
[ "$check" = 0 ] || exit "$check"

OUT=${OUT:-$WORK/runs/bench-rxe-vs-perftest-$(date -u +%Y%m%d-%H%M%S)-$$}
mkdir -p "$OUT/launch"
OUT=$(cd "$OUT" && pwd)
cd "$ROOT"
# shellcheck disable=SC1091
source scripts/env.sh
echo "rxe-vs-perftest: building benchmarks (and what it needs) with $(java -version 2>&1 | head -1)"
CP_NAME=rxe-bench-$$.classpath
if ! mvn -B -q -o -pl benchmarks -am compile dependency:build-classpath -Dmdep.outputFile="target/$CP_NAME" \
    > "$OUT/launch/mvn-build.log" 2>&1; then
  tail -40 "$OUT/launch/mvn-build.log" >&2
  echo "rxe-vs-perftest: build failed (log: $OUT/launch/mvn-build.log)" >&2
  exit 1
fi
# The guests run a copy of the project's classes, so rebuilding (or merging) while a run waits for the lab lock or
# runs cannot change the code under it; jars come from the local Maven repository and do not change.
CLASSES_COPY=$OUT/launch/classes
CLASSPATH_VALUE=
for entry in "$ROOT/benchmarks/target/classes" $(tr ':' ' ' < "benchmarks/target/$CP_NAME"); do
  if [ -d "$entry" ]; then
    module=$(basename "$(dirname "$(dirname "$entry")")")
    mkdir -p "$CLASSES_COPY/$module"
    cp -r "$entry/." "$CLASSES_COPY/$module/"
    entry=$CLASSES_COPY/$module
  fi
  CLASSPATH_VALUE=${CLASSPATH_VALUE:+$CLASSPATH_VALUE:}$entry
done
find "$ROOT" -maxdepth 3 -path "*/target/$CP_NAME" -delete 2>/dev/null || true
{
  for f in $RDMABUS_JVM_FLAGS; do echo "$f"; done
  echo "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn"
  # JIT: C1 only. On the guests' one emulated vCPU, tiered compilation's C2 still took 22-28% of the vCPU through a
  # 10 s warm-up + 5 s measured rate phase (JFR) and the rate kept climbing until it finished; with C1 only the rate
  # is flat after ~3 s. --java-opt -XX:TieredStopAtLevel=4 (after this line: the last one wins) brings C2 back.
  echo "-XX:TieredStopAtLevel=1"
  for o in ${JAVA_OPTS[@]+"${JAVA_OPTS[@]}"}; do echo "$o"; done
  # /mnt/out is the guest's LAB_OUT (lab/guest-init.sh): the recording lands beside the guest's bus.txt; quoted,
  # since an unquoted '#' starts a comment in a java @argument file
  [ "$JFR" = 0 ] || echo '"-XX:StartFlightRecording=settings=profile,filename=/mnt/out/bus.jfr,dumponexit=true,jdk.ThreadCPULoad#period=1s"'
  echo "-cp"
  echo "$CLASSPATH_VALUE"
} > "$OUT/launch/jvm.args"
{
  echo "--pings"; echo "$COUNT"
  echo "--warmup"; echo "$WARMUP"
  echo "--warmup-s"; echo "$WARMUP_S"
  echo "--size"; echo "64"
  echo "--idle"; echo "$IDLES"
  echo "--subscriber"; echo "$SUBSCRIBER"
  echo "--threading"; echo "$THREADING"
  echo "--rate-s"; echo "$RATE_S"
  echo "--rate-warmup-s"; echo "$RATE_WARMUP_S"
  echo "--rate-batch"; echo "$RATE_BATCH"
  echo "--rate-delivery"; echo "$BENCH_DELIVERY"
  for p in ${PROPERTIES[@]+"${PROPERTIES[@]}"}; do echo "--property"; echo "$p"; done
} > "$OUT/launch/bench.args"

# ------------------------------------------------------------------ summary helpers
# prop <file> <key>: a value of a Java properties file (keys here have no escapes), empty if absent
prop() { [ -f "$1" ] && sed -n "s/^$(printf '%s' "$2" | sed 's/[.]/\\./g')=//p" "$1" | tail -1 | sed 's/\\:/:/g' || true; }
# perftest data lines: ib_send_lat "bytes iters t_min t_max t_typical t_avg t_stdev p99 p99.9", ib_send_bw "bytes iters peak avg Mpps"
lat_field() { [ -f "$1" ] && awk -v f="$2" '$1 == "64" && NF >= 9 && $2 ~ /^[0-9]+$/ { v = $f } END { if (v != "") print v }' "$1" || true; }
bw_msgs() { [ -f "$1" ] && awk '$1 == "64" && NF == 5 && $2 ~ /^[0-9]+$/ { v = sprintf("%.0f", $5 * 1e6) } END { if (v != "") print v }' "$1" || true; }
ratio() { # ratio <numerator> <denominator> [scale of denominator]: empty if either side is missing
  [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" -v s="${3:-1}" 'BEGIN { if (b * s > 0) printf "%.2f", a / (b * s) }' || true
}
times2() { [ -n "$1" ] && awk -v a="$1" 'BEGIN { printf "%.1f", 2 * a }' || true; }
show() { if [ -n "$1" ]; then echo "$1"; else echo "MISSING"; fi; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

overall=0
SUMMARY=$OUT/summary.md
{
  echo "# Bus over RDMA vs perftest on rxe"
  echo
  echo "Run $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git -C "$ROOT" rev-parse --short HEAD)$(git -C "$ROOT" diff --quiet HEAD -- . 2>/dev/null || echo ' (+ uncommitted changes)'),"
  echo "command: \`lab/bench/rxe-vs-perftest.sh --guests $TOPOLOGIES --count $COUNT --warmup $WARMUP --warmup-s $WARMUP_S --ud-seconds $UD_SECONDS --rate-s $RATE_S --rate-warmup-s $RATE_WARMUP_S --rate-batch $RATE_BATCH --rate-delivery $RATE_DELIVERY --idle $IDLES --subscriber $SUBSCRIBER --threading $THREADING$PROP_TEXT$([ "$JFR" = 0 ] || echo ' --jfr')$(for o in ${JAVA_OPTS[@]+"${JAVA_OPTS[@]}"}; do printf ' --java-opt %s' "$o"; done)\`"
  echo "(host: $(nproc) CPUs; guests: ${RXE_LAB_CPUS:-1} vCPU(s) each (RXE_LAB_CPUS), QEMU TCG, soft-RoCE rxe0)."
} > "$SUMMARY"

for guests in ${TOPOLOGIES//,/ }; do
  run_out=$OUT/guests$guests
  echo "rxe-vs-perftest: lab run with $guests guest(s), output $run_out"
  lab_cmd=("$ROOT/lab/rxe-lab.sh" --guests "$guests" --timeout-s "$TIMEOUT_S" --out "$run_out" --name bench
    -- "$BENCH_DIR/rxe-vs-perftest-guest.sh" "$OUT/launch/jvm.args" "$OUT/launch/bench.args" "$COUNT" "$UD_SECONDS" "$BW_CONN")
  set +e
  {
    if [ "$LOCK" != none ]; then
      echo "rxe-vs-perftest: waiting for the lab lock $LOCK"
      flock 9
    fi
    load_before=$(loadavg)
    # host load average, sampled every 5 s while the lab runs (not while waiting for the lock)
    ( while :; do echo "$(date -u +%H:%M:%S) $(loadavg)"; sleep 5; done ) > "$OUT/host-load-guests$guests.txt" 9>&- &
    sampler=$!
    "${lab_cmd[@]}" 9>&-
    lab_rc=$?
    kill "$sampler" 2>/dev/null
    wait "$sampler" 2>/dev/null
    load_after=$(loadavg)
  } 9>>"$( [ "$LOCK" = none ] && echo /dev/null || echo "$LOCK")"
  set -e
  [ "$lab_rc" = 77 ] && exit 77
  [ "$lab_rc" = 0 ] || overall=1
  load_samples=$(awk '{ n++; s += $2; if (n == 1 || $2 > max) max = $2; if (n == 1 || $2 < min) min = $2 }
    END { if (n) printf "1-min load during the run: min %.2f, mean %.2f, max %.2f (%d samples)", min, s / n, max, n }' "$OUT/host-load-guests$guests.txt")

  if [ "$guests" = 2 ]; then
    server=$run_out/guest1 client=$run_out/guest2
    lat_file=$client/ib_send_lat.txt bw_rx_file=$server/$BW_NAME.txt bw_tx_file=$client/$BW_NAME.txt
    topo="2 guests (guest 1 = server / publisher, guest 2 = client / subscriber; cross-host over the bridge)"
  else
    server=$run_out/guest1 client=$run_out/guest1
    lat_file=$client/ib_send_lat.txt bw_rx_file=$server/$BW_NAME-server.txt bw_tx_file=$client/$BW_NAME.txt
    topo="1 guest (both sides in guest 1, rxe0 loopback)"
  fi
  res=$client/bus-results.properties
  t_typ=$(lat_field "$lat_file" 5); t_min=$(lat_field "$lat_file" 3); t_p99=$(lat_field "$lat_file" 8)
  pf_rx=$(bw_msgs "$bw_rx_file"); pf_tx=$(bw_msgs "$bw_tx_file")
  bus_rx=$(prop "$res" rate.received.msg-per-s); bus_tx=$(prop "$res" rate.sent.msg-per-s)
  path=$(prop "$res" rate.path)

  {
    echo
    echo "## $topo"
    echo
    echo "Host load before $load_before, after $load_after; $load_samples. Lab exit status $lab_rc. Raw logs: \`$run_out/guest*/\`."
    echo
    echo "| measurement | perftest | bus over rdma | ratio bus / perftest |"
    echo "|---|---:|---:|---:|"
    echo "| RC 64 B round trip, median (perftest: 2 x t_typical) | $(show "$(times2 "$t_typ")") us | | |"
    for idle in ${IDLES//,/ }; do
      p50=$(prop "$res" "ping-$idle.p50.us"); err=$(prop "$res" "ping-$idle.error")
      r=$(ratio "$p50" "$t_typ" 2)
      [ -n "$r" ] || overall=1
      echo "| ... bus RELIABLE ping-pong, idle $idle: p50 RTT | | $(show "$p50") us${err:+ (failed: $err)} | $(show "$r") |"
    done
    echo "| RC 64 B round trip, 99% (perftest: 2 x 99% percentile) | $(show "$(times2 "$t_p99")") us | | |"
    for idle in ${IDLES//,/ }; do
      p99=$(prop "$res" "ping-$idle.p99.us")
      echo "| ... bus, idle $idle: p99 RTT | | $(show "$p99") us | $(show "$(ratio "$p99" "$t_p99" 2)") |"
    done
    echo "| RC 64 B round trip, minimum (perftest: 2 x t_min) | $(show "$(times2 "$t_min")") us | | |"
    for idle in ${IDLES//,/ }; do
      mn=$(prop "$res" "ping-$idle.min.us")
      echo "| ... bus, idle $idle: min RTT | | $(show "$mn") us | $(show "$(ratio "$mn" "$t_min" 2)") |"
    done
    r_rx=$(ratio "$bus_rx" "$pf_rx"); r_tx=$(ratio "$bus_tx" "$pf_tx")
    [ -n "$r_rx" ] || overall=1
    rate_err=$(prop "$res" rate.error)
    echo "| 64 B message rate, received (perftest $BW_CONN server side; bus $BENCH_DELIVERY subscriber$([ "$RATE_BATCH" = 1 ] || echo ", publisher's batch offers of $RATE_BATCH")) | $(show "$pf_rx") msg/s | $(show "$bus_rx") msg/s${rate_err:+ (failed: $rate_err)} | $(show "$r_rx") |"
    echo "| 64 B message rate, sent (perftest $BW_CONN client side; bus publisher, messages taken) | $(show "$pf_tx") msg/s | $(show "$bus_tx") msg/s | $(show "$r_tx") |"
    echo
    echo "Bus $BENCH_DELIVERY rate path (from the publisher process's QPs, \`rdma resource show qp\` send PSNs before/after the rate"
    echo "phase): **$(show "$path")**. Rate phase: received $(show "$(prop "$res" rate.received.messages)") of"
    echo "$(show "$(prop "$res" rate.sent.messages)") measured messages in $(show "$(prop "$res" rate.received.seconds)") s; offers refused"
    echo "(no credit / not connected): $(show "$(prop "$res" rate.sent.not-ok-offers)"); dropped by the subscriber's ring:"
    echo "$(show "$(prop "$res" rate.sub.dropped-by-subscriber)"); gaps seen by the bus: $(show "$(prop "$res" rate.sub.gap-messages)")."
    echo
    echo "Commands (in the guests; \`-d rxe0 -F\` on all perftest runs, the client retries while the server starts):"
    echo
    echo "    ib_send_lat -s 64 -n $COUNT -d rxe0 -R -F -p 18515 [server-ip]"
    echo "    ib_send_bw -c $BW_CONN -s 64 -D $UD_SECONDS -d rxe0 -R -F -p 18516 [server-ip]"
    echo "    java \$RDMABUS_JVM_FLAGS -XX:TieredStopAtLevel=1 -XX:-UsePerfData -cp ... io.rdmabus.benchmarks.RxeBusBench --role $([ "$guests" = 2 ] && echo 'server|client --peer 10.77.0.11' || echo both) \\"
    echo "        --bind \$LAB_SELF_IP --sync \$LAB_SHARED/bench --pings $COUNT --warmup $WARMUP --warmup-s $WARMUP_S --size 64 --idle $IDLES --subscriber $SUBSCRIBER --threading $THREADING --rate-s $RATE_S --rate-warmup-s $RATE_WARMUP_S --rate-batch $RATE_BATCH --rate-delivery $BENCH_DELIVERY$PROP_TEXT"
  } >> "$SUMMARY"
done

{
  echo
  echo "Conversions: \`ib_send_lat\` reports one-way latency, half of its measured ping-pong round trip"
  echo "(t_typical = the median); the bus harness times whole round trips, so latency ratio = bus RTT / (2 x perftest"
  echo "one-way). Rate ratio = bus msg/s / perftest msg/s (perftest's MsgRate[Mpps] x 10^6). The bus's 64 B payload"
  echo "travels with its 32-byte frame header and the transport's 8-byte envelope (104 B on the wire); perftest's 64 B is"
  echo "the whole message. MISSING = the measurement did not complete (see the guest logs); no ratio is computed from a"
  echo "missing side."
} >> "$SUMMARY"

echo
cat "$SUMMARY"
echo
grep -h '^| \.\.\. bus.*p50\|^| 64 B' "$SUMMARY" | sed 's/^/ratio: /' || true
echo "rxe-vs-perftest: summary $SUMMARY; raw logs under $OUT"
exit "$overall"
