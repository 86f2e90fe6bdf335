#!/usr/bin/env bash
# Runs every test of rdma-bus. This is the command the README gives and the one CI runs (.ci/run).
#  1. The Maven build: unit tests, the codecs, the transport TCK on real Aeron media drivers and real TCP sockets,
#     the verbs layout test (gcc probe against the installed rdma-core headers).
#  2. The rxe lab: real verbs tests inside QEMU guests with soft-RoCE (needs root and QEMU; lab/setup.sh installs it).
#     Without root it is reported loudly as SKIPPED, never as passed; with CI=true a skip is a failure.
# Ends with the time each stage took and the total, then one closing line: "tests: N passed, N failed, N skipped".
# Budget: CI runs this (no option) on a fresh machine and must finish within 45 minutes (34 measured with warm caches:
# Maven ~7, lab runs ~17, short soak ~10; a fresh machine adds ~6; README's test section). Suites that do not fit go
# behind --long.
# Options: --no-lab (Maven build only; the lab is then counted as skipped), --lab-only,
#          --long (adds what does not fit CI's budget: the rdma TCK with BEST_EFFORT over UD multicast, the connect/close
#          loop x1000 instead of x200, and the 30-minute soak instead of the short one; about 50 more minutes).
set -uo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh

run_maven=1
run_lab=1
long=0
for arg in "$@"; do
    case "$arg" in
        --no-lab) run_lab=0 ;;
        --lab-only) run_maven=0 ;;
        --long) long=1 ;;
        *) echo "usage: scripts/test.sh [--no-lab|--lab-only] [--long]" >&2; exit 2 ;;
    esac
done

status=0
started=$(date +%s)
dist_passed=0; dist_failed=0
# The names of what failed, repeated just above the closing line (CI shows only the tail of this long log).
failure_list=$(mktemp)
# One line per stage: seconds, then its name; printed as a table before the closing line.
stage_times=$(mktemp)
trap 'rm -f "$failure_list" "$stage_times"' EXIT
stage_started=$started
# Records the stage that just ended, and starts timing the next one.
stage_done() {
    local now
    now=$(date +%s)
    printf '%s\t%s\n' "$((now - stage_started))" "$1" >> "$stage_times"
    stage_started=$now
}
if [ "$run_maven" = 1 ]; then
    # The verbs layout test compiles a C probe against rdma-core's headers: install them when we can.
    if [ ! -f /usr/include/infiniband/verbs.h ] && [ "$(id -u)" = 0 ]; then
        echo "== installing rdma-core headers for the layout test"
        apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q libibverbs-dev librdmacm-dev gcc >/dev/null
    fi
    echo "== maven build and tests (JDK: $JAVA_HOME)"
    find . -path '*/target/surefire-reports' -type d -prune -exec rm -rf {} + 2>/dev/null
    mvn -B -ntp install || { status=1; echo "maven: mvn install failed (failed tests are listed below; none = a build error, see the maven log)" >> "$failure_list"; }
    stage_done "maven build and tests"
    # The distribution that scripts/rdma-bus, demo.sh and market-data.sh run (built by the package phase above) starts
    # without Maven and finds its classes and JVM flags: one check, counted as one test (~2 s).
    if samples/target/rdma-bus/bin/rdma-bus --help > /dev/null && samples/target/rdma-bus/bin/rdma-bus devices > /dev/null; then
        dist_passed=1
    else
        dist_failed=1
        echo "distribution: samples/target/rdma-bus/bin/rdma-bus --help or devices failed (its errors are in the log above)" >> "$failure_list"
    fi
fi

