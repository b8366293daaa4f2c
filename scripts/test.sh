#!/usr/bin/env bash
# Run every test, then lint and type checks.  Creates the environment if needed.
#   scripts/test.sh                 all tests on bpy 5.0.1
#   BPY_VERSION=4.5.15 scripts/test.sh -m blender   the Blender tier on another wheel
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$("$root/scripts/env.sh")"
cd "$root"
"$venv/bin/python" -m pytest "$@"
if [ $# -eq 0 ]; then
  "$venv/bin/ruff" check mocap_addon scripts tests
  "$venv/bin/mypy"
fi
