"""Motion-graph files (``.npz``): written whole or not at all, read with bounded memory and checked.

A graph file is a zip of ``.npy`` members plus ``meta`` (JSON).  Reading never
trusts it: every member's declared uncompressed size and ``.npy`` header (dtype
and shape) are checked against what the file's own metadata implies (the clips'
frame counts, the transitions' count ...) and against the file's size on disk
before anything is decompressed, so a small file cannot expand into gigabytes;
then the values are checked (indices in range, parameters finite and positive,
arrays that agree).  Every problem is one :class:`GraphFileError` naming the file.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
import zipfile
from collections.abc import Iterator, Mapping
from typing import IO, Any

import numpy as np

from ..errors import MocapFormatError
from ..files import require_regular_file
from ..formats.textio import MAGNITUDE_LIMIT

META_BYTES = 1 << 24  # the JSON metadata (clip names, settings)
# A member may expand to this many times the whole file's size on disk (graphs are written uncompressed).
EXPANSION = 16
SLACK = 1 << 20  # bytes any member may take whatever the file's size


class GraphFileError(MocapFormatError):
    """A graph file that is damaged, crafted or not a graph: one line, naming the file."""


def write_graph_file(path: str | os.PathLike[str], meta: Mapping[str, Any], arrays: Mapping[str, np.ndarray]) -> None:
    """Write ``meta`` and ``arrays`` as ``path`` (a temporary file beside it, renamed into place; on any
    failure nothing is left behind and the error propagates)."""
    target = os.path.abspath(os.fspath(path))
    handle, temporary = tempfile.mkstemp(prefix=".tmp-", suffix=".npz", dir=os.path.dirname(target))
    try:
        with os.fdopen(handle, "wb") as stream:
            np.savez(stream, meta=np.array(json.dumps(dict(meta))), **arrays)
        os.replace(temporary, target)
    except BaseException:
        os.unlink(temporary)
        raise


def read_graph_file(path: str | os.PathLike[str]) -> tuple[dict[str, Any], dict[str, np.ndarray]]:
    """``meta`` and every array of a graph file, each checked before it is decompressed, then together."""
    name = os.fspath(path)
    require_regular_file(name)
    budget = EXPANSION * os.path.getsize(name) + SLACK
    try:
        with zipfile.ZipFile(name) as archive:
            members = {info.filename: info for info in archive.infolist()}
            for info in members.values():
                if info.file_size > budget:
                    raise GraphFileError(f"member {info.filename!r} would expand to {info.file_size} bytes, "
                                         f"too many for a file of this size", name)
            meta = _meta(archive, members, name)
            arrays: dict[str, np.ndarray] = {}
            for member, (dtype, shape) in _members(meta, arrays, name):
                if f"{member}.npy" not in members:
                    raise GraphFileError(f"no {member!r} array: not a motion graph", name)
                arrays[member] = _array(archive, members[f"{member}.npy"], np.dtype(dtype), shape, name)
    except GraphFileError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, NotImplementedError, ValueError) as error:
        reason = (str(error).splitlines() or [type(error).__name__])[0][:200]
        raise GraphFileError(f"not a motion graph (damaged: {reason})", name) from None
    return meta, arrays


def _meta(archive: zipfile.ZipFile, members: Mapping[str, zipfile.ZipInfo], name: str) -> dict[str, Any]:
    info = members.get("meta.npy")
    if info is None:
        raise GraphFileError("no metadata: not a motion graph", name)
    if info.file_size > META_BYTES:
        raise GraphFileError(f"metadata of {info.file_size} bytes: not a motion graph", name)
    with archive.open(info) as stream:
        version = np.lib.format.read_magic(stream)
        shape, _, dtype = _header(stream, version)
        if dtype.kind != "U" or shape != ():
            raise GraphFileError("metadata is not text: not a motion graph", name)
        text = stream.read(dtype.itemsize + 1)
    if len(text) != dtype.itemsize:
        raise GraphFileError("metadata cut short", name)
    try:
        meta = json.loads(np.frombuffer(text, dtype=dtype)[0])
    except (ValueError, RecursionError) as error:
        raise GraphFileError(f"metadata is not JSON ({str(error)[:100]})", name) from None
    if not isinstance(meta, dict):
        raise GraphFileError("metadata is not a JSON object: not a motion graph", name)
    return meta


def _header(stream: IO[bytes], version: tuple[int, int]) -> tuple[tuple[int, ...], bool, np.dtype[Any]]:
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(stream)
    if version == (2, 0):
        return np.lib.format.read_array_header_2_0(stream)
    raise ValueError(f"unsupported .npy version {version}")


def _array(archive: zipfile.ZipFile, info: zipfile.ZipInfo, dtype: np.dtype[Any], shape: tuple[int | None, ...],
           name: str) -> np.ndarray:
    """One member, once its header declares ``dtype`` and ``shape`` (``None``: any length) and its size fits."""
    member = info.filename[:-4]
    with archive.open(info) as stream:
        found_shape, fortran, found_dtype = _header(stream, np.lib.format.read_magic(stream))
        if found_dtype != dtype or len(found_shape) != len(shape) or any(
                want is not None and want != got for want, got in zip(shape, found_shape)):
            raise GraphFileError(f"{member!r} is {found_dtype} {found_shape}, expected {dtype} "
                                 f"{tuple('N' if n is None else n for n in shape)}", name)
        size = math.prod(found_shape) * dtype.itemsize
        if size > info.file_size:
            raise GraphFileError(f"{member!r} declares {size} bytes in a member of {info.file_size}", name)
        data = stream.read(size + 1)
    if len(data) != size:
        raise GraphFileError(f"{member!r} holds {len(data)} bytes, its header says {size}", name)
    return np.frombuffer(data, dtype=dtype).reshape(found_shape, order="F" if fortran else "C").copy()


Expected = tuple[str, tuple[str, tuple[int | None, ...]]]


def _members(meta: dict[str, Any], arrays: dict[str, np.ndarray], name: str) -> Iterator[Expected]:
    """What a graph file holds, in reading order: each array's name, dtype and shape (``None``: any length),
    known from what was read before it (the metadata, then the clips' frame counts); ``arrays`` fills as
    they are read, and once all are, they are checked together."""
    _check_meta(meta, name)
    clips = len(meta["clip_names"])
    for member in ("clip_frames", "offsets", "source_frames"):
        yield member, ("<i8", (clips,))
    frame_counts = arrays["clip_frames"]
    if np.any(frame_counts < 0) or np.any(arrays["source_frames"] < 0):
        raise GraphFileError("negative frame counts", name)
    frames = int(frame_counts.sum()) if frame_counts.max(initial=0) < 2**40 else -1
    if frames < 0 or np.any(arrays["offsets"] != np.cumsum(frame_counts) - frame_counts):
        raise GraphFileError("clip offsets do not follow the clips' frame counts", name)
    yield "contacts", ("|b1", (frames, 2))
    yield "alive", ("|b1", (frames,))
    yield "sources", ("<i8", (None,))
    transitions = len(arrays["sources"])
    for member, dtype in (("targets", "<i8"), ("costs", "<f8"), ("probabilities", "<f8")):
        yield member, (dtype, (transitions,))
    yield "pairs", ("<i8", (None, 2))
    yield "pair_costs", ("<f8", (len(arrays["pairs"]),))
    yield "ground", ("<c16", (frames, None))
    yield "height", ("<f8", (frames, arrays["ground"].shape[1]))
    for index in range(len(meta["references"])):
        yield f"reference_{index}", ("<f8", (None, 3, 3))  # world joint rotations
    _check_arrays(arrays, frames, name)


def _check_meta(meta: dict[str, Any], name: str) -> None:
    def positive(value: Any, low_open: bool = True) -> bool:
        return (isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)
                and (value > 0 if low_open else value >= 0) and value <= MAGNITUDE_LIMIT)

    params = meta.get("params")
    names = meta.get("clip_names")
    problem = None
    if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
        problem = "clip_names must be a list of names"
    elif not positive(meta.get("fps")):
        problem = f"fps must be a positive number, not {str(meta.get('fps'))[:40]}"
    elif not isinstance(params, dict):
        problem = "params must be an object"
    elif not all(positive(params.get(key)) for key in ("sigma",)) or not all(
            positive(params.get(key), low_open=False) for key in ("nu", "min_gap")):
        problem = "params sigma, nu and min_gap must be finite (sigma positive, nu and min_gap not negative)"
    elif not positive(params.get("threshold")) or params["threshold"] > 1:
        problem = "params threshold must be in (0, 1]"
    elif params.get("contacts") not in (True, False, "given") or not all(
            isinstance(params.get(key), bool) for key in ("local_maxima", "strongly_connected")):
        problem = "params contacts, local_maxima and strongly_connected must be true or false"
    elif not isinstance(params.get("weights"), dict) or not all(
            isinstance(k, str) and positive(w, low_open=False) for k, w in params["weights"].items()):
        problem = "params weights must map joint names to finite numbers"
    elif not isinstance(meta.get("references"), list) or not all(isinstance(k, str) for k in meta["references"]):
        problem = "references must be a list of skeleton keys"
    elif "fingerprints" in meta and not (
            isinstance(meta["fingerprints"], list) and len(meta["fingerprints"]) == len(names)
            and all(isinstance(f, list) and all(isinstance(v, int | float) and math.isfinite(v) for v in f)
                    for f in meta["fingerprints"])):
        problem = "fingerprints must be one list of numbers per clip"
    if problem:
        raise GraphFileError(problem, name)


def _check_arrays(arrays: dict[str, np.ndarray], frames: int, name: str) -> None:
    pairs, sources, targets = arrays["pairs"], arrays["sources"], arrays["targets"]
    for what, indices in (("transitions", np.concatenate([sources, targets])), ("frame pairs", pairs.ravel())):
        if indices.size and (indices.min() < 0 or indices.max() >= frames):
            raise GraphFileError(f"{what} name frames outside the graph's {frames}", name)
    for member in ("costs", "pair_costs", "height", "ground"):
        if not np.isfinite(arrays[member]).all():
            raise GraphFileError(f"{member!r} holds values that are not finite", name)
    probabilities = arrays["probabilities"]
    if not (np.all(arrays["costs"] >= 0) and np.all((probabilities >= 0) & (probabilities <= 1))):
        raise GraphFileError("costs must not be negative and probabilities must be in [0, 1]", name)
    if np.any(np.diff(sources) < 0):
        raise GraphFileError("transitions are not sorted by source frame", name)
    for key, value in arrays.items():
        if key.startswith("reference_") and not np.isfinite(value).all():
            raise GraphFileError(f"{key!r} holds values that are not finite", name)