lab_passed=0; lab_failed=0; lab_skipped=0
lab_skip_reason=""
# One lab run: adds its "rxe-lab: N passed, N failed, N skipped" line to the totals; 77 = the lab cannot run.
run_lab() {
    local label=$1; shift
    local log rc summary p f k
    echo "== rxe lab: $label ($(( $(date +%s) - started )) s so far)"
    log=$(mktemp)
    lab/run-junit.sh "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    summary=$(grep -E '^rxe-lab: [0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$log" | tail -1)
    grep -E '^run-junit: guest[0-9]+ (FAILED|JVM CRASH) ' "$log" | sed "s|^run-junit: |lab '$label' |" >> "$failure_list"
    rm -f "$log"
    stage_done "rxe lab: $label"
    p=0; f=0; k=0
    if [ -n "$summary" ]; then
        read -r p f k < <(echo "$summary" | sed -E 's/rxe-lab: ([0-9]+) passed, ([0-9]+) failed, ([0-9]+) skipped.*/\1 \2 \3/')
    fi
    lab_passed=$((lab_passed + p)); lab_failed=$((lab_failed + f)); lab_skipped=$((lab_skipped + k))
    if [ "$rc" = 77 ]; then
        lab_skip_reason="lab/run-junit.sh exit 77"
        lab_skipped=$((lab_skipped + 1))
    elif [ "$rc" != 0 ]; then
        echo "rxe lab run '$label' failed (exit $rc)" | tee -a "$failure_list" >&2
        status=1
        [ "$f" = 0 ] && lab_failed=$((lab_failed + 1))
    fi
    return 0
}

# One soak run (soak-tests/run-soak.sh PROFILE [its options]): its verdict counts as one test; 77 = the lab cannot run (skipped).
run_soak() {
    local profile=$1 rc
    shift
    echo "== soak: $profile profile ($(( $(date +%s) - started )) s so far)"
    # like every lab run here it does not take the lab lock itself (CI may hold it around this whole script)
    SOAK_LAB_LOCKED=1 soak-tests/run-soak.sh --profile "$profile" "$@"
    rc=$?
    stage_done "soak: $profile profile"
    case "$rc" in
        0) lab_passed=$((lab_passed + 1)) ;;
        77) lab_skip_reason="soak-tests/run-soak.sh exit 77"; lab_skipped=$((lab_skipped + 1)) ;;
        *) echo "soak $profile failed (exit $rc)" | tee -a "$failure_list" >&2; status=1; lab_failed=$((lab_failed + 1)) ;;
    esac
    return 0
}

