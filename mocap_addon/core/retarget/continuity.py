"""Channel angles kept continuous where a joint with fewer channels would spin.

A joint with one or two rotation channels that points its bone exactly has a
singularity: as the wanted direction passes near a channel's axis, the angle
about that axis sweeps up to half a turn in one frame although the wanted
rotation barely moves (a two-channel foot pointing along its outer axis, a
hinge whose lower bone points along the hinge).  :func:`continued` lets such an
angle move at most :func:`largest_steps` per frame: the sweep is spread over the
frames around it, half before and half after, and the bone misses its
direction by a little there instead of spinning.
"""

from __future__ import annotations

import numpy as np

from ..rotations import FloatArray

LEAST_STEP = np.radians(25.0)  # a channel angle may always turn this much in one frame...
STEP_RATIO = 1.5  # ...or this many times what the wanted rotation turns in that frame


def largest_steps(wanted: FloatArray) -> FloatArray:
    """How far ``(F - 1,)`` (radians) a channel angle may turn from each frame to the next for the wanted
    rotations ``(F, 3, 3)``: :data:`LEAST_STEP`, or :data:`STEP_RATIO` times the wanted rotation's own turn
    where that is larger (fast motion, low frame rates)."""
    between = np.einsum("fij,fij->f", wanted[:-1], wanted[1:])  # trace(W[f]^T W[f+1])
    turn = np.arccos(np.clip((between - 1.0) / 2.0, -1.0, 1.0))
    return np.maximum(LEAST_STEP, STEP_RATIO * turn)


def continued(angles: FloatArray, steps: FloatArray) -> FloatArray:
    """``angles`` ``(F,)`` or ``(F, n)`` (radians, any wrapping; each column alone) with no frame-to-frame
    change larger than ``steps`` ``(F - 1,)``: where they jump further (the shorter way round), the jump is
    spread symmetrically over the frames around it.  Equal to ``angles`` (modulo a turn) elsewhere."""
    if angles.ndim == 2:
        return np.stack([continued(column, steps) for column in angles.T], axis=-1)
    if len(angles) < 2:
        return angles
    change = (np.diff(angles) + np.pi) % (2 * np.pi) - np.pi
    if not (np.abs(change) > steps).any():
        return angles
    unwrapped = angles[0] + np.concatenate([[0.0], np.cumsum(change)])
    ahead = _limited(unwrapped, steps)
    behind = _limited(unwrapped[::-1], steps[::-1])[::-1]
    return (ahead + behind) / 2.0


def _limited(angles: FloatArray, steps: FloatArray) -> FloatArray:
    """``angles`` (unwrapped) followed forward in time at most ``steps`` per frame: after a larger jump they
    lag until they catch up.  Only the lagging frames are visited one by one."""
    wanted, allowed, held = angles.tolist(), steps.tolist(), angles.tolist()
    settled = 0
    for start in (np.flatnonzero(np.abs(np.diff(angles)) > steps) + 1).tolist():
        frame = max(start, settled)
        while frame < len(wanted):
            gap, limit = wanted[frame] - held[frame - 1], allowed[frame - 1]
            if abs(gap) <= limit:
                break
            held[frame] = held[frame - 1] + (limit if gap > 0 else -limit)
            frame += 1
        settled = frame + 1
    return np.array(held)
