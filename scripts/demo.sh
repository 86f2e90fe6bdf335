#!/usr/bin/env bash
# Runs the quickstart pub/sub demo on the embedded default transport (no set-up needed).
# Usage: scripts/demo.sh [messages] [transport]   e.g. scripts/demo.sh 100000 aeron-ipc
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
echo "building (first run downloads dependencies)..."
mvn -B -q -pl samples -am install -DskipTests
mvn -B -q -pl samples dependency:build-classpath -Dmdep.outputFile="$PWD/samples/target/classpath.txt"
exec "$JAVA_HOME/bin/java" $RDMABUS_JVM_FLAGS -cp "samples/target/classes:$(cat samples/target/classpath.txt)" \
    io.rdmabus.samples.QuickstartDemo "$@"
