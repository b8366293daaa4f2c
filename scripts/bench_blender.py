"""Import and export speed in Blender: ours against Blender's own io_anim_bvh, same files, same run.

Each measurement runs in a fresh process (bpy imported, the add-ons enabled and,
for export, the .blend with that tool's import opened before the clock starts);
the best of ``--repeat`` runs is kept, with its CPU time (this process's, a
steadier measure than wall time on a busy machine).  Memory growth is the peak
resident size during the call minus the size before it, sampled every 2 ms.  Files: generated
31-joint BVH clips, and the real 120 fps captures from ``../shared/corpus``
(CMU 01_01, Xia) with CMU 01_01 also repeated end to end to 50,000 frames.
Ours is measured as it imports by default (quaternions), with Euler rotations, and with
key reduction (Reduce Keys at the default tolerance; its export writes that reduced action).
Not a test.

    python scripts/bench_blender.py [--frames 10000 50000] [--repeat 3] [--no-real]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from bench_core import generated_clip

from mocap_addon.core import Clip, load, save

CORPUS = ROOT.parent / "shared" / "corpus"
REAL = ["bvh/fm_cmu_01_01.bvh", "bvh/ganim_Xia_normal.bvh"]
REPEATED = 50000  # frames of CMU 01_01 played end to end

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
    if tool == "theirs":
        bpy.ops.import_anim.bvh(filepath=source)
    else:
        bpy.ops.import_anim.mocap_bvh(filepath=source, reduce_keys=tool == "reduced",
                                      rotation_mode="EULER" if tool == "euler" else "QUATERNION")

if action == "prepare":
    run_import()
    bpy.ops.wm.save_as_mainfile(filepath=target)
    print("RESULT", json.dumps({"seconds": 0.0, "cpu": 0.0, "growth": 0}), flush=True)
    os._exit(0)
if action == "export":
    bpy.ops.wm.open_mainfile(filepath=source)
    obj = next(o for o in bpy.context.scene.objects if o.type == "ARMATURE")
    bpy.context.view_layer.objects.active = obj
    first, last = (round(v) for v in obj.animation_data.action.frame_range)
    def call():
        if tool == "theirs":
            bpy.ops.export_anim.bvh(filepath=target, frame_start=first, frame_end=last)
        else:
            bpy.ops.export_anim.mocap_bvh(filepath=target)
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
start, cpu = time.perf_counter(), time.process_time()
call()
seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
done.set(); watcher.join()
peak[0] = max(peak[0], resident())
print("RESULT", json.dumps({"seconds": seconds, "cpu": cpu, "growth": peak[0] - before}), flush=True)
os._exit(0)  # the bpy 4.5 wheel can hang tearing down at interpreter exit
"""

TOOLS = ("theirs", "ours", "euler", "reduced")
STEP = {"ours": "", "euler": ", Euler", "reduced": ", reduced"}


def measure(tool: str, action: str, source: Path, target: Path, repeat: int) -> dict[str, float]:
    """Best time and the growth of that run over ``repeat`` fresh processes."""
    runs = []
    for _ in range(repeat):
        result = subprocess.run([sys.executable, "-c", MEASURE, str(ROOT), tool, action, str(source), str(target)],
                                capture_output=True, text=True, check=True)
        line = next(x for x in result.stdout.splitlines() if x.startswith("RESULT "))
        runs.append(json.loads(line[len("RESULT "):]))
    return min(runs, key=lambda r: r["seconds"])


def sources(folder: Path, frame_counts: list[int], real: bool) -> list[tuple[str, Path]]:
    """(label, BVH file) for the generated clips and, if asked and present, the real captures."""
    files = []
    for frames in frame_counts:
        path = folder / f"generated_{frames}.bvh"
        save(generated_clip(frames), path)
        files.append((f"generated {frames}", path))
    if real and (CORPUS / REAL[0]).exists():
        files += [(Path(name).stem, CORPUS / name) for name in REAL]
        cmu = load(CORPUS / REAL[0])
        copies = -(-REPEATED // cmu.frame_count)
        repeated = Clip(cmu.skeleton, np.tile(cmu.motion, (copies, 1))[:REPEATED], cmu.frame_time)
        path = folder / "cmu_01_01_repeated.bvh"
        save(repeated, path)
        files.append((f"CMU 01_01 x{REPEATED / cmu.frame_count:.1f}", path))
    return files


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--frames", type=int, nargs="*", default=[10000, 50000])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-real", action="store_true", help="only the generated clips")
    args = parser.parse_args()
    print("| clip | frames | step | io_anim_bvh s | ours s | time ratio | CPU ratio | io_anim_bvh MB | ours MB "
          "| memory ratio |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    with tempfile.TemporaryDirectory() as folder:
        for label, source in sources(Path(folder), args.frames, not args.no_real):
            frames = load(source).frame_count
            blends = {tool: Path(folder) / f"{tool}_{source.stem}.blend" for tool in TOOLS}
            for tool, blend in blends.items():
                measure(tool, "prepare", source, blend, 1)
            for action in ("import", "export"):
                results = {tool: measure(tool, action, blends[tool] if action == "export" else source,
                                         Path(folder) / f"{tool}.bvh", args.repeat) for tool in TOOLS}
                theirs = results["theirs"]
                for tool in TOOLS[1:]:
                    ours = results[tool]
                    step = action + STEP[tool]
                    print(f"| {label} | {frames} | {step} | {theirs['seconds']:.2f} | {ours['seconds']:.2f} "
                          f"| 1/{theirs['seconds'] / ours['seconds']:.1f} | 1/{theirs['cpu'] / ours['cpu']:.1f} "
                          f"| {theirs['growth'] / 1e6:.0f} "
                          f"| {ours['growth'] / 1e6:.0f} | {ours['growth'] / max(theirs['growth'], 1):.2f} |",
                          flush=True)


if __name__ == "__main__":
    main()
