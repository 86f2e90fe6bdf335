#!/usr/bin/env bash
# Runs the quickstart pub/sub demo on the embedded default transport (no set-up needed).
# Usage: scripts/demo.sh [messages] [transport]   e.g. scripts/demo.sh 100000 aeron-ipc
# Runs the distribution samples/target/rdma-bus, building it first when needed (scripts/dist.sh).
# RDMABUS_LOG_LEVEL=info shows the bus's log (which transport 'auto' chose and why, start and close).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
source scripts/dist.sh
rdmabus_dist_build
RDMABUS_MAIN=io.rdmabus.samples.QuickstartDemo exec "$RDMABUS_DIST/bin/rdma-bus" "$@"
