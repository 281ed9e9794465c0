"""The answers of each chapter's "Try it yourself": a committed record of what the book measured at
each exercise's setting, so that an answer's numbers are bound to a run, as a claim's are.

A chapter's ``## Try it yourself`` section lists its exercises as commands,
```` `nlcl run <chapter> -p name value ...` ````, each followed by a collapsed answer
(``:::{dropdown} Answer``). ``python -m nlcl.harness.records.exercises run [CHAPTER ...]`` runs every
exercise in the ``ci`` profile (seed 0 unless the command sets one) and writes
``results/exercises/<chapter>.json``: the chapter's source and modules hashes, the commit, and per
exercise its command, parameters, whether the run passed, and each claim's measured value and
status. ``check`` lists the records that no longer describe their chapter: a change of its code cells
(``code_sha256``, :func:`code_sha256`) or of the ``nlcl`` modules it imports (``modules_sha256``), or
exercises that differ from the record's. The ledger does not count: it decides a claim's status,
never the value a run measures, and the answers are checked on values.

A repository test reads every answer: each value it quotes for a claim, written
```` `claim-id` = value ```` (or ``: value``, ``is value``, or the value right after the id), must be the recorded measurement at the precision printed
(:func:`quoted_values`, :func:`answer_problems`).
"""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import re
import shlex
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "EXERCISE_DIR",
    "Exercise",
    "exercises",
    "quoted_values",
    "answer_problems",
    "code_sha256",
    "stale_exercises",
    "main",
]

EXERCISE_DIR = Path("results") / "exercises"
_COMMAND = re.compile(r"`(nlcl run [^`]+)`")
_MINUS = "−"
_QUOTE = re.compile(
    r"`([a-z0-9][a-z0-9.+\-]*)`(?:\s*(?:=|:|is|of|at))?(?:\s*(?:exactly|about|only))?\s+"
    r"([−-]?\d+(?:\.\d+)?(?:e[−-]?\d+)?)(?![\d.])"
)


class Exercise(dict):
    """One exercise: ``command``, ``parameters`` (name → value as typed) and ``answer`` (its text)."""


def _section(path: Path, title: str) -> str:
    from nlcl.harness.site.page import sections

    return "\n".join(md for s in sections(path) if s.title == title for md in s.markdown)


def exercises(path: str | Path) -> list[Exercise]:
    """The exercises of a chapter's ``## Try it yourself`` section, in order, with their answers
    (the text from a command to the next command)."""
    path = Path(path)
    text = _section(path, "Try it yourself")
    found = list(_COMMAND.finditer(text))
    out = []
    for i, m in enumerate(found):
        words = shlex.split(m.group(1))
        if len(words) < 3 or words[2] != path.stem:
            raise ValueError(f"{path.stem}: an exercise runs another chapter: {m.group(1)!r}")
        params: dict[str, str] = {}
        rest = words[3:]
        while rest:
            if rest[0] in ("-p", "--param") and len(rest) >= 3:
                params[rest[1]] = rest[2]
                rest = rest[3:]
            else:
                raise ValueError(
                    f"{path.stem}: an exercise is not `nlcl run {path.stem} -p NAME VALUE ...`: {m.group(1)!r}"
                )
        end = found[i + 1].start() if i + 1 < len(found) else len(text)
        out.append(Exercise(command=m.group(1), parameters=params, answer=text[m.end() : end]))
    return out


def quoted_values(answer: str) -> list[tuple[str, float, float]]:
    """The ```` `claim-id` = value ```` pairs of an answer: (id, value, half a unit of its last printed
    digit)."""
    out = []
    for cid, text in _QUOTE.findall(answer):
        text = text.replace(_MINUS, "-")
        mantissa, _, exponent = text.partition("e")
        decimals = len(mantissa.partition(".")[2])
        unit = 10.0 ** (-decimals + (int(exponent) if exponent else 0))
        out.append((cid, float(text), unit / 2))
    return out


#: An answer's count of passing claims, e.g. "15 of 16 claims pass".
_PASS_COUNT = re.compile(r"(\d+) of (\d+) claims pass")


def answer_problems(chapter: str, record: Mapping[str, Any], path: str | Path) -> list[str]:
    """Where a chapter's exercises and their answers disagree with the committed record: an exercise
    without a recorded run, a quoted value that is not the recorded measurement, or a count "k of n
    claims pass" that is not the record's."""
    by_command = {e["command"]: e for e in record.get("exercises", [])}
    problems = []
    for ex in exercises(path):
        rec = by_command.get(ex["command"])
        if rec is None:
            problems.append(f"{chapter}: `{ex['command']}` has no recorded run")
            continue
        statuses = [c.get("status") for c in rec["claims"].values()]
        for k, n in _PASS_COUNT.findall(ex["answer"]):
            if (int(k), int(n)) != (statuses.count("pass"), len(statuses)):
                problems.append(
                    f"{chapter}: `{ex['command']}`: the answer says {k} of {n} claims pass, the record has "
                    f"{statuses.count('pass')} of {len(statuses)}"
                )
        for cid, value, half_unit in quoted_values(ex["answer"]):
            claim = rec["claims"].get(cid)
            if claim is None:
                continue  # not a claim id (a parameter or a glued quantity)
            measured = claim.get("measured")
            if not isinstance(measured, (int, float)) or isinstance(measured, bool):
                continue
            if not math.isfinite(measured) or abs(measured - value) > half_unit * 1.001:
                problems.append(
                    f"{chapter}: `{ex['command']}`: the answer quotes `{cid}` = {value:g}, the record has {measured!r}"
                )
    return problems


