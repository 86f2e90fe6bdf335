# Sourced by scripts/rdma-bus, demo.sh and market-data.sh (after env.sh): makes sure the rdma-bus distribution
# (samples/target/rdma-bus: bin/rdma-bus, conf/jvm.options, lib/) is built and newer than every source it is made
# of, building it with Maven only when it is missing or out of date (or RDMABUS_REBUILD=1). Runs from the repo root.
RDMABUS_DIST=samples/target/rdma-bus
rdmabus_dist_stale() {
    local stamp="$RDMABUS_DIST/lib/samples-0.1.0-SNAPSHOT.jar"
    [ "${RDMABUS_REBUILD:-0}" = 1 ] && { echo "RDMABUS_REBUILD=1"; return 0; }
    [ -f "$stamp" ] && [ -x "$RDMABUS_DIST/bin/rdma-bus" ] || { echo "not built yet"; return 0; }
    local newer
    newer=$(find pom.xml config/jvm.options bus-api codecs tcp-fallback rdma-transport samples \
        \( -name target -prune \) -o \( -path '*/src/test' -prune \) -o \( -type f \( -name 'pom.xml' -o -name 'jvm.options' -o -path '*/src/*' \) \
        -newer "$stamp" -print \) 2>/dev/null | head -1)
    [ -n "$newer" ] && { echo "$newer changed"; return 0; }
    return 1
}
rdmabus_dist_build() {
    local why log start rc
    why=$(rdmabus_dist_stale) || return 0
    log=$(mktemp -t rdma-bus-build.XXXXXX)
    start=$SECONDS
    echo "building the rdma-bus distribution ($why; once, ~30 s; the first build on a machine also downloads dependencies)..." >&2
    # package, never install: the reactor resolves the project's modules itself and ~/.m2 keeps what it had
    mvn -B -ntp -pl samples -am package -Dmaven.test.skip=true -Dcheckstyle.skip > "$log" 2>&1 &
    local pid=$!
    # progress: one line per module Maven starts
    local module shown=""
    while kill -0 "$pid" 2>/dev/null; do
        module=$(sed -n 's/^\[INFO\] Building \(rdma-bus[^[]*[^[ ]\) *\[.*/\1/p' "$log" | tail -1)
        if [ -n "$module" ] && [ "$module" != "$shown" ]; then
            echo "  $((SECONDS - start)) s: $module" >&2
            shown=$module
        fi
        sleep 1
    done
    wait "$pid" && rc=0 || rc=$?
    if [ "$rc" != 0 ]; then
        tail -40 "$log" >&2
        echo "building the rdma-bus distribution failed (exit $rc); full log: $log" >&2
        return "$rc"
    fi
    rm -f "$log"
    echo "built $RDMABUS_DIST in $((SECONDS - start)) s" >&2
}
