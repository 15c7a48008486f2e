#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The fleet run (docs/testing.md): Tests/fleet/run.sh [N [WARM STEADY AFTER]] (default 100 kiosks,
# 40 s, 60 s, 20 s) builds kiosk-carousel and runs Tests/fleet/fleet.py: N kiosks against one
# nginx on loopback. Needs nginx-light and python3-pil (deploy/apt-deps.sh --tests).
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build --product kiosk-carousel >/dev/null
exec /usr/bin/python3 Tests/fleet/fleet.py "$(swift build --show-bin-path)/kiosk-carousel" "${1:-100}" "${@:2}"
