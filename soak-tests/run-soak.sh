#!/bin/bash
# Soak run on the rxe lab (issue 6). See soak-tests/README.md.
#   soak-tests/run-soak.sh --profile short|long [--guests N] [--duration-s S] [--rate QUOTES_PER_S] [--out DIR]
#                          [--ud-mode multicast|unicast|rc]   (BEST_EFFORT path; default multicast)
# short: 300 s of traffic at 40 quotes/s (+10 trades/s) on 3 guests (CI); long: 3 h at 100 quotes/s.
# Boots the guests through the shared lab lock, runs the publisher on guest 1 and subscribers on guests 2..N with the
# fault schedule, then writes <out>/soak-<profile>-<timestamp>/report.md + rate.png + latency.png and prints the line
#   soak verdict: PASS|FAIL ...
# (on FAIL followed by the report's Problems and Notes sections).
# Exit: 0 PASS, 1 FAIL, 77 lab cannot run here (loud SKIPPED line).
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PROFILE=short GUESTS=3 DURATION= RATE= UD_MODE=multicast OUT_BASE=${SOAK_OUT:-/var/tmp/rdma-bus-soak}
while [ $# -gt 0 ]; do
  case "$1" in
    --profile) PROFILE=${2:?}; shift 2 ;;
    --guests) GUESTS=${2:?}; shift 2 ;;
    --duration-s) DURATION=${2:?}; shift 2 ;;
    --rate) RATE=${2:?}; shift 2 ;;
    --out) OUT_BASE=${2:?}; shift 2 ;;
    --ud-mode) UD_MODE=${2:?}; shift 2 ;;
    -h|--help) sed -n 2,9p "$0"; exit 0 ;;
    *) echo "run-soak: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case "$PROFILE" in
  short) DURATION=${DURATION:-300}; RATE=${RATE:-40} ;;
  long) DURATION=${DURATION:-10800}; RATE=${RATE:-100} ;;
  *) echo "run-soak: --profile must be short or long" >&2; exit 2 ;;
esac
[ "$GUESTS" -ge 2 ] || { echo "run-soak: --guests must be at least 2 (3 for the NIC fault)" >&2; exit 2; }
# The traffic window opens once every subscriber is connected, at the latest WARMUP s after the guests booted (under
# TCG the JVMs need 1-3 min to start and connect, longer when the host is busy)
WARMUP=${SOAK_WARMUP_S:-300}
RUN="$OUT_BASE/soak-$PROFILE-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$RUN"
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:$PATH
cd "$ROOT"
echo "run-soak: profile $PROFILE, $GUESTS guests, ${DURATION}s traffic at $RATE quotes/s once all subscribers are connected (at most ${WARMUP}s after boot), BEST_EFFORT over UD $UD_MODE; report in $RUN"
if ! mvn -B -q -o -pl soak-tests -am compile dependency:build-classpath -Dmdep.includeScope=runtime \
    -Dmdep.outputFile=target/soak-classpath.txt > "$RUN/mvn-build.log" 2>&1; then
  tail -30 "$RUN/mvn-build.log" >&2
  echo "soak verdict: FAIL profile=$PROFILE build failed (log: $RUN/mvn-build.log)"
  exit 1
fi
# The guests read classes from the host's filesystem while they run (JVMs are restarted mid-run): give them a copy in
# the run folder, so a build in this worktree during the run cannot change the code under them.
mkdir -p "$RUN/classpath"
SNAP_CP=$RUN/classpath/soak-tests
cp -a soak-tests/target/classes "$SNAP_CP"
for entry in $(tr ':' ' ' < soak-tests/target/soak-classpath.txt); do
  case "$entry" in
    */target/classes) mod=$(basename "$(dirname "$(dirname "$entry")")"); cp -a "$entry" "$RUN/classpath/$mod"; SNAP_CP="$SNAP_CP:$RUN/classpath/$mod" ;;
    *) SNAP_CP="$SNAP_CP:$entry" ;;
  esac
done
echo "$SNAP_CP" > "$RUN/classpath.txt"
# ... and of the guest script: bash reads a script as it runs it, so an edit of the worktree's copy mid-run would make
# the guests run from shifted offsets
cp soak-tests/soak-guest.sh "$RUN/soak-guest.sh"
LAB_TIMEOUT=$(( WARMUP + DURATION + 420 ))
# The lab lock: taken here unless the caller holds it already (SOAK_LAB_LOCKED=1, e.g. scripts/test.sh or
# `flock /var/tmp/rdma-bus-lab.lock env SOAK_LAB_LOCKED=1 soak-tests/run-soak.sh ...`): a second flock on the same file
# from inside would wait for the outer one forever.
LOCK=(flock /var/tmp/rdma-bus-lab.lock)
[ "${SOAK_LAB_LOCKED:-0}" = 1 ] && LOCK=()
"${LOCK[@]}" "$ROOT/lab/rxe-lab.sh" --guests "$GUESTS" --timeout-s "$LAB_TIMEOUT" --out "$RUN/lab" --name soak \
  -- "$RUN/soak-guest.sh" "$DURATION" "$RATE" "$WARMUP" "$UD_MODE" "$RUN/classpath.txt" > "$RUN/lab.log" 2>&1
LAB_RC=$?
if [ "$LAB_RC" = 77 ]; then
  grep -h "SKIPPED" "$RUN/lab.log" >&2
  echo "SOAK SKIPPED: the rxe lab cannot run here (see $RUN/lab.log)"
  echo "soak verdict: SKIPPED profile=$PROFILE (rxe lab unavailable)"
  exit 77
fi
[ "$LAB_RC" = 0 ] || echo "run-soak: the lab exited $LAB_RC (a guest's node failed or timed out; see $RUN/lab.log); the report says what it can"
if [ ! -s "$RUN/lab/shared/end-epoch-s" ]; then
  tail -30 "$RUN/lab.log" >&2
  echo "soak verdict: FAIL profile=$PROFILE the guests never started the run (log: $RUN/lab.log)"
  exit 1
fi
java -cp "$SNAP_CP" io.rdmabus.soak.SoakReport "$RUN/lab" "$RUN" "$PROFILE" "$DURATION" \
  2> "$RUN/report.err" | tee "$RUN/verdict.txt"
RC=${PIPESTATUS[0]}
[ "$LAB_RC" = 0 ] || RC=1
if [ "$RC" != 0 ] && [ -s "$RUN/report.md" ]; then
  # a failed run's reasons go to the console too: CI keeps only what was printed, not the report folder
  awk '/^## Problems/{on=1} /^## Faults/{on=0} on' "$RUN/report.md"
fi
echo "run-soak: report $RUN/report.md"
exit "$RC"
