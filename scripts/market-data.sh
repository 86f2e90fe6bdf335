#!/usr/bin/env bash
# Runs the market-data fan-out sample: a feed (quotes best effort, trades reliable), an order-book builder and a slow
# conflating strategy, one bus each, on the default transport (auto: RDMA if a device exists, else the best fallback).
# Usage: scripts/market-data.sh [--transport auto|aeron-udp|aeron-ipc|tcp] [--duration-s 10] [--rate 20000] ... (--help)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
echo "building (first run downloads dependencies)..."
mvn -B -q -pl samples -am install -DskipTests
mvn -B -q -pl samples dependency:build-classpath -Dmdep.outputFile="$PWD/samples/target/classpath.txt"
exec "$JAVA_HOME/bin/java" $RDMABUS_JVM_FLAGS -Dorg.slf4j.simpleLogger.defaultLogLevel=warn \
    -cp "samples/target/classes:$(cat samples/target/classpath.txt)" \
    io.rdmabus.samples.marketdata.MarketDataSample "$@"
