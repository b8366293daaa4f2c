"""Blender enum items for the core's choice lists: identifiers from the core, labels and descriptions given once."""

from __future__ import annotations

from collections.abc import Mapping, Sequence


def enum_items(choices: Sequence[str], texts: Mapping[str, tuple[str, str]],
               upper: bool = False) -> list[tuple[str, str, str]]:
    """``(identifier, label, description)`` for each of the core's ``choices`` in order (identifiers
    upper-cased with ``upper``), from ``texts`` (choice -> label, description), which must name them all."""
    if set(texts) != set(choices):
        raise ValueError(f"labels for {sorted(texts)} but the core offers {list(choices)}")
    return [(choice.upper() if upper else choice, *texts[choice]) for choice in choices]
