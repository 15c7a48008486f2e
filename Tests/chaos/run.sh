#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The chaos run (docs/testing.md): Tests/chaos/run.sh [SECONDS [SEED]] (default 75 s, seed 1)
# builds kiosk-carousel and runs Tests/chaos/chaos.py against the fault server's chaos mode.
# Needs python3-pil (deploy/apt-deps.sh --tests).
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build --product kiosk-carousel >/dev/null
exec /usr/bin/python3 Tests/chaos/chaos.py "$(swift build --show-bin-path)/kiosk-carousel" "${1:-75}" "${2:-1}"
