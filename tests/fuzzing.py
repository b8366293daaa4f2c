"""Mutation fuzzing of the file readers and writers (issue 11, item 8).

A case is a seed file (a real file from ``../shared/corpus`` cut to its first
frames, the bundled sample, or a small generated file) changed by a few seeded
mutations.  Cases run in batches in child processes with CPU-time, memory and
per-case time limits, and each must hold:

- reading it gives a clip, or raises ``MocapFormatError`` with a line number and a short message;
- a clip read is written in every format, or refused with ``MocapWriteError``,
  and what was written reads back with the same frames and joints (and, in its
  own format, the same poses).

    python -m tests.fuzzing --cases 5000 [--seed N] [--jobs 2]   a campaign, failures listed
    python -m tests.fuzzing --replay NAME:CASE [--save FILE]      one case again, in this process
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO.parent / "shared" / "corpus"
SEED_FRAMES = 12  # real files are cut to this many frames so a case stays fast
CASE_SECONDS = 20  # wall-clock limit of one case (the machine may be shared)
BATCH_CPU_SECONDS = 300
BATCH_MEMORY = 1 << 30
MESSAGE_LIMIT = 300  # characters: an error must quote hostile tokens briefly
MUTATION_GROWTH = 4 << 20  # bytes one mutation may add (a file of any size is read whole)

HOSTILE_NUMBERS = [b"1e400", b"-1e400", b"9" * 400, b"4.9e-324", b"1e-400", b"1.8e303", b"-1.8e308", b"nan", b"inf",
                   b"-inf", b"0", b"-0", b"1e15", b"\xc2\xb2", b"\xd9\xa3", b"9" * 5000, b"1_0", b"0x10", b".", b"-",
                   b"1e", b"+.5", b"00000000000000000001", b"99999999999", b"-1", b"1,5",
                   # issue 26: finite but past the readers' magnitude limit (1e9), and just inside it
                   b"1e308", b"-1e308", b"1e10", b"1000000000.5", b"999999999", b"1e-12"]
SNIPPETS = [b"\r", b"\n", b"\r\n", b"\t", b"\xef\xbb\xbf", b"\x00", b"\xff\xfe", b"{", b"}", b"[", b"]", b"#", b":",
            b"(", b")", b"[Header]\n", b"[EndOfFile]\n", b":DEGREES\n", b":RADIANS\n", b"End Site\n", b"JOINT x\n",
            b"ROOT y\n", b"MOTION\n", b"begin\n", b"end\n", b"root\n", b"GLOBAL", b" \xe2\x80\x83 ", b"\xc2\xa0",
            b"\x0b", b"\x0c", b"\x1c", b"%", b"%s", b"{}", b"\\", b"'", b'"']
COUNT_FIELDS = re.compile(rb"(Frames:|CHANNELS|NumFrames|NumSegments|DataFrameRate|Frame Time:)([ \t]*)([^\s]+)",
                          re.IGNORECASE)
NUMBER = re.compile(rb"-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?")
TOKEN = re.compile(rb"[^\s]+")


@dataclass
class Seed:
    """A file to mutate: its name, extension, bytes, and for AMC the ASF it needs."""
    name: str
    extension: str
    data: bytes
    skeleton: bytes | None = None


# --- seeds --------------------------------------------------------------------------------------------------


def _cut_bvh(data: bytes, frames: int) -> bytes:
    match = re.search(rb"(?im)^[ \t]*Frames:[ \t]*\d+[ \t]*\r?\n[ \t]*Frame Time:[^\n]*\n", data)
    if match is None:
        return data[:8192]
    rows = data[match.end():].split(b"\n")[:frames]
    head = data[:match.end()]
    head = re.sub(rb"(?i)(Frames:[ \t]*)\d+", b"\\g<1>" + str(len(rows)).encode(), head, count=1)
    return head + b"\n".join(rows) + b"\n"


def _cut_htr(data: bytes, frames: int) -> bytes:
    out, kept, in_block = [], 0, False
    for line in data.split(b"\n"):
        name = re.match(rb"^\s*\[([^\]]*)\]", line)
        if name:
            in_block = name.group(1).strip().lower() not in (b"header", b"segmentnames&hierarchy", b"baseposition")
            kept = 0
        elif in_block and line.strip() and not line.strip().startswith(b"#"):
            kept += 1
            if kept > frames:
                continue
        out.append(line)
    return b"\n".join(out)


def _cut_amc(data: bytes, frames: int) -> bytes:
    out, seen = [], 0
    for line in data.split(b"\n"):
        if re.fullmatch(rb"\s*\d+\s*", line):
            seen += 1
            if seen > frames:
                break
        out.append(line)
    return b"\n".join(out) + b"\n"


def _generated_seeds() -> list[Seed]:
    """Small files from this project's own writers: a branching skeleton with every channel kind."""
    import numpy as np

    from mocap_addon.core import Clip, Skeleton
    from mocap_addon.core.formats.acclaim import acclaim_form, format_amc, format_asf
    from mocap_addon.core.formats.bvh import format_bvh
    from mocap_addon.core.formats.htr import format_htr

    rng = np.random.default_rng(11)
    layouts = [("tx", "ty", "tz", "rz", "rx", "ry"), ("rz", "rx", "ry"), ("rx", "rz"), ("ry",), ("rz", "ry", "rx")]
    skeleton = Skeleton(["Hips", "Spine", "Left Arm", "Right_Leg", "Head"], [-1, 0, 1, 0, 1],
                        rng.uniform(-10, 10, (5, 3)), layouts,
                        [np.zeros((0, 3)), np.zeros((0, 3)), [[0, 5, 0]], [[0, -5, 0]], [[0, 3, 0]]])
    clip = Clip(skeleton, rng.uniform(-90, 90, (4, sum(len(c) for c in layouts))), 1 / 30, start_frame=1,
                unit_in_metres=0.01)
    plan = acclaim_form(clip)
    return [Seed("generated.bvh", ".bvh", format_bvh(clip).encode()),
            Seed("generated.htr", ".htr", format_htr(clip).encode()),
            Seed("generated.amc", ".amc", format_amc(plan, "case.asf").encode(), format_asf(plan, "case").encode()),
            Seed("generated.asf", ".asf", format_asf(plan, "case").encode())]


