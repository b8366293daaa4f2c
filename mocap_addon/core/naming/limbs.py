"""The limbs labelled, once their sides are known: each arm and leg chain in order, the fingers, the toes.

A limb chain from its fork to its hand or foot takes clavicle, upper arm, lower
arm (upper leg, lower leg) in order (:func:`.chains.label_chain`), so
``LeftShoulder`` is the clavicle when ``LeftArm`` follows it and the upper arm
when ``LeftElbow`` does.
"""

from __future__ import annotations

from .canonical import ARM, LEG
from .chains import label_chain
from .figure import Figure
from .labels import Labels
from .landmarks import Limb, toes_of
from .names import FINGERS, finger_roles


def label_limbs(figure: Figure, labels: Labels, limbs: list[Limb]) -> None:
    """Label every limb with a side; a limb with none stays unmapped, saying so."""
    for limb in limbs:
        if limb.side is None:
            for joint in limb.chain:
                labels.rules.setdefault(joint, f"unmapped: {limb.kind} with no side evidence (name or rest pose)")
        else:
            _label_limb(figure, labels, limb, limb.side)


def _label_limb(figure: Figure, labels: Labels, limb: Limb, side: str) -> None:
    arm = limb.kind == "arm"
    parts = ARM if arm else LEG
    where = f"{'left' if side == 'l' else 'right'} {limb.kind}; {limb.side_rule}"
    labels.label(limb.anchor, f"{parts[3] if arm else parts[2]}_{side}", f"end of the {where}")
    chain = [j for j in limb.chain[:-1] if not figure.folded(j)]
    for joint, part in zip(chain, label_chain([figure.roles(j) for j in chain], parts[:3] if arm else parts[:2])):
        if part is None:
            labels.fold(joint, f"extra joint in the {where}")
        else:
            how = "name" if part in figure.roles(joint) else "chain position"
            labels.label(joint, f"{part}_{side}", f"{how} in the {where}")
    if arm:
        _label_fingers(figure, labels, limb.anchor, side)
        for joint in figure.below(limb.anchor):
            labels.fold(joint, "below the hand, not a finger")
    else:
        toes = toes_of(figure, limb.anchor)
        if toes is not None:
            labels.label(toes, f"toes_{side}", ("named toes" if "toes" in figure.roles(toes) else "the foot's child")
                         + f" below the {where}")
        for joint in figure.below(limb.anchor):
            labels.fold(joint, "below the foot")


def _label_fingers(figure: Figure, labels: Labels, hand: int, side: str) -> None:
    """Each finger named below the hand: its first three joints from the hand (thumb's metacarpal included)."""
    below = [j for j in figure.below(hand) if not figure.folded(j)]
    roles = dict(zip(below, finger_roles([figure.readings[j] for j in below])))
    for finger in FINGERS:
        named = [j for j in below if finger in roles[j]]
        top = sorted((j for j in named if figure.parents[j] not in named), key=lambda j: (figure.depth[j], j))
        if not top:
            continue
        chain = [top[0]]
        while True:
            kids = [c for c in figure.children[chain[-1]] if c in named]
            if not kids:
                break
            chain.append(kids[0])
        if finger != "thumb":
            for joint in [j for j in chain if figure.readings[j].metacarpal]:
                chain.remove(joint)
                labels.fold(joint, "metacarpal (inside the palm)")
        for number, joint in enumerate(chain, 1):
            if number <= 3:
                labels.label(joint, f"{finger}_{number:02d}_{side}",
                             f"{finger} joint {number} from the hand (name); side of the hand")
            else:
                labels.fold(joint, f"{finger} joint {number}: past the third")
