#!/usr/bin/env bash
# Boots N QEMU (TCG) guests, each one host with its own soft-RoCE device rxe0 on its
# virtio NIC, all on a bridge inside a network namespace made for this run, and runs
# `sh <guest-script> [args]` as root in every guest. See lab/README.md.
#
#   rxe-lab.sh [--guests N] [--mem-mb M] [--timeout-s S] [--out DIR] [--name NAME]
#              [--check] -- <guest-script> [args]
#
# Exit: 0 if every guest's script exited 0; 1 otherwise (a guest that timed out
# counts as failed, exit-code 124); 77 (with "RXE LAB SKIPPED: ...") if the lab
# cannot run here; 2 on bad usage.
set -euo pipefail

LAB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
WORK=${RXE_LAB_WORK:-/var/tmp/rdma-bus-lab}
GUESTS=2
MEM_MB=${RXE_LAB_MEM_MB:-1024}
CPUS=${RXE_LAB_CPUS:-1}
# multi (MTTCG): a guest's vCPUs run in parallel on host threads. single: they take turns on one host thread, which
# avoids a rare SIGILL of 2-vCPU guest JVMs but made the rdma TCK run 3.5x slower (see lab/README.md).
TCG_THREAD=${RXE_LAB_TCG_THREAD:-multi}
TIMEOUT_S=600
READY_WAIT_S=${RXE_LAB_READY_WAIT_S:-120}
OUT=
NAME=rxe
CHECK_ONLY=0

usage() {
  sed -n '2,12p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}
skip() { echo "RXE LAB SKIPPED: $*" >&2; exit 77; }
is_uint() { [[ $1 =~ ^[0-9]+$ ]]; }

while [ $# -gt 0 ]; do
  case "$1" in
    --guests) GUESTS=${2:?}; shift 2 ;;
    --mem-mb) MEM_MB=${2:?}; shift 2 ;;
    --timeout-s) TIMEOUT_S=${2:?}; shift 2 ;;
    --out) OUT=${2:?}; shift 2 ;;
    --name) NAME=${2:?}; shift 2 ;;
    --check) CHECK_ONLY=1; shift ;;
    --) shift; break ;;
    -h|--help) usage ;;
    *) echo "rxe-lab: unknown argument '$1'" >&2; usage ;;
  esac
done
is_uint "$GUESTS" && [ "$GUESTS" -ge 1 ] && [ "$GUESTS" -le 200 ] \
  || { echo "rxe-lab: --guests must be 1..200, got '$GUESTS'" >&2; exit 2; }
is_uint "$MEM_MB" && [ "$MEM_MB" -ge 256 ] || { echo "rxe-lab: --mem-mb must be >= 256" >&2; exit 2; }
is_uint "$TIMEOUT_S" && [ "$TIMEOUT_S" -ge 1 ] || { echo "rxe-lab: --timeout-s must be >= 1" >&2; exit 2; }
is_uint "$CPUS" && [ "$CPUS" -ge 1 ] && [ "$CPUS" -le 8 ] || { echo "rxe-lab: RXE_LAB_CPUS must be 1..8, got '$CPUS'" >&2; exit 2; }
case "$TCG_THREAD" in single|multi) ;; *) echo "rxe-lab: RXE_LAB_TCG_THREAD must be single or multi, got '$TCG_THREAD'" >&2; exit 2 ;; esac
[[ $NAME =~ ^[A-Za-z0-9_-]{1,24}$ ]] || { echo "rxe-lab: --name must match [A-Za-z0-9_-]{1,24}" >&2; exit 2; }

# Preflight: every reason the lab cannot run here is a skip (77), never a silent pass.
[ "$(id -u)" = 0 ] || skip "not root (needs a network namespace and tap devices)"
command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed; run lab/setup.sh as root"
command -v ip >/dev/null || skip "iproute2 not installed; run lab/setup.sh as root"
[ -c /dev/net/tun ] || skip "/dev/net/tun missing (no TUN support in the host kernel)"
[ -r "$WORK/lab.env" ] || skip "no guest kernel/initramfs in $WORK; run lab/setup.sh as root"
# shellcheck disable=SC1091
. "$WORK/lab.env"
[ -r "$RXE_LAB_KERNEL" ] && [ -r "$RXE_LAB_INITRD" ] \
  || skip "guest kernel or initramfs missing ($RXE_LAB_KERNEL, $RXE_LAB_INITRD); run lab/setup.sh as root"
