#!/usr/bin/env bash
# The main job on the bundled samples (results in out/):
#  1. describe the walk, and show how the jog's Mixamo-style bone names map onto the canonical skeleton;
#  2. put the jog on the canonical skeleton (metres, T-pose) and retarget it onto the walk's skeleton;
#  3. blend the two clips (the jog's waving right arm on the walk: two skeletons, a masked mix);
#  4. build a motion graph of the jog, the walk and the waving walk, and walk it for 300 new frames
#     (its keys reduced as Reduce Keys would, at 0.002 of the figure's height);
#  5. import the samples and the results headless with the Blender wheel into out/demo.blend and export
#     every armature back to out/exported/;
#  6. build the catch scene in Blender (a ball flies in, the blend's mix is solved so the hand meets it);
#  7. a library batch: the samples and the results converted in parallel to HTR with a contact sheet each
#     (out/library/index.html), then put on the canonical skeleton; run again, it skips what is done.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$("$root/scripts/env.sh")"
cd "$root"
mkdir -p out
py="$venv/bin/python"
step() { printf '\n== %s\n' "$*"; }
step "describe"
"$py" -m mocap_addon.core info samples/walk_turn.bvh
step "map bone names onto the canonical skeleton"
"$py" -m mocap_addon.core map samples/jog_wave.bvh
step "convert to the canonical skeleton, retarget onto another"
"$py" -m mocap_addon.core canonical samples/jog_wave.bvh out/jog_wave_canonical.bvh
"$py" -m mocap_addon.core retarget samples/jog_wave.bvh --onto samples/walk_turn.bvh out/jog_on_walk_skeleton.bvh
step "blend two clips"
"$py" -m mocap_addon.core blend samples/walk_turn.bvh samples/jog_wave.bvh out/walk_waving.bvh --mix 1 --mask right_arm
"$py" -m mocap_addon.core blend samples/walk_turn.bvh samples/jog_wave.bvh out/walk_jog_half.bvh --mix 0.5 \
  --root heading --align dtw
step "motion graph: transitions between the clips, new motion made from them"
"$py" -m mocap_addon.core graph build samples/jog_wave.bvh samples/walk_turn.bvh out/walk_waving.bvh \
  -o out/graph.npz --threshold 0.7
"$py" -m mocap_addon.core graph info out/graph.npz
"$py" -m mocap_addon.core graph synth out/graph.npz samples/jog_wave.bvh samples/walk_turn.bvh \
  out/walk_waving.bvh -o out/graph_walk.bvh --frames 300 --seed 7 --reduce 0.002
if "$py" -c "import matplotlib" 2>/dev/null; then
  "$py" -m mocap_addon.core graph plot out/graph.npz out/graph_matrix.png --kind matrix
fi
step "import into Blender and export back"
"$py" scripts/mocap_batch.py samples/walk_turn.bvh samples/jog_wave.bvh out/jog_wave_canonical.bvh \
  out/walk_waving.bvh out/walk_jog_half.bvh out/graph_walk.bvh out/demo.blend
"$py" scripts/mocap_batch.py out/demo.blend out/exported
step "the catch scene"
"$py" scripts/catch_demo.py out/catch.blend
step "a library batch with previews (open out/library/index.html)"
"$py" -m mocap_addon.core batch samples out/jog_wave_canonical.bvh out/walk_waving.bvh -o out/library --to htr \
  --previews --jobs 2
"$py" -m mocap_addon.core batch samples -o out/library_canonical --to bvh --canonical --jobs 2