def seeds() -> list[Seed]:
    """Every seed: generated files, the bundled samples and, when present, the corpus (cut short)."""
    from mocap_addon.core.formats.acclaim import find_skeleton

    found = _generated_seeds()
    for sample in sorted((REPO / "samples").glob("*.bvh")):
        found.append(Seed(sample.name, ".bvh", _cut_bvh(sample.read_bytes(), SEED_FRAMES)))
    if CORPUS.is_dir():
        for path in sorted((CORPUS / "bvh").glob("*.bvh")):
            found.append(Seed(path.name, ".bvh", _cut_bvh(path.read_bytes(), SEED_FRAMES)))
        for path in sorted((CORPUS / "htr").glob("*.[hH][tT][rR]")):
            found.append(Seed(path.name, ".htr", _cut_htr(path.read_bytes(), SEED_FRAMES)))
        acclaim = CORPUS / "asf_amc"
        for path in sorted(acclaim.glob("*.[aA][mM][cC]")):
            skeleton = Path(find_skeleton(path)).read_bytes()
            found.append(Seed(path.name, ".amc", _cut_amc(path.read_bytes(), SEED_FRAMES), skeleton))
        for path in sorted(acclaim.glob("*.[aA][sS][fF]")):
            found.append(Seed(path.name, ".asf", path.read_bytes()))
    return found


# --- mutations ----------------------------------------------------------------------------------------------


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def _pick(rng: random.Random, pattern: re.Pattern[bytes], data: bytes) -> re.Match[bytes] | None:
    matches = list(pattern.finditer(data, 0, min(len(data), 1 << 20)))
    return rng.choice(matches) if matches else None


def _replace_match(data: bytes, match: re.Match[bytes] | None, group: int, new: bytes) -> bytes:
    if match is None:
        return data
    return data[:match.start(group)] + new + data[match.end(group):]