if [ "$run_lab" = 1 ]; then
    if [ "$(id -u)" != 0 ]; then
        echo "RXE LAB SKIPPED: not root (the lab creates a network namespace and tap devices, and installs packages)"
        lab_skip_reason="not root"
        lab_skipped=$((lab_skipped + 1))
    elif ! lab/setup.sh; then
        echo "lab/setup.sh failed" >&2
        status=1; lab_failed=$((lab_failed + 1))
        stage_done "rxe lab set-up (failed)"
    else
        stage_done "rxe lab set-up"
        export RXE_LAB_JAVA_OPTS="$RDMABUS_JVM_FLAGS"
        # Verbs seed scenarios: each guest runs the single-host tests on its own rxe0, and the two-host scenarios
        # with guest 1 as server and guest 2 as client.
        # RdmaTransportRxeTest: the RDMA transport's first slice (RC, credits) on each guest's own rxe0.
        # RdmaRateRxeTest: frames/s and CPU per transport thread (printed), and no allocation per frame on the data path.
        run_lab "verbs seed scenarios + RDMA transport, 2 guests" --module rdma-transport --guests 2 \
            --class io.rdmabus.rdma.verbs.rxe.RxeSingleHostTest --class io.rdmabus.rdma.verbs.rxe.RxeTwoHostTest \
            --class io.rdmabus.rdma.transport.RdmaTransportRxeTest --class io.rdmabus.rdma.transport.RdmaRateRxeTest
        # UD multicast needs two subscribers and a sender on three hosts.
        [ "$lab_skip_reason" = "" ] && run_lab "UD multicast, 3 guests" --module rdma-transport --guests 3 \
            --class io.rdmabus.rdma.verbs.rxe.RxeMulticastTest
        # The transport TCK over rdma (several buses on one rxe0; every bus with a bus secret; once with SHARED buses, once
        # with INVOKER buses whose poller an application loop's doWork() runs) and the peer tests (one
        # connection per node pair, authentication) and RELIABLE resume (a broken connection resumes exactly once and in
        # order; outside rdma.retention.frames the Flux fails with RetentionExceededException), the zero-copy subscription
        # contract (InPlaceTck) and the counters file of rdma buses read from another JVM (about 30 s). Two vCPUs: on one
        # the fan-out case has too little margin under TCG.
        [ "$lab_skip_reason" = "" ] && RXE_LAB_CPUS=2 run_lab "RDMA transport TCK + peers + resume + in-place + counters, 1 guest" \
            --module rdma-transport --guests 1 --timeout-s 1500 --class io.rdmabus.rdma.transport.RdmaTckTest \
            --class io.rdmabus.rdma.transport.RdmaInvokerTckTest --class io.rdmabus.rdma.transport.RdmaPeersRxeTest --class io.rdmabus.rdma.transport.RdmaResumeRxeTest \
            --class io.rdmabus.rdma.transport.RdmaInPlaceTest --class io.rdmabus.rdma.transport.RdmaCountersRxeTest
        # The same TCK across two guests (issue 4): each case's publishing and subscribing buses on different guests,
        # guest 2's in a bus host that guest 1's cases drive over TCP (transport-tck io.rdmabus.tck.remote); its time
        # bounds x2 (RdmaSplitFixture.timeFactor). About 5 min.
        [ "$lab_skip_reason" = "" ] && RXE_LAB_CPUS=2 run_lab "RDMA transport TCK across 2 guests" --module rdma-transport --guests 2 \
            --timeout-s 2400 --class-on 1:io.rdmabus.rdma.transport.RdmaTwoGuestTckTest --class-on 2:io.rdmabus.rdma.transport.RdmaTckBusHostRxeTest
        # BEST_EFFORT over UD: UdRxeTest on each guest's own rxe0, UdTwoGuestRxeTest across the two guests (unicast and
        # multicast); DiscoveryRxeTest: seedless nodes on the two guests find each other through adverts on the UD control
        # group (rdma.discovery=multicast), forged adverts are rejected. The TCK with best effort over multicast (RdmaMulticastTckTest) runs with --long (docs/rdma-transport-tests.md).
        [ "$lab_skip_reason" = "" ] && run_lab "UD path, 2 guests" --module rdma-transport --guests 2 \
            --class io.rdmabus.rdma.transport.UdRxeTest --class io.rdmabus.rdma.transport.UdTwoGuestRxeTest \
            --class io.rdmabus.rdma.transport.DiscoveryRxeTest
        # UD gap recovery (NAK): 20 000 BEST_EFFORT frames on each of two topics over UD with tc netem loss 5% on the
        # publisher guest's eth0, one publisher with recovery and one without; nothing twice or out of order, every gap
        # frame recovered or reported lost, some recovered, the other topic's gaps given up (about 2.5 min).
        [ "$lab_skip_reason" = "" ] && run_lab "UD gap recovery under netem loss, 2 guests" --module rdma-transport --guests 2 \
            --class io.rdmabus.rdma.transport.UdRecoveryTwoGuestRxeTest
        # A RELIABLE stream across two guests survives the subscriber's NIC going down for 15 s and up: all 3000 exactly
        # once and in order (rdma.send.stall.ms closes a connection whose send the device neither completes nor fails;
        # docs/rdma-transport-tests.md). A run of its own: it takes guest 2's link down.
        [ "$lab_skip_reason" = "" ] && run_lab "RELIABLE across a NIC down/up, 2 guests" --module rdma-transport --guests 2 \
            --class io.rdmabus.rdma.transport.RdmaLinkFlapRxeTest
        # soak-tests (issue 6): 200 connect/exchange/close cycles of two rdma buses with rdma res, heap and thread checks
        # (-Dsoak.connect.cycles=1000 for the long form).
        if [ "$long" = 1 ]; then
            [ "$lab_skip_reason" = "" ] && RXE_LAB_CPUS=2 run_lab "RDMA transport TCK, BEST_EFFORT over UD multicast, 1 guest" \
                --module rdma-transport --guests 1 --timeout-s 1500 --class io.rdmabus.rdma.transport.RdmaMulticastTckTest
            [ "$lab_skip_reason" = "" ] && RXE_LAB_JAVA_OPTS="$RDMABUS_JVM_FLAGS -Dsoak.connect.cycles=1000" \
                run_lab "connect/close loop x1000, 1 guest" --module soak-tests --guests 1 --timeout-s 3600 \
                --class io.rdmabus.soak.ConnectLoopRxeTest
        else
            [ "$lab_skip_reason" = "" ] && run_lab "connect/close loop x200, 1 guest" --module soak-tests --guests 1 --timeout-s 1800 \
                --class io.rdmabus.soak.ConnectLoopRxeTest
        fi
        # The short soak profile (issue 6; about 9-10 min): publisher + 2 subscriber guests, kill -9 of a subscriber
        # and of the publisher, NIC down/up, netem, an unauthenticated peer; its one-line verdict counts as one test.
        # The NIC-fault stall that kept it out of CI was rxe's (lab/selftest/linkflap-cm.sh, docs/rdma-transport.md).
        if [ "$long" = 1 ]; then
            [ "$lab_skip_reason" = "" ] && run_soak long --duration-s 1800
        else
            [ "$lab_skip_reason" = "" ] && run_soak short
        fi
    fi
    if [ -n "$lab_skip_reason" ]; then
        echo "!!!!!!!! RXE LAB SKIPPED ($lab_skip_reason): the real-verbs suites did not run; counted as skipped, not passed !!!!!!!!"
        if [ "${CI:-}" = true ]; then
            echo "CI=true: the rxe lab must run in CI; failing." >&2
            status=1
        fi
    fi
