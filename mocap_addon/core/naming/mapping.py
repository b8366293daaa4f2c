"""One mapping run, and the public entry points: the mapping, the rule for each joint, a report."""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Iterable, Mapping

import numpy as np

from ..model import Skeleton
from .canonical import CANONICAL_JOINTS, REQUIRED_JOINTS
from .checks import limb_chain_warnings
from .figure import Figure
from .labels import Labels, apply_preset
from .landmarks import find_body
from .limbs import label_limbs
from .presets import PresetLike, as_preset
from .sides import settle_sides
from .trunk import label_trunk

MAPPINGS_KEPT = 16  # skeletons whose detected mapping a process keeps (a library repeats a few skeletons)
_detected: OrderedDict[str, dict[str, str | None]] = OrderedDict()


def map_skeleton(skeleton: Skeleton, *, preset: PresetLike = None) -> dict[str, str | None]:
    """Every joint name -> its canonical joint, or ``None`` where it folds into a neighbour."""
    if preset is not None:
        return {name: label for name, (label, _) in _run(skeleton, preset).items()}
    key = _content(skeleton)  # detection depends on the skeleton alone: kept by its content
    if key in _detected:
        _detected.move_to_end(key)
    else:
        _detected[key] = {name: label for name, (label, _) in _run(skeleton, None).items()}
        while len(_detected) > MAPPINGS_KEPT:
            _detected.popitem(last=False)
    return dict(_detected[key])


def _content(skeleton: Skeleton) -> str:
    """Every field of ``skeleton``, hashed."""
    digest = hashlib.sha1(repr((skeleton.names, skeleton.parents, [tuple(c) for c in skeleton.channels])).encode())
    for values in (skeleton.offsets, skeleton.rest_rotations, skeleton.position_replaces_offset,
                   skeleton.translation_in_rest_frame, skeleton.length_directions, *skeleton.end_sites):
        digest.update(repr(np.shape(values)).encode())
        digest.update(np.ascontiguousarray(values).tobytes())
    return digest.hexdigest()


def explain_mapping(skeleton: Skeleton, *, preset: PresetLike = None) -> dict[str, str]:
    """Every joint name -> the rule that gave it its canonical joint (or left it unmapped)."""
    return {name: rule for name, (_, rule) in _run(skeleton, preset).items()}


def mapping_report(skeleton: Skeleton, *, preset: PresetLike = None) -> str:
    """Text for people: ``source -> canonical  (rule)`` per joint, then unmapped joints and missing ones."""
    result = _run(skeleton, preset)
    width = max((len(name) for name in result), default=0)
    lines = [f"{name:<{width}} -> {label or '-':<13} ({rule})" for name, (label, rule) in result.items()]
    mapping = {name: label for name, (label, _) in result.items()}
    unmapped = [name for name, label in mapping.items() if label is None]
    missing = missing_joints(mapping)
    required = [joint for joint in missing if joint in REQUIRED_JOINTS]
    lines.append(f"unmapped ({len(unmapped)}): {', '.join(unmapped) or 'none'}")
    lines.append(f"missing canonical joints ({len(missing)} of {len(CANONICAL_JOINTS)}): "
                 f"{', '.join(missing) or 'none'}")
    lines.append(f"missing required joints: {', '.join(required) or 'none'}")
    lines += [f"warning: {warning}" for warning in limb_chain_warnings(skeleton, mapping)]
    return "\n".join(lines)


def missing_joints(mapping: Mapping[str, str | None], wanted: Iterable[str] = CANONICAL_JOINTS) -> list[str]:
    """The wanted canonical joints no joint maps to, in canonical order."""
    found = set(mapping.values())
    return [joint for joint in wanted if joint not in found]


def _run(skeleton: Skeleton, preset: PresetLike) -> dict[str, tuple[str | None, str]]:
    """Every joint name -> (canonical joint or ``None``, rule): detection, then the preset over it,
    then any label breaking the hierarchy dropped."""
    chosen = as_preset(preset)
    figure = Figure.read(skeleton, chosen)
    labels = Labels(figure)
    if figure.names:
        body = find_body(figure)
        label_trunk(figure, labels, body)
        settle_sides(figure, body)
        label_limbs(figure, labels, body.limbs)
    if chosen is not None:
        apply_preset(labels, chosen)
    labels.keep_consistent()
    return labels.result()
