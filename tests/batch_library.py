"""A motion library made from the corpus for the batch's tests and benchmark: renamed copies of every
real take in nested folders (ASF/AMC takes beside their skeletons, named as CMU and Vicon name them)
and a few broken files, each with the line its reader stops at."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from tests.conftest import CORPUS

BIG = 1_000_000  # bytes: takes this large are copied less often, to keep a library quick to convert


@dataclass
class Library:
    root: Path
    takes: list[Path] = field(default_factory=list)  # good takes (an .amc: its .asf beside)
    broken: list[Path] = field(default_factory=list)  # takes that must fail with a line
    origin: dict[Path, Path] = field(default_factory=dict)  # take -> the corpus file it copies


def corpus_takes() -> list[tuple[Path, Path | None]]:
    """Every good take of the corpus with its skeleton (``None`` for BVH and HTR), smallest first."""
    takes: list[tuple[Path, Path | None]] = [
        (p, None) for p in sorted((CORPUS / "bvh").glob("*.bvh")) if "JSON_not_bvh" not in p.name]
    takes += [(p, None) for p in sorted((CORPUS / "htr").iterdir())]
    acclaim = CORPUS / "asf_amc"
    takes += [(acclaim / "fm_01_01.amc", acclaim / "fm_01.asf"), (acclaim / "fm_11_01.amc", acclaim / "fm_11.asf"),
              (acclaim / "vicon_male.walk-speed 4.AMC", acclaim / "vicon_male.ASF")]
    return sorted(takes, key=lambda take: take[0].stat().st_size)


def build_library(root: Path, count: int = 300, broken: bool = True) -> Library:
    """About ``count`` good takes under ``root`` in three levels of folders, plus the broken ones."""
    library = Library(root)
    takes = corpus_takes()
    rounds = 0
    while len(library.takes) < count:
        for number, (source, skeleton) in enumerate(takes):
            if len(library.takes) >= count:
                break
            if source.stat().st_size >= BIG and rounds % 4:
                continue  # the big ones every fourth round
            folder = root / f"studio_{rounds % 3}" / f"session_{rounds:02d}" / source.parent.name
            folder.mkdir(parents=True, exist_ok=True)
            copy = _copy(source, skeleton, folder, rounds, number)
            library.takes.append(copy)
            library.origin[copy] = source
        rounds += 1
    if broken:
        library.broken = _broken_files(root / "broken" / "nested", takes)
    return library


# Humanoid captures of the corpus a CMU-shaped library is made of (each with its skeleton where it has one):
# CMU's own takes in both formats, a Vicon export of the CMU skeleton, and BVH from other studios.
CMU_SHAPED = [("asf_amc/fm_01_01.amc", "asf_amc/fm_01.asf"), ("asf_amc/fm_11_01.amc", "asf_amc/fm_11.asf"),
              ("asf_amc/vicon_male.walk-speed 4.AMC", "asf_amc/vicon_male.ASF"), ("bvh/fm_cmu_01_01.bvh", None),
              ("bvh/ganim_Xia_normal.bvh", None), ("bvh/bandai_dataset-1_walk_normal_001.bvh", None),
              ("bvh/bandai_dataset-2_walk_elderly_004.bvh", None),
              ("bvh/bandai_dataset-1_dance-short_normal_001.bvh", None),
              ("bvh/ganim_Malcolm_Gangnam-Style.bvh", None), ("bvh/ganim_Joe_traj-example.bvh", None)]


def cmu_shaped_library(root: Path, count: int = 2500, subjects: int = 100) -> Library:
    """``count`` takes in ``subjects`` folders named as CMU's (``subjects/07/07_03.amc`` beside
    ``07.asf``, or ``07_03.bvh``), each subject copies of one humanoid take of the corpus (``CMU_SHAPED``
    in turn, as a subject of CMU's is one performer); 2,500 takes hold 2.7 million frames, about as
    many as CMU's 2,500 takes."""
    library = Library(root)
    for number in range(count):
        subject, take = number % subjects + 1, number // subjects + 1
        source, skeleton = CMU_SHAPED[(subject - 1) % len(CMU_SHAPED)]
        folder = root / "subjects" / f"{subject:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        copy = folder / f"{subject:02d}_{take:02d}{'.bvh' if skeleton is None else '.amc'}"
        if skeleton is not None and take == 1:
            shutil.copyfile(CORPUS / skeleton, folder / f"{subject:02d}.asf")
        shutil.copyfile(CORPUS / source, copy)
        library.takes.append(copy)
        library.origin[copy] = CORPUS / source
    return library


def _copy(source: Path, skeleton: Path | None, folder: Path, round_: int, number: int) -> Path:
    """A renamed copy of a take (an .amc with its .asf beside, named so its reader finds it)."""
    if skeleton is None:
        copy = folder / f"take{number:02d}_r{round_:02d}_{source.name.replace(' ', '_')}"
        shutil.copyfile(source, copy)
        return copy
    if "." in source.stem:  # Vicon: 'male.ASF' beside 'male.walk-speed 4.AMC' (the stem up to its first '.')
        stem = f"performer{number:02d}"
        shutil.copyfile(skeleton, folder / f"{stem}.ASF")
        copy = folder / f"{stem}.walk-speed {round_}.AMC"
    else:  # CMU: '07.asf' beside '07_03.amc' (the stem up to its last '_')
        stem = f"{number:02d}"
        shutil.copyfile(skeleton, folder / f"{stem}.asf")
        copy = folder / f"{stem}_{round_:02d}.amc"
    shutil.copyfile(source, copy)
    return copy


def _broken_files(folder: Path, takes: list[tuple[Path, Path | None]]) -> list[Path]:
    """Takes whose reader stops at a line: a stray token in a BVH frame, an HTR frame, an AMC bone
    line and an ASF length, a BVH cut short in its hierarchy, and JSON named .bvh."""
    folder.mkdir(parents=True, exist_ok=True)
    by_name = {source.name: (source, skeleton) for source, skeleton in takes}
    broken = []

    def spoiled(text: bytes, marker: bytes, after: int) -> bytes:
        """``text`` with the first number of the line ``after`` lines below ``marker`` made into '1.2.3'."""
        lines = text.split(b"\n")
        at = next(i for i, line in enumerate(lines) if line.startswith(marker)) + after
        words = lines[at].split()
        spot = next(i for i, w in enumerate(words) if w[:1].isdigit() or w[:1] == b"-")
        words[spot] = b"1.2.3"
        lines[at] = b" ".join(words)
        return b"\n".join(lines)

    bvh = (CORPUS / "bvh" / "ganim_Xia_normal.bvh").read_bytes()
    (folder / "bad_frame.bvh").write_bytes(spoiled(bvh, b"Frame Time", 40))
    (folder / "cut_short.bvh").write_bytes(b"HIERARCHY\nROOT hips\n{\n\tOFFSET 0 0 0\n")
    shutil.copyfile(CORPUS / "bvh" / "perfume_resource_a_JSON_not_bvh.bvh", folder / "json_named.bvh")
    htr = (CORPUS / "htr" / "gpr450_xbot_walk_m_mixamo.com.htr").read_bytes()
    (folder / "bad_row.htr").write_bytes(spoiled(htr, b"[Hips]", 5))
    amc, asf = by_name["fm_11_01.amc"]
    assert asf is not None
    (folder / "31.asf").write_bytes(asf.read_bytes())
    (folder / "31_01.amc").write_bytes(spoiled(amc.read_bytes(), b"lowerback", 7 * 29))
    (folder / "32.asf").write_bytes(spoiled(asf.read_bytes(), b"     length", 0))
    shutil.copyfile(amc, folder / "32_01.amc")
    broken += [folder / n for n in ("bad_frame.bvh", "cut_short.bvh", "json_named.bvh", "bad_row.htr",
                                    "31_01.amc", "32_01.amc")]
    return broken
