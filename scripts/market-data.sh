#!/usr/bin/env bash
# Runs the market-data fan-out sample: a feed (quotes best effort, trades reliable), an order-book builder and a slow
# conflating strategy, one bus each, on the default transport (auto: RDMA if a device exists, else the best fallback).
# Usage: scripts/market-data.sh [--transport auto|aeron-udp|aeron-ipc|tcp] [--duration-s 10] [--rate 20000] ... (--help)
# The same as `scripts/rdma-bus market-data ...`: runs the distribution, building it first when needed (scripts/dist.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
source scripts/dist.sh
rdmabus_dist_build
exec "$RDMABUS_DIST/bin/rdma-bus" market-data "$@"
