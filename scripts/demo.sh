#!/usr/bin/env bash
# The main job on the bundled sample: describe it, convert it, write results to out/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$("$root/scripts/env.sh")"
cd "$root"
mkdir -p out
"$venv/bin/python" -m mocap_addon.core info samples/walk_turn.bvh
"$venv/bin/python" -m mocap_addon.core convert samples/walk_turn.bvh out/walk_turn_roundtrip.bvh
