"""A chapter's measured run time, for its "Expected run time" sentence, from the committed records.

A run time typed into a chapter by hand goes stale when the code gets faster or slower. The book's
whole-book benchmark records (:mod:`nlcl.bench.book`: ``results/book-<profile>-bench-<cpu|gpu>.json``)
hold every chapter's seconds in a timed ``nlcl book`` build, with the commit, the date, the machine
and the number of chapters run at a time. :func:`run_time_sentence` turns them into one sentence,
which :func:`nlcl.start` glues into every chapter as ``run-time``, so the chapter's prose says
``{glue:text}`run-time``` instead of a number.
"""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from nlcl.harness.run.spec import PROFILES

__all__ = [
    "GLUE_KEY",
    "bench_record_path",
    "format_seconds",
    "glue_run_time",
    "record_run_time",
    "run_time_sentence",
]

#: The glue key of the sentence (``{glue:text}`run-time```).
GLUE_KEY = "run-time"


def bench_record_path(profile: str, cuda: bool | None = None) -> Path:
    """``results/book-<profile>-bench-cpu.json``, or ``-gpu.json`` when CUDA is available: where the
    whole-book benchmark (:mod:`nlcl.bench.book`) writes its record, and where the book reads it."""
    if cuda is None:
        import torch

        cuda = torch.cuda.is_available()
    return Path("results") / f"book-{profile}-bench-{'gpu' if cuda else 'cpu'}.json"


def format_seconds(seconds: float) -> str:
    """``"26 s"`` below 90 s, else minutes with one decimal (``"5.6 minutes"``)."""
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds):
        raise ValueError(f"seconds={seconds!r} is not a finite number")
    if seconds < 0:
        raise ValueError(f"seconds={seconds!r} is negative")
    if seconds < 90:
        return f"{max(1, round(seconds))} s"
    return f"{seconds / 60:.1f} minutes"


def _machine(record: Mapping[str, Any]) -> str:
    machine = record.get("machine") if isinstance(record.get("machine"), Mapping) else {}
    numerics = record.get("numerics") if isinstance(record.get("numerics"), Mapping) else {}
    device = machine.get("device")
    if device and device != "cpu":
        return str(device)
    cores = machine.get("cpu_cores")
    cpu = numerics.get("cpu") or "CPU"
    # the CPU's family ("AuthenticAMD 26/2"): a virtual machine may name two generations alike; the
    # records made between 81fd688 and fb7585a have it in ``machine``, later ones in ``numerics``
    generation = numerics.get("cpu_generation") or machine.get("cpu_generation")
    family = re.fullmatch(r"\S+ (\d+)/\d+", str(generation or ""))
    if family:
        cpu = f"{cpu} (family {family.group(1)})"
    return f"a {cores}-core {cpu}" if isinstance(cores, int) and cores > 0 else f"a {cpu}"


def record_run_time(record: Mapping[str, Any], chapter: str, profile: str) -> dict[str, str] | None:
    """What one book benchmark record says of ``chapter``, or None if it holds no time for it:
    ``time`` ("5.6 minutes", with the worker processes of a parallel chapter), ``how`` ("in a
    whole-book build, 2 chapters at a time on a 2-core AMD EPYC") and ``when`` ("bdf7a4d, 2026-11-27")."""
    chapters = record.get("chapters")
    if not isinstance(chapters, Mapping):
        return None
    seconds = chapters.get(chapter)
    if isinstance(seconds, bool) or not isinstance(seconds, (int, float)) or not math.isfinite(seconds):
        return None
    jobs = re.search(r"--jobs[ =](\d+)", str(record.get("command", "")))
    at_once = (
        f"{jobs.group(1)} chapters at a time" if jobs and int(jobs.group(1)) > 1 else "one chapter at a time"
    )
    workers = record.get("workers") if isinstance(record.get("workers"), Mapping) else {}
    k = workers.get(chapter)
    on = f" on {k} worker processes" if isinstance(k, int) and k > 1 else ""
    when = ", ".join(str(v)[:n] for v, n in ((record.get("commit"), 7), (record.get("date"), 10)) if v)
    return {
        "profile": profile,
        "time": format_seconds(float(seconds)) + on,
        "how": f"in a whole-book build, {at_once} on {_machine(record)}",
        "when": when,
    }


def run_time_sentence(chapter: str, root: str | os.PathLike | None = None) -> str:
    """The measured run time of ``chapter`` in each profile, from the book benchmark records under
    ``root`` (default: the book's root), CPU records first; plain text (it is glued as text).

    ``"ci profile 25 s (3472b82, 2026-11-28), full profile 5.6 minutes (bdf7a4d, 2026-11-27), each
    measured in a whole-book build, 2 chapters at a time on a 2-core AMD EPYC."``; a profile without
    a record says so."""
    from nlcl.harness.records.provenance import repo_root

    try:
        base = Path(root) if root is not None else repo_root()
    except FileNotFoundError:
        return "no timing record (not run from the book's repository)."
    found, missing = [], []
    for profile in PROFILES:
        n = len(found)
        for kind in ("cpu", "gpu"):
            try:
                record = json.loads((base / bench_record_path(profile, cuda=kind == "gpu")).read_text())
            except (OSError, ValueError):
                continue
            entry = record_run_time(record, chapter, profile) if isinstance(record, Mapping) else None
            if entry is not None:
                found.append(entry)
        if len(found) == n:
            missing.append(profile)
    if not found:
        return "not yet timed in a whole-book build."
    shared = len({e["how"] for e in found}) == 1
    parts = [
        f"{e['profile']} profile {e['time']}"
        + (f" ({e['when']})" if shared and e["when"] else "")
        + ("" if shared else f" {e['how']}" + (f" ({e['when']})" if e["when"] else ""))
        for e in found
    ]
    each = "each measured" if len(found) > 1 else "measured"
    text = ", ".join(parts) + (f", {each} {found[0]['how']}" if shared else "")
    if missing:
        text += "; " + " and ".join(missing) + " profile not yet timed"
    return text + "."


def glue_run_time(run: Any) -> Any:
    """Glue ``run.chapter``'s :func:`run_time_sentence` as ``run-time`` when a notebook kernel runs
    it (outside one, glue would print); returns ``run``. Called by :func:`nlcl.start`."""
    from IPython.core.interactiveshell import InteractiveShell

    if InteractiveShell.initialized():
        run.glue(GLUE_KEY, run_time_sentence(run.chapter))
    return run
