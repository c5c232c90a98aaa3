#!/usr/bin/env bash
# Set up (packages, mDNS), build p2p in release mode and start `p2p chat` with the given arguments.
set -euo pipefail
cd "$(dirname "$(readlink -f "$0")")/.."
scripts/setup.sh >&2
swift build -c release --product p2p >&2
exec .build/release/p2p chat "$@"
