#!/bin/bash
# The soak run's guest script (run by lab/rxe-lab.sh in every guest; see soak-tests/README.md). Not run by hand.
#   soak-guest.sh <traffic-seconds> <quotes-per-second> <warmup-seconds> [ud-mode] [classpath-file]
# Guest 1 runs the publisher, guests 2..N a subscriber each. Each guest runs its own part of the fault schedule
# (faults are local to a guest: its JVM, its NIC) at fixed fractions of the traffic window and logs each fault, with
# its wall-clock time in ms, to $LAB_SHARED/faults.log for the report.
# rxe-lab runs guest scripts with sh (dash): re-run under bash
[ -n "${BASH_VERSION:-}" ] || exec bash "$0" "$@"
set -u
D=${1:?traffic seconds}
RATE=${2:?quotes per second}
WARMUP=${3:-300}   # the longest wait for every subscriber to connect before the traffic window opens anyway
UD_MODE=${4:-multicast}   # BEST_EFFORT path of the rdma transport: multicast (issue 6), unicast or rc
I=$LAB_GUEST_INDEX
N=$LAB_GUEST_COUNT
read -r -a IPS <<< "$LAB_GUEST_IPS"
PUB_IP=${IPS[0]}
PORT=7900
SEEDS="$PUB_IP:$PORT,$PUB_IP:$(( PORT + 2 ))"   # the publisher and its standby
OUT=$LAB_OUT
SH=$LAB_SHARED
CP_FILE=${5:-}   # the run's copy of the classpath (run-soak.sh); without it, the worktree's build
if [ -n "$CP_FILE" ]; then CP=$(cat "$CP_FILE"); else CP="soak-tests/target/classes:$(cat soak-tests/target/soak-classpath.txt)"; fi
JFLAGS="--add-exports java.base/jdk.internal.misc=ALL-UNNAMED --add-opens java.base/java.nio=ALL-UNNAMED --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow"
# The rdma transport logs at INFO, with times (dial failures 1st/10th/100th, deferred disconnects, replaced connections,
# stalls): what a report's problem needs to be explained. C1 only: less compile work while 2-4 JVMs start on three TCG
# guests sharing 2 host cores (40 msg/s need no C2)
JOPTS="-XX:-UsePerfData -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Xmx256m -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -Dorg.slf4j.simpleLogger.log.io.rdmabus.rdma.transport=info -Dorg.slf4j.simpleLogger.showDateTime=true -Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS"

# No JVM runs niced: niced next to a busy node, a JVM gets too little CPU for its part of the schedule (the standby
# subscriber's bus comes up long after the kill it is there for, the unauthenticated peer may never dial). The standby
# subscriber starts later instead, see below.

now_ms() { date +%s%3N; }
fault() { echo "$(now_ms) guest$I $*" >> "$SH/faults.log"; echo "soak-guest$I: fault $*"; }
res() { rdma res show > "$OUT/res-$1.txt" 2>&1; echo "soak-guest$I: rdma res $1: $(head -1 "$OUT/res-$1.txt")"; }

# The traffic window opens when every subscriber is connected (under TCG a guest JVM needs 1-3 min to start and
# connect, and how long depends on the host's load), at the latest WARMUP s after boot: guest 1 then writes the run's
# end to $SH/end-epoch-s, which every node and every guest's fault schedule reads.
BOOT_S=$(date +%s)
if [ "$I" = 1 ]; then
  # the bus secret every legitimate node reads from a file (rdma.secret.file); the unauthenticated peer has none
  head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' > "$SH/bus-secret"
