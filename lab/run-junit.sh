#!/usr/bin/env bash
# Runs a Maven module's JUnit 5 tests tagged TAG (default rxe) inside the rxe guest lab.
#
#   run-junit.sh --module <maven-module> [--guests N] [--tag TAG] [--class FQCN]...
#                [--class-on GUEST:FQCN]... [--timeout-s S]
#
# <maven-module> is a module of the root reactor (e.g. rdma-transport) or a path to a
# directory with its own pom.xml (e.g. lab/selftest). The host builds the test classpath
# with JDK 25, every guest runs the same classes (plus, with --class-on, classes for one
# guest only, e.g. a server role: --class-on 2:FQCN), and the host prints each guest's counts
# and then exactly one line `rxe-lab: N passed, N failed, N skipped` (sums over guests;
# a guest that timed out, crashed, wrote no report or exited non-zero with no failed test
# counts as one failed). Exit: 0 all passed, 1 any failure, 77 lab cannot run
# ("RXE LAB SKIPPED: ..."), 2 bad usage.
#
#   RXE_LAB_JAVA_OPTS  extra JVM options for the guests' test JVM (word list)
#   RXE_LAB_HEAP_OPTS  the test JVM's heap options (default -Xms256m -Xmx256m -Xmn128m: few GCs, see below)
#   RXE_LAB_JIT_OPTS   the test JVM's JIT options (default with RXE_LAB_CPUS > 1: -XX:-TieredCompilation, see below)
#   RXE_LAB_ATTEMPTS   runs of a job whose guest JVM the emulator keeps crashing (default 3, see below)
#   JUNIT_CONSOLE_VERSION  console launcher version (default 1.13.4)
set -euo pipefail

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$LAB_DIR/.." && pwd)
WORK=${RXE_LAB_WORK:-/var/tmp/rdma-bus-lab}
CONSOLE_VERSION=${JUNIT_CONSOLE_VERSION:-1.13.4}
JDK25=${RXE_LAB_JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
MODULE=
GUESTS=2
TAG=rxe
TIMEOUT_S=900
CLASSES=()
CLASS_ON=()

usage() { sed -n '2,20p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
skip() { echo "RXE LAB SKIPPED: $*" >&2; exit 77; }

while [ $# -gt 0 ]; do
  case "$1" in
    --module) MODULE=${2:?}; shift 2 ;;
    --guests) GUESTS=${2:?}; shift 2 ;;
    --tag) TAG=${2:?}; shift 2 ;;
    --class) CLASSES+=("${2:?}"); shift 2 ;;
    --class-on) CLASS_ON+=("${2:?}"); shift 2 ;;
    --timeout-s) TIMEOUT_S=${2:?}; shift 2 ;;
    -h|--help) usage ;;
    *) echo "run-junit: unknown argument '$1'" >&2; usage ;;
  esac
done
[ -n "$MODULE" ] || { echo "run-junit: --module is required" >&2; usage; }
MODULE=${MODULE%/}
for c in "${CLASSES[@]}"; do
  [[ $c =~ ^[A-Za-z_$][A-Za-z0-9_$.]*$ ]] || { echo "run-junit: '$c' is not a class name" >&2; exit 2; }
done
# --class-on GUEST:FQCN selects FQCN on that guest only; every guest must end up with at least one class.
for c in "${CLASS_ON[@]}"; do
  [[ $c =~ ^([0-9]+):[A-Za-z_$][A-Za-z0-9_$.]*$ ]] && [ "${BASH_REMATCH[1]}" -ge 1 ] && [ "${BASH_REMATCH[1]}" -le "$GUESTS" ] \
    || { echo "run-junit: --class-on '$c' is not GUEST:FQCN with GUEST in 1..$GUESTS" >&2; exit 2; }