# The guest kernel's modules live in the image package setup.sh unpacked, not in the host's /lib/modules.
[ -n "${RXE_LAB_KERNEL_ROOT:-}" ] && [ -f "$RXE_LAB_KERNEL_ROOT/lib/modules/$RXE_LAB_KVER/modules.dep" ] \
  || skip "modules of guest kernel $RXE_LAB_KVER missing (${RXE_LAB_KERNEL_ROOT:-no RXE_LAB_KERNEL_ROOT in $WORK/lab.env}); run lab/setup.sh as root"
for tool in ib_send_lat rdma; do
  command -v "$tool" >/dev/null || skip "$tool not installed; run lab/setup.sh as root"
done
GUEST_JAVA_HOME=${RXE_LAB_JAVA_HOME:-/usr/lib/jvm/temurin-25-jdk-amd64}
[ -x "$GUEST_JAVA_HOME/bin/java" ] || GUEST_JAVA_HOME=${JAVA_HOME:-}
[ "$CHECK_ONLY" = 1 ] && { echo "rxe-lab: ready (guest kernel $RXE_LAB_KVER, work dir $WORK)"; exit 0; }

[ $# -ge 1 ] || { echo "rxe-lab: missing -- <guest-script> [args]" >&2; usage; }
SCRIPT=$1; shift
[ -f "$SCRIPT" ] || { echo "rxe-lab: guest script '$SCRIPT' not found" >&2; exit 2; }
SCRIPT=$(cd "$(dirname "$SCRIPT")" && pwd)/$(basename "$SCRIPT")

RUN_ID="$NAME-$(date +%Y%m%d-%H%M%S)-$$"
OUT=${OUT:-$WORK/runs/$RUN_ID}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
CTL=$(mktemp -d "$WORK/ctl.XXXXXX")
NS="rxelab-$NAME-$$"
mkdir -p "$OUT/shared"

# Single-quote for sh: a'b -> 'a'\''b'.
shq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

IPS=
for i in $(seq 1 "$GUESTS"); do IPS="$IPS 10.77.0.$((10 + i))"; done
IPS=${IPS# }

QEMU_PIDS=()
# Stops the guests' QEMUs still running: only a pid whose QEMU has not ended (no rc file)
# and that still is a QEMU, so a recycled pid is never hit.
kill_guests() {
  local i pid
  for i in $(seq 1 "$GUESTS"); do
    [ -f "$CTL/qemu$i.rc" ] && continue
    pid=$(cat "$CTL/qemu$i.pid" 2>/dev/null || true)
    [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = qemu-system-x86 ] && kill "$pid" 2>/dev/null || true
  done
}
cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  kill_guests
  for pid in "${QEMU_PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
  ip netns del "$NS" 2>/dev/null || true
  rm -rf "$CTL"
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "rxe-lab: interrupted" >&2; exit 130' INT TERM

ip netns add "$NS" || skip "cannot create network namespace $NS (no CAP_SYS_ADMIN here?)"

ip -n "$NS" link set lo up
ip -n "$NS" link add br0 type bridge
ip -n "$NS" link set br0 up
for i in $(seq 1 "$GUESTS"); do
  ip -n "$NS" tuntap add dev "tap$i" mode tap
  ip -n "$NS" link set "tap$i" master br0
  ip -n "$NS" link set "tap$i" up
done

echo "rxe-lab: $GUESTS guest(s) [$IPS], ${MEM_MB} MiB, timeout ${TIMEOUT_S}s, kernel $RXE_LAB_KVER, out $OUT"
start_ms=$(( $(date +%s%N) / 1000000 ))
for i in $(seq 1 "$GUESTS"); do
  gout="$OUT/guest$i"
  mkdir -p "$gout"
  rm -f "$gout/exit-code" "$gout/exit-code.part" "$gout/console.log"
  self_ip=$(echo "$IPS" | cut -d' ' -f"$i")
  {
    echo "LAB_GUEST_INDEX=$i"
    echo "LAB_GUEST_COUNT=$GUESTS"
    echo "LAB_GUEST_IPS=$(shq "$IPS")"
    echo "LAB_SELF_IP=$self_ip"
    echo "LAB_CWD=$(shq "$PWD")"
    echo "LAB_SCRIPT=$(shq "$SCRIPT")"
    echo "LAB_JAVA_HOME=$(shq "$GUEST_JAVA_HOME")"
    echo "LAB_KERNEL_ROOT=$(shq "$RXE_LAB_KERNEL_ROOT")"
    echo "LAB_READY_WAIT_S=$READY_WAIT_S"
    printf 'set --'
    for a in "$@"; do printf ' %s' "$(shq "$a")"; done
    echo
  } > "$CTL/guest$i.env"
  mac=$(printf '52:54:00:77:%02x:%02x' $((i / 256)) $((i % 256)))
  (
    set +e
    ip netns exec "$NS" timeout -k 10 "$TIMEOUT_S" qemu-system-x86_64 \
      -name "rxe-lab-guest$i" -machine pc -accel "tcg,thread=$TCG_THREAD" -cpu max \
      -smp "$CPUS" -m "$MEM_MB" -nodefaults -no-user-config -display none -monitor none \
      -serial stdio -no-reboot -pidfile "$CTL/qemu$i.pid" \
      -kernel "$RXE_LAB_KERNEL" -initrd "$RXE_LAB_INITRD" \
      -append "console=ttyS0 quiet loglevel=1 panic=-1 no_timer_check lab_init=$LAB_DIR/guest-init.sh lab_ctl=$CTL/guest$i.env" \
      -fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap \
      -device virtio-9p-pci,fsdev=root,mount_tag=hostroot \
      -fsdev local,id=out,path="$gout",security_model=none \
      -device virtio-9p-pci,fsdev=out,mount_tag=labout \
      -fsdev local,id=shared,path="$OUT/shared",security_model=none \
      -device virtio-9p-pci,fsdev=shared,mount_tag=labshared \
      -netdev tap,id=n0,ifname="tap$i",script=no,downscript=no \
      -device virtio-net-pci,netdev=n0,mac="$mac" \
      </dev/null 2>&1
    echo $? > "$CTL/qemu$i.rc"
  ) | sed -u 's/\r$//' | tee "$gout/serial.log" | sed -u "s/^/[guest$i] /" &
  QEMU_PIDS+=($!)
done

# A guest whose QEMU ended without an exit code (kernel panic, init failure) dooms the run:
# stop the others now instead of letting them wait for it until the timeout.
aborted=0
while :; do
  running=0
  for i in $(seq 1 "$GUESTS"); do
    if [ ! -f "$CTL/qemu$i.rc" ]; then
      running=1
    elif [ "$aborted" = 0 ] && [ ! -s "$OUT/guest$i/exit-code" ]; then
      aborted=1
      echo "rxe-lab: guest$i stopped without a result (qemu exit $(cat "$CTL/qemu$i.rc")); stopping the other guests"
      kill_guests

    fi
  done
  [ "$running" = 1 ] || break
  sleep 1
done
for pid in "${QEMU_PIDS[@]}"; do wait "$pid" || true; done
QEMU_PIDS=()

elapsed_ms=$(( $(date +%s%N) / 1000000 - start_ms ))
elapsed=$(printf '%d.%03d' $((elapsed_ms / 1000)) $((elapsed_ms % 1000)))

failed=0
for i in $(seq 1 "$GUESTS"); do
  gout="$OUT/guest$i"
  qrc=$(cat "$CTL/qemu$i.rc" 2>/dev/null || echo '?')
  if [ "$qrc" = 124 ] || [ "$qrc" = 137 ]; then
    echo 124 > "$gout/exit-code"
    echo "rxe-lab: guest$i TIMED OUT after ${TIMEOUT_S}s (see $gout/serial.log)"
    failed=1
  elif [ ! -s "$gout/exit-code" ]; then
    echo "rxe-lab: guest$i produced no exit code (qemu exit $qrc; see $gout/serial.log)"
    echo 125 > "$gout/exit-code"
    failed=1
  else
    rc=$(cat "$gout/exit-code")
    echo "rxe-lab: guest$i script exited $rc"
    [ "$rc" = 0 ] || failed=1
  fi
done
echo "rxe-lab: run took ${elapsed}s (boot + job + shutdown of $GUESTS guests); output in $OUT"
[ "$failed" = 0 ] || exit 1
exit 0