fi
res before
start_node() {
  local role=$1
  for _ in $(seq 1 60); do [ -s "$SH/bus-secret" ] && break; sleep 1; done
  if [ "$role" = unauth ]; then
    java $JFLAGS $JOPTS -cp "$CP" io.rdmabus.soak.SoakNode subscriber --out "$OUT" --bind "$LAB_SELF_IP" --port $(( PORT + 1 )) \
      --seed "$SEEDS" --stop-file "$SH/unauth-stop" --end-file "$SH/end-epoch-s" --name unauth$I --secret none --ud-mode "$UD_MODE" \
      >> "$OUT/unauth.log" 2>&1 &
    UNAUTH_PID=$!
    return
  fi
  if [ "$role" = substandby ]; then
    # the replacement of the subscriber that the schedule kills: warmed up at boot, joins once the go file appears
    java $JFLAGS $JOPTS -cp "$CP" io.rdmabus.soak.SoakNode subscriber --out "$OUT" --bind "$LAB_SELF_IP" --port $(( PORT + 3 )) \
      --warm-port $(( PORT + 4 )) --seed "$SEEDS" --stop-file "$SH/stop" --end-file "$SH/end-epoch-s" --start-file "$SH/sub-go" \
      --ready-file "$SH/ready-substandby" --name "sub${I}r" --secret-file "$SH/bus-secret" --ud-mode "$UD_MODE" >> "$OUT/node.log" 2>&1 &
    SUBSTANDBY_PID=$!
    return
  fi
  if [ "$role" = standby ]; then
    java $JFLAGS $JOPTS -cp "$CP" io.rdmabus.soak.SoakNode publisher --out "$OUT" --bind "$LAB_SELF_IP" --port $(( PORT + 2 )) \
      --rate "$RATE" --end-file "$SH/end-epoch-s" --start-file "$SH/standby-go" --ready-file "$SH/ready-standby" --name "pub${I}b" \
      --secret-file "$SH/bus-secret" \
      --ud-mode "$UD_MODE" >> "$OUT/node.log" 2>&1 &
    STANDBY_PID=$!
    return
  fi
  if [ "$role" = publisher ]; then
    java $JFLAGS $JOPTS -cp "$CP" io.rdmabus.soak.SoakNode publisher --out "$OUT" --bind "$LAB_SELF_IP" --port $PORT \
      --rate "$RATE" --end-file "$SH/end-epoch-s" --name "pub$I" --secret-file "$SH/bus-secret" --ud-mode "$UD_MODE" >> "$OUT/node.log" 2>&1 &
  else
    java $JFLAGS $JOPTS -cp "$CP" io.rdmabus.soak.SoakNode subscriber --out "$OUT" --bind "$LAB_SELF_IP" --port $PORT \
      --seed "$SEEDS" --stop-file "$SH/stop" --end-file "$SH/end-epoch-s" --ready-file "$SH/ready-guest$I" --name "sub$I" \
      --secret-file "$SH/bus-secret" --ud-mode "$UD_MODE" >> "$OUT/node.log" 2>&1 &
  fi
  NODE_PID=$!
  echo "soak-guest$I: started $role pid $NODE_PID"
}

ROLE=subscriber; [ "$I" = 1 ] && ROLE=publisher
start_node $ROLE
# The unauthenticated peer runs on the last guest (guest 2 with only two): every guest then starts two JVMs at boot.
# With it and the standby subscriber both on guest 2, three cold JVMs share one vCPU: guest 2's subscriber can go 4 min
# without a trade and the standby's first subscribe can take 100 s.
UNAUTH_GUEST=2; [ "$N" -ge 3 ] && UNAUTH_GUEST=$N
[ "$I" = "$UNAUTH_GUEST" ] && start_node unauth
# The subscriber JVM that the schedule kills is replaced by a warm standby JVM, started now: a JVM restarted cold at
# the kill needs 150-240 s under TCG and would mostly come up after a short window, leaving its rejoin unproven. The standby warms up on a throwaway bus, then waits; at the kill it opens a new bus
# (a new node, as a restarted JVM's would be) and must join and get every trade from there on.
# It starts once guest 2's subscriber has its first trade (at the latest WARMUP s after boot): started together, the
# standby's warm-up (several minutes) starves that subscriber, which may not subscribe before its kill.
if [ "$I" = 2 ]; then
  while [ ! -e "$SH/ready-guest$I" ] && [ $(( $(date +%s) - BOOT_S )) -lt "$WARMUP" ]; do sleep 2; done
  start_node substandby
fi
if [ "$I" = 1 ]; then
  # The new publisher of the 75% fault is a warm standby, started now: a cold JVM needs 1.5-5 min under TCG to start
  # and connect, longer than the rest of a short window. It listens on port PORT+2 (every subscriber has both endpoints
  # as seeds), connects, and creates its publications only when the go file appears, right after the kill: a new
  # process, a new session.
  start_node standby
  while [ $(( $(date +%s) - BOOT_S )) -lt "$WARMUP" ]; do
    missing=""
    [ -e "$SH/ready-standby" ] || missing=" standby-publisher"
    [ "$N" -ge 2 ] && { [ -e "$SH/ready-substandby" ] || missing="$missing standby-subscriber(guest2)"; }
    for g in $(seq 2 "$N"); do [ -e "$SH/ready-guest$g" ] || missing="$missing guest$g"; done
    [ -z "$missing" ] && break
    sleep 2
  done
  [ -n "$missing" ] && echo "soak-guest1: subscribers on$missing not connected after ${WARMUP}s: starting the traffic window anyway"
  echo $(( $(date +%s) + 10 + D )) > "$SH/end-epoch-s.tmp" && mv "$SH/end-epoch-s.tmp" "$SH/end-epoch-s"
  echo "$(( $(date +%s) + 10 - BOOT_S ))" > "$SH/warmup-s"
  echo "soak-guest1: traffic window opens in 10 s, $(cat "$SH/warmup-s") s after boot; not connected:${missing:- none}"
