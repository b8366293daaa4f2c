#!/usr/bin/env bash
# Create (once) and print the path of the project's virtual environment.
#   BPY_VERSION=4.5.15 scripts/env.sh   -> .venv-bpy4.5.15 with that Blender wheel
# The default is bpy 5.0.1 in .venv.  Re-installs when the requirements change.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bpy_version="${BPY_VERSION:-5.0.1}"
if [ "$bpy_version" = "5.0.1" ]; then venv="$root/.venv"; else venv="$root/.venv-bpy$bpy_version"; fi
python="${PYTHON:-python3.11}"
command -v "$python" >/dev/null 2>&1 || python=python3
stamp="$venv/.requirements-$(cat "$root/scripts/requirements-dev.txt" | sha1sum | cut -c1-12)-bpy$bpy_version"
if [ ! -f "$stamp" ]; then
  echo "setting up $venv (bpy $bpy_version)..." >&2
  "$python" -m venv "$venv" >&2
  "$venv/bin/python" -m pip install -q --disable-pip-version-check \
      -r "$root/scripts/requirements-dev.txt" "bpy==$bpy_version" >&2
  rm -f "$venv"/.requirements-*
  touch "$stamp"
fi
echo "$venv"