done
if [ ${#CLASS_ON[@]} -gt 0 ] && [ ${#CLASSES[@]} -eq 0 ]; then
  for i in $(seq 1 "$GUESTS"); do
    printf '%s\n' "${CLASS_ON[@]}" | grep -q "^$i:" \
      || { echo "run-junit: guest $i gets no class (give it a --class-on $i:FQCN or a --class for all)" >&2; exit 2; }
  done
fi

# The lab itself first: no point building what cannot run (rxe-lab.sh prints the SKIPPED line).
set +e
"$LAB_DIR/rxe-lab.sh" --check --guests "$GUESTS" --timeout-s "$TIMEOUT_S"
check=$?
set -e
[ "$check" = 0 ] || exit "$check"
[ -x "$JDK25/bin/java" ] || skip "no JDK 25 at $JDK25 (set RXE_LAB_JAVA_HOME)"
command -v mvn >/dev/null || skip "mvn not installed"
export JAVA_HOME=$JDK25 PATH=$JDK25/bin:$PATH

# Resolve the module: a root reactor module, or a standalone Maven project directory.
if grep -q "<module>$MODULE</module>" "$ROOT/pom.xml"; then
  MODULE_DIR=$ROOT/$MODULE
  MVN_PROJECT=(-f "$ROOT/pom.xml" -pl "$MODULE" -am)
elif [ -f "$ROOT/$MODULE/pom.xml" ] || [ -f "$MODULE/pom.xml" ]; then
  MODULE_DIR=$(cd "$( [ -f "$ROOT/$MODULE/pom.xml" ] && echo "$ROOT/$MODULE" || echo "$MODULE")" && pwd)
  MVN_PROJECT=(-f "$MODULE_DIR/pom.xml" -Dmaven.multiModuleProjectDirectory="$ROOT")
else
  echo "run-junit: '$MODULE' is neither a module of $ROOT/pom.xml nor a directory with a pom.xml" >&2
  exit 2
fi

RUN_ID="junit-$(basename "$MODULE_DIR")-$(date +%Y%m%d-%H%M%S)-$$"
OUT=$WORK/runs/$RUN_ID
mkdir -p "$OUT/launch"
echo "run-junit: building $MODULE test classpath with $(java -version 2>&1 | head -1)"
# test-compile (not install): reactor siblings resolve to their target/classes.
# A relative outputFile resolves against each module's basedir: one file per module (and run).
CP_NAME=rxe-lab-$$.classpath
CP_FILE=$MODULE_DIR/target/$CP_NAME
if ! mvn -B -q "${MVN_PROJECT[@]}" test-compile dependency:build-classpath \
    -Dmdep.includeScope=test -Dmdep.outputFile="target/$CP_NAME" > "$OUT/launch/mvn-build.log" 2>&1; then
  tail -40 "$OUT/launch/mvn-build.log" >&2
  echo "run-junit: build of $MODULE failed (log: $OUT/launch/mvn-build.log)" >&2
  exit 1
fi
[ -f "$CP_FILE" ] || { echo "run-junit: maven wrote no classpath to $CP_FILE" >&2; exit 1; }
CLASSPATH_VALUE="$MODULE_DIR/target/test-classes:$MODULE_DIR/target/classes:$(cat "$CP_FILE")"
find "$(dirname "$MODULE_DIR")" -path "*/target/$CP_NAME" -delete 2>/dev/null || true


LAUNCHER_DIR=$WORK/junit
LAUNCHER=$LAUNCHER_DIR/junit-platform-console-standalone-$CONSOLE_VERSION.jar
if [ ! -s "$LAUNCHER" ]; then
  echo "run-junit: fetching junit-platform-console-standalone $CONSOLE_VERSION"
  mvn -B -q -f "$ROOT/pom.xml" -N dependency:copy \
    -Dartifact="org.junit.platform:junit-platform-console-standalone:$CONSOLE_VERSION" \
    -DoutputDirectory="$LAUNCHER_DIR" > "$OUT/launch/mvn-launcher.log" 2>&1 \
    || { tail -20 "$OUT/launch/mvn-launcher.log" >&2; echo "run-junit: cannot fetch the console launcher" >&2; exit 1; }
fi

# Argument files, written on the host and read by the guests through the read-only root.
common_launcher_args() {
  echo "--disable-banner"
  echo "--include-engine=junit-jupiter"
  echo "--class-path=$CLASSPATH_VALUE"
}

# JIT: a guest with more than one vCPU runs C2 only (-XX:-TieredCompilation). With tiered compilation HotSpot replaces
# each hot C1-compiled method by its C2 version and patches the old one's entry while other threads may be running
# it; multi-threaded TCG lets another vCPU run the half-patched bytes, and the guest JVM dies of SIGSEGV or SIGILL at
# the entry of a C1 method (every emulator crash in lab/README.md; never with one vCPU). C2 only leaves no C1 code to
# replace. RXE_LAB_JIT_OPTS overrides it (empty: the JVM's default, tiered).
if [ "${RXE_LAB_CPUS:-1}" -gt 1 ]; then
  JIT_OPTS=${RXE_LAB_JIT_OPTS--XX:-TieredCompilation}
else
  JIT_OPTS=${RXE_LAB_JIT_OPTS-}
fi

# Class loading and linking dominate JVM start-up under TCG. An AOT cache (JDK 25) of the
# launcher's own classes, trained on the host by a discovery-only run (a tag no test has),
# roughly halves launcher start-up. Test classes come from the launcher's own class loader
# and are not cached, so one cache serves every module. Best effort: no cache, no harm.
JDK_ID=$(java -XshowSettings:properties -version 2>&1 | awk '$1 == "java.runtime.version" { print $3 }')
# The cache only maps when the module options (--add-exports/--add-opens) match the training run's, so the
# extra options are part of the training and of the cache's name.
OPTS_ID=$(printf '%s' "${RXE_LAB_JAVA_OPTS:-} $JIT_OPTS" | md5sum | cut -c1-8)
AOT=$LAUNCHER_DIR/console-$CONSOLE_VERSION-jdk$JDK_ID-$OPTS_ID.aot
if [ ! -s "$AOT" ]; then
  echo "run-junit: training the launcher AOT cache $AOT"
  common_launcher_args > "$OUT/launch/aot-training.args"
  echo "--include-tag=rxe-lab-aot-training-matches-nothing" >> "$OUT/launch/aot-training.args"
  (cd "$OUT/launch" && java -XX:-UsePerfData -XX:AOTCacheOutput="$AOT.$$.part" --enable-native-access=ALL-UNNAMED \
    ${RXE_LAB_JAVA_OPTS:-} $JIT_OPTS -jar "$LAUNCHER" execute @"$OUT/launch/aot-training.args" --details=none) > "$OUT/launch/aot-training.log" 2>&1 || true
  if [ -s "$AOT.$$.part" ]; then mv "$AOT.$$.part" "$AOT"; else echo "run-junit: no AOT cache (see $OUT/launch/aot-training.log)"; fi

fi
# Heap: a young generation of 128 MiB instead of the default few MiB (a 1 GiB guest gets a 16 MiB initial heap), so
# far fewer GCs. Each GC cycle re-arms the nmethod entry barriers, whose immediates HotSpot then re-patches in the
# entries of running compiled methods, and every emulator crash so far was at such an entry (lab/README.md).
HEAP_OPTS=${RXE_LAB_HEAP_OPTS:--Xms256m -Xmx256m -Xmn128m}
{
  echo "--enable-native-access=ALL-UNNAMED"
  [ -s "$AOT" ] && echo "-XX:AOTCache=$AOT"
  for o in $HEAP_OPTS $JIT_OPTS; do echo "$o"; done
  for o in ${RXE_LAB_JAVA_OPTS:-}; do echo "$o"; done
} > "$OUT/launch/jvm.args"
# launcher_args <guest>: the console launcher's arguments for that guest (the same for all without --class-on)
launcher_args() {
  common_launcher_args
  echo "--details=tree"
  echo "--fail-if-no-tests"
  echo "--include-tag=$TAG"
  if [ ${#CLASSES[@]} -gt 0 ] || [ ${#CLASS_ON[@]} -gt 0 ]; then
    for c in "${CLASSES[@]}"; do echo "--select-class=$c"; done
    for c in "${CLASS_ON[@]}"; do [ "${c%%:*}" = "$1" ] && echo "--select-class=${c#*:}"; done
  else
    echo "--scan-class-path=$MODULE_DIR/target/test-classes"
  fi
  return 0
}
if [ ${#CLASS_ON[@]} -gt 0 ]; then
  # junit-guest.sh replaces @GUEST@ with the guest's index
  LAUNCHER_ARGS=$OUT/launch/launcher-guest@GUEST@.args
  for i in $(seq 1 "$GUESTS"); do launcher_args "$i" > "$OUT/launch/launcher-guest$i.args"; done
else
  LAUNCHER_ARGS=$OUT/launch/launcher.args
  launcher_args 1 > "$LAUNCHER_ARGS"
fi

# emulator_crash: the guest whose JVM died of SIGILL or SIGSEGV inside JIT-compiled JDK code (a "J" frame of a
# java.base method that does not touch memory through Unsafe or a MemorySegment, so no FFM bug of ours can land there).
# Under multi-threaded TCG that happens in a few two-vCPU runs in twenty, not with one vCPU (lab/README.md). Agrona's
# AgentRunner (plain Java around our agents) counts too (e.g. SIGSEGV at +0x22 of its C1-compiled doWork). So does a
# crash at the entry of any compiled method, C1 or C2 (pc at most 0x30 bytes into it, where HotSpot re-patches the
# nmethod entry barrier): every crash of this kind the lab has shown was there, JDK methods and ours alike, sometimes
# two threads at once (e.g. SIGSEGV at +0x20 of QueuePair.postSend; with C2, SIGILL at +0x15 of Poller.doWork on the
# entry barrier's cmp [r15+0x20]); a use-after-free of ours would fault in native code or at a load in a method's body.
# Any other crash in our frames still fails the run, and so does a second crash.
emulator_crash() {
  local i frame off
  for i in $(seq 1 "$GUESTS"); do
    grep -q -E '^#  SIG(ILL|SEGV)' "$OUT/guest$i/console.log" 2>/dev/null || continue
    frame=$(grep -A1 '^# Problematic frame:' "$OUT/guest$i/console.log" | grep -m1 '^# J ')
    [ -n "$frame" ] || continue
    if printf '%s\n' "$frame" | grep -E 'java.base@|org\.agrona\.concurrent\.AgentRunner\.' \
        | grep -q -v -E 'Unsafe|MemoryAccess|MemorySegment|foreign\.abi'; then
      echo "guest$i"
      return 0
    fi
    off=$(printf '%s\n' "$frame" | grep -o '+0x[0-9a-f]*\]$' | tr -dc '0-9a-f' | sed 's/^0*//')
    if printf '%s\n' "$frame" | grep -q -E ' c[12] ' && [ $(( 16#${off:-0} )) -le 48 ]; then
      echo "guest$i (at the entry of a compiled method)"
      return 0
    fi
  done
  return 1
}
# How many times a job runs when the emulator keeps crashing its guest JVM (RXE_LAB_ATTEMPTS, default 3). Two crashed
# attempts in a row do occur; at roughly 1 crashed run in 5 with two vCPUs a third attempt makes a red CI from the
# emulator alone rare without hiding anything: every crash is printed and kept.
MAX_ATTEMPTS=${RXE_LAB_ATTEMPTS:-3}
case "$MAX_ATTEMPTS" in ''|*[!0-9]*|0) echo "run-junit: RXE_LAB_ATTEMPTS must be a positive integer, got '$MAX_ATTEMPTS'" >&2; exit 2 ;; esac
attempt=1
while :; do
  set +e
  "$LAB_DIR/rxe-lab.sh" --guests "$GUESTS" --timeout-s "$TIMEOUT_S" --out "$OUT" --name junit \
    -- "$LAB_DIR/junit-guest.sh" "$MODULE_DIR" "$LAUNCHER" "$OUT/launch/jvm.args" "$LAUNCHER_ARGS"
  lab_rc=$?
  set -e
  [ "$lab_rc" = 77 ] && exit 77
  # One more run, said loudly, when the emulator crashed a guest JVM; the crashed attempt stays in attempt<N>/.
  if [ "$lab_rc" != 0 ] && [ "$attempt" -lt "$MAX_ATTEMPTS" ] && crashed=$(emulator_crash); then
    echo "run-junit: !!! $crashed: the guest JVM died in JIT-compiled code the way the emulator crashes it (see lab/README.md);" \
      "running the whole job once more (attempt $((attempt + 1)) of at most $MAX_ATTEMPTS); the crashed attempt is in $OUT/attempt$attempt !!!"
    mkdir "$OUT/attempt$attempt"
    mv "$OUT"/guest* "$OUT/shared" "$OUT/attempt$attempt/"
    attempt=$((attempt + 1))
    continue
  fi
  break
done

# attr <name> <file>: sum of attribute <name> over the <testsuite> elements of a JUnit XML report.
attr() {
  grep -o "<testsuite [^>]*" "$2" | grep -o " $1=\"[0-9]*\"" | tr -dc '0-9\n' | awk '{ s += $1 } END { print s + 0 }'
}
total_pass=0 total_fail=0 total_skip=0
for i in $(seq 1 "$GUESTS"); do
  reports=("$OUT/guest$i"/junit-reports/TEST-*.xml)
  rc=$(cat "$OUT/guest$i/exit-code" 2>/dev/null || echo '?')
  tests=0 fail=0 skipped=0
  if [ -e "${reports[0]}" ]; then
    for r in "${reports[@]}"; do
      tests=$((tests + $(attr tests "$r")))
      fail=$((fail + $(attr failures "$r") + $(attr errors "$r")))
      skipped=$((skipped + $(attr skipped "$r")))
    done
  fi
  pass=$((tests - fail - skipped))
  note=
  if [ ! -e "${reports[0]}" ]; then
    note=" (no JUnit report; guest exit $rc: counted as 1 failed)"
    fail=$((fail + 1))
  elif [ "$rc" != 0 ] && [ "$fail" = 0 ]; then
    note=" (guest exit $rc with no failed test, e.g. no test matched: counted as 1 failed)"
    fail=1
  fi
  echo "run-junit: guest$i: $tests tests, $pass passed, $fail failed, $skipped skipped$note"
  # Name what failed, so that the tail of a long CI log says it (scripts/test.sh repeats these lines at the end).
  if [ -e "${reports[0]}" ]; then
    "$LAB_DIR/junit-failures.sh" "${reports[@]}" | sed "s/^/run-junit: guest$i FAILED /"
  fi
  if grep -q "A fatal error has been detected by the Java Runtime Environment" "$OUT/guest$i/console.log" 2>/dev/null; then
    echo "run-junit: guest$i JVM CRASH $(grep -m1 -E '^# +SIG' "$OUT/guest$i/console.log" | sed 's/^# *//') in" \
      "$(grep -m1 -A1 '^# Problematic frame:' "$OUT/guest$i/console.log" | tail -1 | sed 's/^# *//' | cut -c1-160)" \
      "(full error report in $OUT/guest$i/console.log)"
  fi
  total_pass=$((total_pass + pass)) total_fail=$((total_fail + fail)) total_skip=$((total_skip + skipped))
done
[ "$attempt" -gt 1 ] && echo "run-junit: these counts are of attempt $attempt (the guest JVM of each attempt before it crashed in the emulator, see above)"
echo "run-junit: reports in $OUT/guest*/junit-reports"
echo "rxe-lab: $total_pass passed, $total_fail failed, $total_skip skipped"
[ "$lab_rc" = 0 ] && [ "$total_fail" = 0 ] || exit 1
exit 0
