"""The skeleton as the mapper sees it: what each joint's name says, the tree, and the rest pose."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..model import Skeleton
from ..transforms import rest_positions
from .names import NameReading
from .presets import Preset, read_joint


@dataclass
class Figure:
    """Joints by index: their names read (a preset's entries applied), parents and children,
    depth below the root, subtree size (the joint included) and rest positions."""

    names: list[str]
    readings: list[NameReading]
    parents: list[int]
    children: list[list[int]]
    depth: list[int]
    size: list[int]
    positions: np.ndarray  # (J, 3) rest positions; zeros where the rest pose cannot be computed
    end_sites: list[np.ndarray]

    @classmethod
    def read(cls, skeleton: Skeleton, preset: Preset | None) -> Figure:
        names, parents = list(skeleton.names), list(skeleton.parents)
        try:
            positions = rest_positions(skeleton)
        except (ValueError, FloatingPointError):
            positions = np.zeros((len(names), 3))
        depth = [0] * len(names)
        for joint, parent in enumerate(parents):
            depth[joint] = 0 if parent < 0 else depth[parent] + 1
        size = [1] * len(names)
        for joint in range(len(names) - 1, -1, -1):
            if parents[joint] >= 0:
                size[parents[joint]] += size[joint]
        return cls(names, [read_joint(name, preset) for name in names], parents, skeleton.child_lists(), depth, size,
                   np.nan_to_num(positions, nan=0.0, posinf=0.0, neginf=0.0), skeleton.end_sites)

    # ----- what the names say

    def roles(self, joint: int) -> tuple[str, ...]:
        return self.readings[joint].roles

    def folded(self, joint: int) -> bool:
        """The joint's name says it takes no canonical joint (a twist bone, an end bone, ...)."""
        return self.readings[joint].fold is not None

    def central(self, joint: int, role: str) -> bool:
        """The joint's name is the trunk part ``role`` with no side."""
        reading = self.readings[joint]
        return reading.side is None and reading.fold is None and role in reading.roles

    def may_be(self, joint: int, role: str) -> bool:
        """Nothing in the joint's name says it is something other than ``role``."""
        return not self.roles(joint) or role in self.roles(joint)

    # ----- the tree

    def ancestors(self, joint: int) -> list[int]:
        """``joint`` and the joints above it, nearest first."""
        out = []
        while joint >= 0:
            out.append(joint)
            joint = self.parents[joint]
        return out

    def is_ancestor(self, upper: int, lower: int) -> bool:
        """``upper`` is ``lower`` or above it."""
        return upper in self.ancestors(lower)

    def common_ancestor(self, joints: Iterable[int]) -> int | None:
        common: list[int] | None = None
        for joint in joints:
            line = self.ancestors(joint)[::-1]
            if common is None:
                common = line
            else:
                length = 0
                while length < min(len(common), len(line)) and common[length] == line[length]:
                    length += 1
                common = common[:length]
        return common[-1] if common else None

    def path(self, upper: int, lower: int) -> list[int]:
        """Joints below ``upper`` down to ``lower`` (``lower`` included)."""
        line = self.ancestors(lower)
        return line[: line.index(upper)][::-1]

    def below(self, joint: int) -> list[int]:
        """Every joint under ``joint``."""
        out, stack = [], list(self.children[joint])
        while stack:
            node = stack.pop()
            out.append(node)
            stack += self.children[node]
        return out

    def chain_depth(self, joint: int) -> int:
        """Joints on the longest way down from ``joint`` (itself included)."""
        best = 0
        stack = [(joint, 1)]
        while stack:
            node, depth = stack.pop()
            best = max(best, depth)
            stack += [(c, depth + 1) for c in self.children[node]]
        return best

    def line_down(self, joint: int) -> list[int]:
        """``joint`` and the joints below it while each has exactly one child not folded away."""
        line = [joint]
        while True:
            kids = [c for c in self.children[line[-1]] if not self.folded(c)]
            if len(kids) != 1:
                return line
            line.append(kids[0])