def mutate(data: bytes, rng: random.Random) -> bytes:
    """One mutation chosen by ``rng``."""
    kind = rng.randrange(14)
    lines = _lines(data)
    spot = rng.randrange(len(data) + 1)
    if kind == 0:
        return _replace_match(data, _pick(rng, NUMBER, data), 0, rng.choice(HOSTILE_NUMBERS))
    if kind == 1:
        match = _pick(rng, COUNT_FIELDS, data)
        new = rng.choice([b"0", b"1", b"-1", b"1e400", b"4.9e-324", b"9" * 5000, b"\xc2\xb3", b"2.5", b""]
                         + [str(rng.randrange(1000)).encode()])
        return _replace_match(data, match, 3, new)
    if kind == 2:
        target, source = _pick(rng, TOKEN, data), _pick(rng, TOKEN, data)
        return _replace_match(data, target, 0, source.group() if source else b"")
    if kind == 3 and lines:
        del lines[rng.randrange(len(lines))]
        return b"\n".join(lines)
    if kind == 4 and lines:
        index = rng.randrange(len(lines))
        copies = min(rng.choice([1, 2, 50, 1000]), 1 + MUTATION_GROWTH // (len(lines[index]) + 1))
        lines[index:index] = [lines[index]] * copies
        return b"\n".join(lines)
    if kind == 5 and len(lines) > 1:
        a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
        lines[a], lines[b] = lines[b], lines[a]
        return b"\n".join(lines)
    if kind == 6:
        return data[:spot]
    if kind == 7 and data:
        index = rng.randrange(len(data))
        return data[:index] + bytes([rng.randrange(256)]) + data[index + 1:]
    if kind == 8:
        return data[:spot] + rng.choice(SNIPPETS) + data[spot:]
    if kind == 9:
        return data.replace(b"\r\n", b"\n").replace(b"\n", rng.choice([b"\r", b"\r\n", b"\n\n"]))
    if kind == 10:
        line = rng.choice([b"1.5 " * 200_000, b"7" * 1_000_000, b"x" * 300_000, b"-" * 10_000])
        return data[:spot] + line + data[spot:]
    if kind == 11:
        return data[:spot] + b"\n" * rng.choice([1, 3, 1000]) + data[spot:]
    if kind == 12 and len(lines) > 2:
        a = rng.randrange(len(lines))
        b = min(len(lines), a + rng.randrange(1, 20))
        return b"\n".join(lines[:a] + lines[b:])
    if kind == 13:
        return data.upper() if rng.random() < 0.5 else data.lower()
    return data[:spot] + rng.choice(SNIPPETS) + data[spot:]


def case_files(seed: Seed, case: int | None) -> tuple[bytes, bytes | None]:
    """The mutated file (and ASF, for AMC seeds) of case number ``case``; the seed itself for ``None``."""
    data, skeleton = seed.data, seed.skeleton
    if case is None:
        return data, skeleton
    rng = random.Random(case)
    for _ in range(rng.choice([1, 1, 1, 2, 3])):
        if skeleton is not None and rng.random() < 0.25:
            skeleton = mutate(skeleton, rng)
        else:
            data = mutate(data, rng)
    return data, skeleton


# --- checking one case (in the child process) ---------------------------------------------------------------


def _timeout(signum: int, frame: object) -> None:
    raise TimeoutError(f"took more than {CASE_SECONDS} s")


def check_case(seed: Seed, case: int | None, folder: Path) -> str | None:
    """``None`` if the case holds, else what went wrong (one line)."""
    import numpy as np

    from mocap_addon.core import MocapFormatError, MocapWriteError, load, save, world_positions

    data, skeleton = case_files(seed, case)
    for stale in folder.iterdir():
        stale.unlink()
    path = folder / f"case{seed.extension}"
    path.write_bytes(data)
    if skeleton is not None:
        (folder / "case.asf").write_bytes(skeleton)
    try:
        clip = load(path)
    except MocapFormatError as error:
        # Only a missing skeleton file (text that reads as AMC, with no .asf beside it) is no place in the file.
        if error.line is None and not error.reason.startswith("no skeleton (.asf) found"):
            return f"error without a line: {error}"
        if len(str(error)) > MESSAGE_LIMIT:
            return f"message of {len(str(error))} characters: {str(error)[:80]}..."
        return None
    except Exception as error:  # any other exception is the finding
        return f"load raised {type(error).__name__}: {str(error)[:200]} at {_where(error)}"
    for extension in (".bvh", ".htr", ".amc"):
        out = folder / f"written{extension}"
        try:
            save(clip, out)
        except MocapWriteError:
            continue
        except Exception as error:
            return f"writing {extension} raised {type(error).__name__}: {str(error)[:200]} at {_where(error)}"
        try:
            again = load(out)
        except Exception as error:
            return f"reading our own {extension} raised {type(error).__name__}: {str(error)[:200]}"
        if again.frame_count != clip.frame_count:
            return f"{extension} round trip: {clip.frame_count} frames became {again.frame_count}"
        joints, back = clip.skeleton.joint_count, again.skeleton.joint_count
        if back < joints or (extension != ".amc" and back != joints):
            return f"{extension} round trip: {joints} joints became {back}"
        own = extension == "." + clip.metadata.get("format", "")
        if own and clip.frame_count and again.skeleton.names == clip.skeleton.names:
            with np.errstate(all="ignore"):
                before, after = world_positions(clip), world_positions(again)
            size = float(np.ptp(before.reshape(-1, 3), axis=0).max()) if before.size else 0.0
            if np.isfinite(before).all() and size < 1e9 and np.abs(after - before).max() > 1e-4 * max(size, 1.0):
                return f"{extension} round trip moved joints by {np.abs(after - before).max():.3g} (extent {size:.3g})"
    return None


def _where(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)
    inner = [f for f in frames if "mocap_addon" in f.filename] or frames
    last = inner[-1]
    return f"{os.path.relpath(last.filename, REPO)}:{last.lineno}"


def _child(request: dict) -> dict:
    """Run a batch of cases under resource limits; results by case."""
    resource.setrlimit(resource.RLIMIT_AS, (BATCH_MEMORY, BATCH_MEMORY))
    resource.setrlimit(resource.RLIMIT_CPU, (BATCH_CPU_SECONDS, BATCH_CPU_SECONDS))
    signal.signal(signal.SIGALRM, _timeout)
    known = {seed.name: seed for seed in seeds()}
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for name, case in request["cases"]:
            seed = known[name]  # an unknown seed ends the child: the request itself is wrong
            signal.alarm(CASE_SECONDS)
            try:
                results[f"{name}:{case}"] = check_case(seed, case, Path(folder))
            except (TimeoutError, MemoryError, RecursionError) as error:
                results[f"{name}:{case}"] = f"{type(error).__name__}: {error}"
            except Exception as error:  # a fault in the checks themselves: report it, go on
                results[f"{name}:{case}"] = f"the check raised {type(error).__name__}: {error} at {_where(error)}"
            finally:
                signal.alarm(0)
    return results


# --- running batches (in the parent) ------------------------------------------------------------------------


def plan(count: int, seed: int) -> list[tuple[str, int]]:
    """``count`` cases spread over every seed file, numbered from ``seed``."""
    rng = random.Random(seed)
    names = [s.name for s in seeds()]
    return [(names[n % len(names)], rng.getrandbits(32)) for n in range(count)]


def run_batch(cases: list[tuple[str, int]]) -> dict[str, str | None]:
    """Results of a batch run in a fresh child; a child that dies fails every case it held."""
    process = subprocess.run([sys.executable, "-m", "tests.fuzzing", "--child"], input=json.dumps({"cases": cases}),
                             capture_output=True, text=True, cwd=REPO, check=False,
                             env={**os.environ, "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
    if process.returncode == 0:
        return json.loads(process.stdout)  # type: ignore[no-any-return]
    reason = f"child process ended with {process.returncode}: {process.stderr.strip()[-300:]}"
    return {f"{name}:{case}": reason for name, case in cases}


def run(cases: list[tuple[str, int]], jobs: int = 2, batch: int = 25) -> dict[str, str | None]:
    batches = [cases[n:n + batch] for n in range(0, len(cases), batch)]
    results: dict[str, str | None] = {}
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        for part in pool.map(run_batch, batches):
            results.update(part)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.fuzzing", description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--replay", metavar="NAME:CASE")
    parser.add_argument("--save", metavar="FILE", help="with --replay: write the mutated file there")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(_child(json.loads(sys.stdin.read()))))
        return 0
    if args.replay:
        name, case = args.replay.rsplit(":", 1)
        seed = next(s for s in seeds() if s.name == name)
        if args.save:
            Path(args.save).write_bytes(case_files(seed, int(case))[0])
        with tempfile.TemporaryDirectory() as folder:
            print(check_case(seed, int(case), Path(folder)) or "holds")
        return 0
    started = time.perf_counter()
    results = run(plan(args.cases, args.seed), args.jobs)
    failures = {key: why for key, why in results.items() if why}
    for key, why in sorted(failures.items()):
        print(f"{key}\t{why}")
    print(f"{len(results)} cases, {len(failures)} failed, {len(seeds())} seed files, "
          f"{time.perf_counter() - started:.0f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