def code_sha256(chapter: str, root: Path) -> str:
    """SHA-256 of the chapter's code cells with their tags (:func:`~nlcl.harness.records.provenance.code_text`)."""
    import hashlib

    from nlcl.harness.records import provenance

    return hashlib.sha256(provenance.code_text(root / "book" / f"{chapter}.py").encode()).hexdigest()


def _record(chapter: str, root: Path, results: list[tuple[Exercise, Any]]) -> dict[str, Any]:
    from nlcl.core import numerics
    from nlcl.harness.records import provenance, sources

    return {
        "chapter": chapter,
        "profile": "ci",
        "commit": provenance.git_commit(root),
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "chapter_sha256": provenance.chapter_sha256(chapter, root),
        "code_sha256": code_sha256(chapter, root),
        "modules_sha256": sources.modules_sha256(chapter, root),
        "numerics": numerics.environment(),
        "exercises": [
            {
                "command": ex["command"],
                "parameters": ex["parameters"],
                "ok": res.ok,
                "seconds": round(res.seconds, 1),
                "error": res.error.splitlines()[-1] if res.error else "",
                "claims": {
                    c["id"]: {"measured": c.get("measured"), "status": c.get("status")} for c in res.claims
                },
            }
            for ex, res in results
        ],
    }


def run(chapters: Sequence[str], root: Path, echo=print) -> int:
    """Run every exercise of ``chapters`` in the ci profile and write their records."""
    from tqdm.auto import tqdm

    from nlcl.harness.run import notebook

    for chapter in chapters:
        path = notebook.resolve_chapter(chapter, root)
        todo = exercises(path)
        params = notebook.chapter_parameters(path)
        results = []
        for ex in tqdm(todo, desc=f"exercises {chapter}", unit="run", file=sys.stderr):
            values = notebook.coerce_parameters(ex["parameters"], params, chapter)
            res = notebook.run_chapter(
                chapter, parameters=values, profile="ci", root=root, progress_bar=False
            )
            results.append((ex, res))
        out = root / EXERCISE_DIR / f"{chapter}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(
            json.dumps(_record(chapter, root, results), indent=1, ensure_ascii=False, default=str) + "\n"
        )
        echo(f"exercises: {chapter}: {len(results)} runs ({sum(r.ok for _, r in results)} passed) -> {out}")
    return 0


def load(root: Path) -> dict[str, dict[str, Any]]:
    """The committed exercise records: chapter → record."""
    directory = root / EXERCISE_DIR
    return (
        {p.stem: json.loads(p.read_text()) for p in sorted(directory.glob("*.json"))}
        if directory.is_dir()
        else {}
    )


def stale_exercises(root: Path) -> dict[str, str]:
    """Records that no longer describe their chapter (its code cells or the ``nlcl`` modules it
    imports changed, or its exercises did), and chapters with exercises but no record: chapter → reason."""
    from nlcl.harness.records import sources
    from nlcl.harness.run.notebook import chapters

    records = load(root)
    out = {}
    for chapter, path in chapters(root).items():
        commands = [e["command"] for e in exercises(path)]
        rec = records.get(chapter)
        if rec is None:
            if commands:
                out[chapter] = "no record of its exercises"
            continue
        recorded = [e["command"] for e in rec.get("exercises", [])]
        if rec.get("code_sha256") != code_sha256(chapter, root):
            out[chapter] = f"its code cells changed since the exercises ran (commit {rec.get('commit')})"
        elif rec.get("modules_sha256") != sources.modules_sha256(chapter, root):
            out[chapter] = (
                f"nlcl code the chapter imports changed since the exercises ran (commit {rec.get('commit')})"
            )
        elif recorded != commands:
            out[chapter] = f"its exercises changed since they ran: recorded {recorded}, now {commands}"
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m nlcl.harness.records.exercises run [CHAPTER ...] | check``."""
    from nlcl.harness.records import provenance
    from nlcl.harness.run.notebook import chapters

    parser = argparse.ArgumentParser(
        prog="python -m nlcl.harness.records.exercises", description=__doc__.split("\n")[0]
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser(
        "run", help="run the exercises (ci profile) and write results/exercises/<chapter>.json"
    )
    p_run.add_argument("chapters", nargs="*", help="default: every chapter")
    sub.add_parser("check", help="list the records that no longer describe their chapter")
    args = parser.parse_args(argv)
    root = provenance.repo_root()
    if args.command == "check":
        return provenance.print_stale(EXERCISE_DIR, stale_exercises(root))
    known = chapters(root)
    unknown = [c for c in args.chapters if c not in known]
    if unknown:
        parser.error(f"unknown chapter(s) {unknown}; chapters: {sorted(known)}")
    return run(args.chapters or sorted(known), root)


if __name__ == "__main__":
    sys.exit(main())