fi
for _ in $(seq 1 $(( WARMUP + 120 ))); do [ -s "$SH/end-epoch-s" ] && break; sleep 1; done
END=$(cat "$SH/end-epoch-s") || { echo "soak-guest$I: no end time from guest 1"; exit 1; }
T0=$(( END - D ))               # start of the traffic window
at() { local t=$(( T0 + D * $1 / 100 )); local w=$(( t - $(date +%s) )); [ "$w" -gt 0 ] && sleep "$w"; }
LAST=$(( N ))   # the last subscriber guest takes the NIC faults, guest 2 the JVM and netem faults
# ---- this guest's part of the fault schedule
if [ "$I" = "$UNAUTH_GUEST" ]; then
  # a peer without the bus secret tries to join for the whole traffic window: a second JVM, started at boot (a cold
  # start takes 2-3 min under TCG). Started at the window's start on the last guest it would run into that guest's NIC
  # fault and come up after the window; a JVM that comes up while the NIC is down waits for the port
  at 0; fault "unauthenticated peer running since boot until 25% of the window (no bus secret, pid $UNAUTH_PID): must receive nothing"
  # It stops before this guest's NIC fault: it dials all the time, and an rdma_cm handshake in flight when rxe's link
  # goes down leaves the device deaf to unicast until it is re-created (lab/selftest/linkflap-cm.sh, docs/rdma-transport.md).
  # That is a kernel fault of rxe, not one of the bus under test.
  at 25; touch "$SH/unauth-stop"
  for _ in $(seq 1 60); do kill -0 "$UNAUTH_PID" 2>/dev/null || break; sleep 1; done
  echo "soak-guest$I: unauthenticated peer $(kill -0 "$UNAUTH_PID" 2>/dev/null && echo 'STILL RUNNING 60 s after its stop file' || echo stopped)"
fi
if [ "$I" = 2 ]; then
  at 15; fault "kill-9 subscriber JVM (pid $NODE_PID); the warm standby subscriber (pid $SUBSTANDBY_PID) opens a new bus and rejoins"
  kill -9 "$NODE_PID"; touch "$SH/sub-go"; wait "$NODE_PID" 2>/dev/null
  NODE_PID=$SUBSTANDBY_PID
fi
if [ "$I" = "$LAST" ] && [ "$N" -ge 3 ]; then
  at 35; fault "ip link set eth0 down (10 s)"; ip link set eth0 down; sleep 10
  ip link set eth0 up; ip route add 224.0.0.0/4 dev eth0 2>/dev/null; fault "ip link set eth0 up"
fi
if [ "$I" = 2 ]; then
  at 50
  if modprobe sch_netem 2>/dev/null && tc qdisc add dev eth0 root netem loss 5% delay 20ms 2>"$OUT/netem.err"; then
    fault "tc netem loss 5% delay 20ms on eth0 (for $(( D * 15 / 100 )) s)"
    at 65; tc qdisc del dev eth0 root; fault "tc netem removed"
  else
    fault "tc netem NOT APPLIED: $(cat "$OUT/netem.err" 2>/dev/null) (sch_netem missing?)"
  fi
fi
if [ "$I" = 1 ]; then
  at 75; fault "kill-9 publisher JVM (pid $NODE_PID); the standby publisher (pid $STANDBY_PID, port $(( PORT + 2 )), up since boot) takes over (new session)"
  kill -9 "$NODE_PID"; touch "$SH/standby-go"; wait "$NODE_PID" 2>/dev/null
  NODE_PID=$STANDBY_PID
fi
wait "$NODE_PID"; RC=$?
[ -n "${UNAUTH_PID:-}" ] && wait "$UNAUTH_PID"
echo "soak-guest$I: $ROLE exited $RC"
if [ "$I" = 1 ]; then
  touch "$SH/stop"
else
  for _ in $(seq 1 60); do [ -e "$SH/stop" ] && break; sleep 1; done
fi
sleep 5
res after
echo "$RC" > "$OUT/node-exit"
exit "$RC"
