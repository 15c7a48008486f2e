#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Counts the Swift lines wider than the house's width (.swift-format's lineLength, 120 columns;
# a column is one Unicode character, as swift-format counts them) in Package.swift, Sources and
# Tests. Prints each such line as FILE:LINE: WIDTH columns, then the total.
#   Tests/style/line-width.sh            report only (exit 0)
#   Tests/style/line-width.sh --check    exit 1 when any line is too wide (for when the tree has
#                                        been reformatted and the width is enforced)
#   Tests/style/line-width.sh --max N    exit 1 when more than N lines are too wide
set -euo pipefail
cd "$(dirname "$0")/../.."
max=-1
case "${1:-}" in
    --check) max=0 ;;
    --max) max="${2:?--max needs a number}" ;;
    "") ;;
    *) echo "usage: $0 [--check | --max N]" >&2; exit 64 ;;
esac
width=$(python3 -c 'import json; print(json.load(open(".swift-format"))["lineLength"])')
python3 - "$width" "$max" <<'PY'
import pathlib, sys
width, limit = int(sys.argv[1]), int(sys.argv[2])
files = [pathlib.Path("Package.swift")] + sorted(
    p for top in ("Sources", "Tests") for p in pathlib.Path(top).rglob("*.swift"))
total = 0
for path in files:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if len(line) > width:
            total += 1
            print(f"{path}:{number}: {len(line)} columns")
print(f"{total} Swift lines over {width} columns")
sys.exit(1 if limit >= 0 and total > limit else 0)
PY