else
    echo "!!!!!!!! RXE LAB SKIPPED (--no-lab): the real-verbs suites did not run !!!!!!!!"
    lab_skipped=1
fi

# Sum the surefire reports of this run.
read -r tests failures errors skipped < <(find . -path '*/target/surefire-reports/TEST-*.xml' -print0 2>/dev/null \
    | xargs -0 -r grep -h -o -m1 '<testsuite [^>]*>' \
    | awk '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); gsub(/"/, "", kv[2]);
             if (kv[1] == "tests") t += kv[2]; if (kv[1] == "failures") f += kv[2];
             if (kv[1] == "errors") e += kv[2]; if (kv[1] == "skipped") s += kv[2]; } }
           END { printf "%d %d %d %d\n", t, f, e, s }')
passed=$(( tests - failures - errors - skipped + lab_passed + dist_passed ))
failed=$(( failures + errors + lab_failed + dist_failed ))
skipped_total=$(( skipped + lab_skipped ))
[ "$failed" -gt 0 ] && status=1
find . -path '*/target/surefire-reports/TEST-*.xml' -print0 2>/dev/null | xargs -0 -r lab/junit-failures.sh \
    | sed 's/^/maven FAILED /' >> "$failure_list"
if [ -s "$failure_list" ]; then
    echo "== what failed:"
    cat "$failure_list"
fi
echo "== time per stage (s):"
awk -F'\t' '{ printf "%6d  %s\n", $1, $2 }' "$stage_times"
echo "== done in $(( $(date +%s) - started )) s: maven ${tests} tests (${failures} failures, ${errors} errors, ${skipped} skipped); rxe lab ${lab_passed} passed, ${lab_failed} failed, ${lab_skipped} skipped"
echo "tests: ${passed} passed, ${failed} failed, ${skipped_total} skipped"
exit "$status"
