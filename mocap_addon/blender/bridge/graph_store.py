"""A scene's motion graph kept in the .blend: saved, undone and reopened with the file it was made in.

The graph (its ``.npz`` bytes, as :meth:`MotionGraph.save` writes them) and where its clips are (a small
JSON record) live in the scene's hidden custom property ``_mocap_graph`` with a token that changes with
each graph stored, so a reader can tell the stored graph from one it read before (after an undo, a file
opened, File > New).
"""

from __future__ import annotations

import json
import tempfile
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import bpy

from .compat import id_property

if TYPE_CHECKING:
    from ...core.transitions import MotionGraph

STORED = "_mocap_graph"  # on the scene; the leading underscore hides it from the Custom Properties panel


def store_graph(scene: bpy.types.Scene, graph: MotionGraph, places: dict[str, Any]) -> str:
    """Keep ``graph`` and ``places`` (JSON-able: where its clips are) in ``scene``; returns the new token."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "graph.npz"
        graph.save(path)
        data = path.read_bytes()
    token = uuid.uuid4().hex
    scene[STORED] = {"token": token, "places": json.dumps(places), "graph": data}
    return token


def stored_token(scene: bpy.types.Scene) -> str | None:
    """The token of the graph kept in ``scene``, ``None`` without one."""
    stored = id_property(scene, STORED)
    return None if stored is None else str(stored.get("token", ""))


def stored_graph(scene: bpy.types.Scene) -> tuple[MotionGraph, dict[str, Any]]:
    """The graph kept in ``scene`` and where its clips are (``ValueError`` when there is none or it is damaged)."""
    from ...core.transitions import load_graph

    stored = id_property(scene, STORED)
    if stored is None:
        raise ValueError(f"scene {scene.name!r} keeps no motion graph")
    try:
        data, places = bytes(stored["graph"]), json.loads(stored["places"])
    except (KeyError, TypeError, json.JSONDecodeError) as error:
        raise ValueError(f"scene {scene.name!r}: its kept motion graph is damaged ({error})") from None
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "graph.npz"
        path.write_bytes(data)
        return load_graph(path), places


def forget_graph(scene: bpy.types.Scene) -> None:
    """Drop the graph kept in ``scene``."""
    scene.pop(STORED, None)
