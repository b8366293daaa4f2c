"""The trunk labelled: the hips, the spine from the hips to the chest, the neck and the head."""

from __future__ import annotations

from .canonical import NECK, SPINE
from .chains import spread
from .figure import Figure
from .labels import Labels
from .landmarks import Body


def label_trunk(figure: Figure, labels: Labels, body: Body) -> None:
    """Hips, spine joints spread over ``spine_01``..``spine_04``, neck joints over ``neck_01``/``neck_02``, head."""
    hips, head = body.hips, body.head
    if hips is not None:
        labels.label(hips, "hips", body.hips_rule)
        for joint in figure.ancestors(hips)[1:]:
            labels.fold(joint, "above the hips (root or reference joint)")
    top = _spine_top(figure, body)
    if hips is not None and top is not None and figure.is_ancestor(hips, top):
        _label_spine(figure, labels, hips, top)
    if head is None:
        return
    labels.label(head, "head", "named head" if figure.central(head, "head") else "top of the neck chain")
    base = top if top is not None else hips
    if base is not None and figure.is_ancestor(base, head):
        _label_neck(figure, labels, base, head)


def _spine_top(figure: Figure, body: Body) -> int | None:
    """The chest; with no arms, the last joint below the head not named neck."""
    hips, head = body.hips, body.head
    if body.chest is not None or hips is None or head is None or body.arm_fork is not None \
            or not figure.is_ancestor(hips, head):
        return body.chest
    between = figure.path(hips, head)[:-1]
    necks = [j for j in between if figure.central(j, "neck")]
    spine_part = between[: between.index(necks[0])] if necks else between
    return spine_part[-1] if spine_part else None


def _label_spine(figure: Figure, labels: Labels, hips: int, top: int) -> None:
    spine = [j for j in figure.path(hips, top) if not figure.folded(j)]
    for joint in [j for j in spine if figure.central(j, "hips") and "spine" not in figure.roles(j)]:
        spine.remove(joint)
        labels.fold(joint, "a second hips joint below the hips")
    if any("spine" in figure.roles(j) for j in spine):
        for joint in [j for j in spine if not figure.roles(j) and j != top]:
            spine.remove(joint)
            labels.fold(joint, "a joint between the spine joints not named like them")
    for number, (joint, slot) in enumerate(zip(spine, spread(len(spine), SPINE, SPINE[-1])), 1):
        if slot is None:
            labels.fold(joint, f"extra spine joint ({len(spine)} between the hips and the arms)")
        else:
            labels.label(joint, slot, f"joint {number} of {len(spine)} from the hips "
                                      "to the joint carrying the arms and neck")


def _label_neck(figure: Figure, labels: Labels, base: int, head: int) -> None:
    neck = [j for j in figure.path(base, head)[:-1] if not figure.folded(j)]
    for number, (joint, slot) in enumerate(zip(neck, spread(len(neck), NECK, NECK[0])), 1):
        if slot is None:
            labels.fold(joint, f"extra neck joint ({len(neck)} between the spine and the head)")
        else:
            labels.label(joint, slot, f"joint {number} of {len(neck)} between the spine and the head")
