#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The MQTT fleet run (docs/mqtt.md "Tests"): Tests/mqtt-fleet/run.sh [N [SECONDS]] (default 50
# kiosks for 60 s) builds kiosk-carousel and runs Tests/mqtt-fleet/fleet_mqtt.py: N kiosks on one
# mosquitto on loopback, with a broker restart and SIGKILLs on the way, every event accounted
# for. Needs mosquitto, mosquitto-clients and python3-pil (deploy/apt-deps.sh --tests).
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build --product kiosk-carousel >/dev/null
exec /usr/bin/python3 Tests/mqtt-fleet/fleet_mqtt.py "$(swift build --show-bin-path)/kiosk-carousel" "${1:-50}" "${2:-60}"
