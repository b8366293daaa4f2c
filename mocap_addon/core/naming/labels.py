"""The mapping as it is built: each joint's canonical joint and the rule that gave it, or why it has none."""

from __future__ import annotations

from .canonical import CANONICAL_JOINTS, canonical_ancestors
from .figure import Figure
from .presets import Preset


class Labels:
    """Canonical joints by joint index, each given once, with a rule for every joint decided."""

    def __init__(self, figure: Figure):
        self.figure = figure
        self.canonical: dict[int, str] = {}
        self.rules: dict[int, str] = {}

    def label(self, joint: int, canonical: str, rule: str) -> None:
        """Give ``joint`` the canonical joint, unless another joint has it already."""
        holder = next((j for j, c in self.canonical.items() if c == canonical and j != joint), None)
        if holder is not None:
            self.rules[joint] = f"unmapped: {canonical} is already {self.figure.names[holder]}"
            return
        self.canonical[joint] = canonical
        self.rules[joint] = rule

    def fold(self, joint: int, rule: str) -> None:
        """Record why a joint folds, unless something (its name, a label) already says."""
        if not self.figure.folded(joint):
            self.rules.setdefault(joint, f"folded: {rule}")

    def unmap(self, joint: int, rule: str) -> None:
        """Take away the joint's canonical joint, if any, saying why."""
        self.canonical.pop(joint, None)
        self.rules[joint] = rule

    def keep_consistent(self) -> None:
        """Drop any label that breaks the hierarchy rule (checked parent-first), so a mapped joint's
        canonical ancestors map to its own ancestors."""
        owner = {canonical: joint for joint, canonical in self.canonical.items()}
        for canonical in CANONICAL_JOINTS:
            joint = owner.get(canonical)
            if joint is None:
                continue
            above = set(self.figure.ancestors(joint)[1:])
            for ancestor in canonical_ancestors(canonical):
                holder = owner.get(ancestor)
                if holder is not None and holder not in above:
                    del owner[canonical]
                    self.unmap(joint, f"unmapped: {canonical} would not sit below {ancestor} "
                                      f"({self.figure.names[holder]})")
                    break

    def result(self) -> dict[str, tuple[str | None, str]]:
        """Every joint name -> (its canonical joint or ``None``, the rule)."""
        out = {}
        for joint, name in enumerate(self.figure.names):
            reading = self.figure.readings[joint]
            rule = self.rules.get(joint)
            if rule is None:
                rule = f"folded: {reading.fold} (name)" if reading.fold else "unmapped: not on the body's chains"
            out[name] = (self.canonical.get(joint), rule)
        return out


def apply_preset(labels: Labels, preset: Preset) -> None:
    """The preset's entries over the detected labels: a listed joint takes its entry (the first
    listed joint where two give the same canonical joint), and no other joint keeps it."""
    fixed: dict[int, str | None] = {}
    for joint, name in enumerate(labels.figure.names):
        listed, canonical = preset.lookup(name)
        if not listed:
            continue
        if canonical is not None and canonical in fixed.values():
            labels.unmap(joint, f"unmapped: preset {preset.name} gives {canonical} to an earlier joint too")
            continue
        fixed[joint] = canonical
    taken = {c for c in fixed.values() if c is not None}
    for joint, canonical in list(labels.canonical.items()):
        if joint not in fixed and canonical in taken:
            labels.unmap(joint, f"unmapped: preset {preset.name} gives {canonical} to another joint")
    for joint, canonical in fixed.items():
        if canonical is None:
            labels.unmap(joint, f"folded: preset {preset.name}")
        else:
            labels.canonical.pop(joint, None)
            labels.label(joint, canonical, f"preset {preset.name}")
