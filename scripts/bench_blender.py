"""Import and export speed in Blender: ours against Blender's own io_anim_bvh, same files, same run.

Each measurement runs in a fresh process (bpy imported, the add-ons enabled and,
for export, the .blend with that tool's import opened before the clock starts);
the best of ``--repeat`` runs is kept.  Memory
growth is the peak resident size during the call minus the size before it,
sampled every 2 ms.  Files are generated 31-joint BVH clips.  Not a test.

    python scripts/bench_blender.py [--frames 1000 10000 50000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_core import generated_clip

from mocap_addon.core import save

MEASURE = r"""
import json, os, sys, threading, time
sys.path.insert(0, sys.argv[1])
import bpy, addon_utils
import mocap_addon
mocap_addon.register()
addon_utils.enable("io_anim_bvh", default_set=True)
bpy.ops.wm.read_homefile(use_empty=True)
tool, action, source, target = sys.argv[2:6]
page = os.sysconf("SC_PAGE_SIZE")

def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * page

def run_import():
    if tool == "ours":
        bpy.ops.import_anim.mocap_bvh(filepath=source)
    else:
        bpy.ops.import_anim.bvh(filepath=source)

if action == "prepare":
    run_import()
    bpy.ops.wm.save_as_mainfile(filepath=target)
    print("RESULT", json.dumps({"seconds": 0.0, "growth": 0}), flush=True)
    os._exit(0)
if action == "export":
    bpy.ops.wm.open_mainfile(filepath=source)
    obj = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = obj
    first, last = (round(v) for v in obj.animation_data.action.frame_range)
    def call():
        if tool == "ours":
            bpy.ops.export_anim.mocap_bvh(filepath=target)
        else:
            bpy.ops.export_anim.bvh(filepath=target, frame_start=first, frame_end=last)
else:
    call = run_import
peak = [resident()]
before = peak[0]
done = threading.Event()
def sample():
    while not done.is_set():
        peak[0] = max(peak[0], resident())
        time.sleep(0.002)
watcher = threading.Thread(target=sample, daemon=True)
watcher.start()
start = time.perf_counter()
call()
seconds = time.perf_counter() - start
done.set(); watcher.join()
peak[0] = max(peak[0], resident())
print("RESULT", json.dumps({"seconds": seconds, "growth": peak[0] - before}), flush=True)
os._exit(0)  # the bpy 4.5 wheel can hang tearing down at interpreter exit
"""


def measure(tool: str, action: str, source: Path, target: Path, repeat: int) -> dict[str, float]:
    """Best time and the growth of that run over ``repeat`` fresh processes."""
    runs = []
    for _ in range(repeat):
        result = subprocess.run([sys.executable, "-c", MEASURE, str(ROOT), tool, action, str(source), str(target)],
                                capture_output=True, text=True, check=True)
        line = next(x for x in result.stdout.splitlines() if x.startswith("RESULT "))
        runs.append(json.loads(line[len("RESULT "):]))
    return min(runs, key=lambda r: r["seconds"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, nargs="+", default=[1000, 10000, 50000])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print("| frames | step | io_anim_bvh s | ours s | time ratio | io_anim_bvh MB | ours MB | memory ratio |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        for frames in args.frames:
            source = Path(folder) / f"bench_{frames}.bvh"
            save(generated_clip(frames), source)
            blends = {tool: Path(folder) / f"{tool}_{frames}.blend" for tool in ("theirs", "ours")}
            for tool, blend in blends.items():
                measure(tool, "prepare", source, blend, 1)
            for action in ("import", "export"):
                results = {tool: measure(tool, action, blends[tool] if action == "export" else source,
                                         Path(folder) / f"{tool}.bvh", args.repeat) for tool in blends}
                theirs, ours = results["theirs"], results["ours"]
                print(f"| {frames} | {action} | {theirs['seconds']:.2f} | {ours['seconds']:.2f} "
                      f"| 1/{theirs['seconds'] / ours['seconds']:.1f} | {theirs['growth'] / 1e6:.0f} "
                      f"| {ours['growth'] / 1e6:.0f} | {ours['growth'] / max(theirs['growth'], 1):.2f} |", flush=True)


if __name__ == "__main__":
    main()
