#!/usr/bin/env bash
# The main job on the bundled sample: import it headless with the Blender wheel, save
# out/walk_turn.blend, export the armature back to out/exported/, and print the reports.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$("$root/scripts/env.sh")"
cd "$root"
mkdir -p out
"$venv/bin/python" -m mocap_addon.core info samples/walk_turn.bvh
"$venv/bin/python" scripts/mocap_batch.py samples/walk_turn.bvh out/walk_turn.blend
"$venv/bin/python" scripts/mocap_batch.py out/walk_turn.blend out/exported
