"""Held-out verdicts: the verdicts of record come from base seeds nobody developed a chapter at.

Base seeds 0–4 are the **development set**: chapters were written, and claims revised, while their
verdicts at those seeds were visible (``results/seed-sweeps/``), so "no required claim fails at
seeds 0–4" is true by construction. The **held-out sets** are the evidence, like a test set:

* a set's seeds are drawn when the held-out run starts (``python -m nlcl.harness.records.held_out
  run``), at random from :data:`DRAW_RANGE`, excluding the development seeds and every seed of an
  earlier held-out set (``results/held-out/ledger.json``), so no document of the project names them
  before they have been run; a set has :data:`N_SEEDS` seeds by default and never fewer than
  :data:`MIN_SEEDS`;
* the run executes every chapter's ``ci`` profile at each of them (``nlcl sweep``: one run folder
  per point, on Dask) from a clean tree, writes ``results/held-out/record.json`` (the latest set of
  each chapter: source hashes, one row per seed and claim, errors), **appends** each chapter's set
  to ``results/held-out/sets/<chapter>.json`` (every set ever run, never rewritten) and the seeds to
  the ledger;
* a row holds the claim's status and measured value, where the value came from (``computed``) and,
  for a claim whose explanation tests diagnostics, their values at that seed (``diagnostics``), so
  a held-out "not reproduced" can be audited from the record.

**Accumulation** (:func:`accumulate`): a claim's held-out verdict is its pass count over *every*
held-out seed at which its computation was the one of today, the rows of all sets of its chapter
whose ``chapter_sha256`` and ``modules_sha256`` equal today's (:func:`current_hashes`), with a
95% Clopper–Pearson interval of the pass rate (:func:`interval`). A set made at other code is kept
and shown, never counted. **The decision rule** (:func:`decide`, declared in CONTRIBUTING on
:data:`RULE_DATE`, before the first record it decides): *reproduced* when the interval's lower bound
is ≥ :data:`REPRODUCED_LOWER`; *underpowered* when it passes at every seed but the bound is lower
(too few seeds: :func:`seeds_to_decide` gives how many it needs); *fragile* when it passes at some
seeds and not at others, with the bound below; *not reproduced* when it passes at no seed and its
not-reproduced explanation held at every one; *fails* when it passes at no seed otherwise.

Verdicts that cannot change with the seed are **not held-out evidence** and are labelled so: a value
read from a committed artifact (the row's ``computed`` is not ``"this run"``: ``artifact``), and a
claim whose ledger declares ``seeded: false`` (nothing random in its computation: ``unseeded``;
:func:`declared_unseeded`, checked against the rows by :func:`unseeded_problems`).

``replay`` re-runs each chapter of the record at its own held-out seeds on this machine and
compares every row with the record (:func:`compare_rows`): whether the verdicts of record hold
here. It draws nothing and writes no record; seeds already run are not consumed again.
``archive`` copies into ``sets/`` every chapter set found in the git history of ``record.json``
that the archive lacks (the sets run before the archive existed).

**Paper scale at held-out seeds** (``run --profile full``): the same run with every chapter's
``full`` profile (the papers' sizes; tian-tokens retrains its grid at the base seed and the two
after it, so at held-out seeds too), into ``results/held-out-full/`` (:data:`HELD_OUT_FULL_DIR`:
``record.json``, ``ledger.json``, ``sets/``), :data:`N_SEEDS_FULL` seeds by default and never fewer
than :data:`MIN_SEEDS_FULL`. Its seeds are drawn excluding the development set and every seed of
*both* ledgers (:func:`all_ledgers`), so no base seed is run at two profiles; its record, sets and
rows say ``profile: full``, and ``check``, ``replay`` and ``archive`` take ``--profile full`` too
(replay sweeps at the record's profile). Its sets are accumulated exactly as the ``ci`` ones (every
set at today's ``chapter_sha256`` and ``modules_sha256``, the same interval;
:func:`nlcl.harness.records.paper_scale.held_out_counts`), but the result is shown as a **pass
count**, "k/n held-out seeds" with the statuses of the seeds that did not pass, never as a class:
at 3 seeds the decision rule cannot reach *reproduced* (3 passes of 3 give a lower bound of 0.29,
below :data:`REPRODUCED_LOWER`), so a class would call every clean claim "underpowered". The
report's paper-scale column shows the count beside the seed-0 record
(:mod:`nlcl.harness.records.paper_scale`).
"""

from __future__ import annotations

import argparse
import json
import math
import secrets
import subprocess
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from nlcl.harness.run.spec import PROFILES

__all__ = [
    "DEV_SEEDS",
    "DRAW_RANGE",
    "N_SEEDS",
    "MIN_SEEDS",
    "CONFIDENCE",
    "REPRODUCED_LOWER",
    "RULE_DATE",
    "CLASSES",
    "HELD_OUT_DIR",
    "HELD_OUT_FULL_DIR",
    "PROFILES",
    "PROFILE_DIRS",
    "N_SEEDS_FULL",
    "MIN_SEEDS_FULL",
    "check_profile",
    "seed_counts",
    "draw_seeds",
    "used_seeds",
    "load_ledger",
    "all_ledgers",
    "load_record",
    "build_record",
    "merge_records",
    "claim_verdicts",
    "revised_since",
    "interval",
    "decide",
    "seeds_to_decide",
    "p_reproduced",
    "load_sets",
    "append_sets",
    "sets_from_history",
    "current_hashes",
    "declared_unseeded",
    "accumulate",
    "unseeded_problems",
    "evidence",
    "headline",
    "attach",
    "headline_text",
    "report_lines",
    "compare_rows",
    "main",
]

#: The development set: the base seeds chapters were written and revised at.
DEV_SEEDS = (0, 1, 2, 3, 4)
#: Held-out seeds are drawn from this half-open range (far from every seed a chapter derives from 0–4).
DRAW_RANGE = (10_000, 1_000_000)
#: The confidence of the interval of a claim's held-out pass rate (two-sided Clopper–Pearson).
CONFIDENCE = 0.95
#: Reproduced: the interval's lower bound is at least this.
REPRODUCED_LOWER = 0.8
#: The date the decision rule was declared (CONTRIBUTING), before the first record it decides.
RULE_DATE = "2026-12-07"
#: A held-out run has at least this many seeds (``run --n`` refuses fewer).
MIN_SEEDS = 10
#: The classes of :func:`decide`, then the labels of verdicts that are not counted as evidence.
CLASSES = ("reproduced", "underpowered", "fragile", "not-reproduced", "fails")
NOT_EVIDENCE = ("unseeded", "artifact")
HELD_OUT_DIR = Path("results") / "held-out"
#: Where the held-out runs of the ``full`` profile (the papers' sizes) are recorded.
HELD_OUT_FULL_DIR = Path("results") / "held-out-full"
#: Each profile's held-out directory (relative to the book's root); a held-out run takes every
#: profile of :data:`nlcl.harness.run.spec.PROFILES`.
PROFILE_DIRS = {"ci": HELD_OUT_DIR, "full": HELD_OUT_FULL_DIR}
#: Seeds per held-out ``full`` run by default, and the fewest it takes: a full run costs minutes of a
#: GPU per chapter and seed, so its sets are small and its result a pass count, not a class (3 of 3
#: give a Clopper–Pearson lower bound of 0.29: the decision rule cannot reach *reproduced*).
N_SEEDS_FULL = 3
MIN_SEEDS_FULL = 3
LEDGER = "ledger.json"
RECORD = "record.json"
SETS = "sets"
_THIS_RUN = "this run"


def seeds_to_decide(lower: float = REPRODUCED_LOWER, confidence: float = CONFIDENCE) -> int:
    """The fewest seeds at which a claim that passes at every one is *reproduced*: the two-sided
    Clopper–Pearson lower bound of ``n`` passes in ``n`` is ``((1 - confidence)/2)^(1/n)``, which
    reaches ``lower`` at ``n ≥ ln((1 - confidence)/2) / ln(lower)`` (17 for 0.8 at 95%)."""
    if not (0 < lower < 1 and 0 < confidence < 1):
        raise ValueError(f"lower={lower}, confidence={confidence}: both must lie in (0, 1)")
    return math.ceil(math.log((1 - confidence) / 2) / math.log(lower) - 1e-12)


#: Seeds per held-out run by default: the fewest at which the rule can decide a claim that passes
#: at every seed (:func:`seeds_to_decide`), so one run can reproduce a claim.
N_SEEDS = seeds_to_decide()


def check_profile(profile: Any) -> str:
    """``profile`` when it is one of :data:`PROFILES`; a clear error otherwise."""
    if profile not in PROFILES:
        raise ValueError(f"profile={profile!r}: a held-out run takes one of {', '.join(PROFILES)}")
    return profile


def seed_counts(profile: str) -> tuple[int, int]:
    """(default, fewest) seeds of a held-out set of ``profile``: (:data:`N_SEEDS`, :data:`MIN_SEEDS`)
    for ``ci``, whose sets decide classes; (:data:`N_SEEDS_FULL`, :data:`MIN_SEEDS_FULL`) for
    ``full``, whose sets give pass counts."""
    return (N_SEEDS, MIN_SEEDS) if check_profile(profile) == "ci" else (N_SEEDS_FULL, MIN_SEEDS_FULL)


def load_ledger(directory: Path) -> list[dict[str, Any]]:
    """The held-out sets drawn so far (oldest first): seeds, date, commit, what they decided."""
    path = Path(directory) / LEDGER
    return json.loads(path.read_text())["sets"] if path.is_file() else []


def used_seeds(ledger: Sequence[Mapping[str, Any]]) -> set[int]:
    """Every seed a held-out draw must avoid: the development set and all earlier held-out sets."""
    return set(DEV_SEEDS) | {int(s) for entry in ledger for s in entry["seeds"]}


def all_ledgers(out: Path | None = None, root: Path | None = None) -> list[dict[str, Any]]:
    """The held-out sets drawn so far at *every* profile: the ledgers of :data:`HELD_OUT_DIR` and
    :data:`HELD_OUT_FULL_DIR` under ``root`` (the book's root; the current directory when None)
    and of ``out`` (a run's own directory, where it is elsewhere), each directory read once. A new
    draw avoids all of their seeds (:func:`used_seeds`), so no seed is run at two profiles."""
    base = Path(root) if root is not None else Path()
    directories = [base / d for d in PROFILE_DIRS.values()] + ([Path(out)] if out is not None else [])
    seen: set[Path] = set()
    entries: list[dict[str, Any]] = []
    for d in directories:
        key = d.resolve()
        if key not in seen:
            seen.add(key)
            entries += load_ledger(d)
    return entries


def draw_seeds(n: int, used: set[int], rng: Any = None) -> list[int]:
    """``n`` distinct seeds from :data:`DRAW_RANGE`, none in ``used`` (``rng``: ``secrets.SystemRandom``
    by default, so nobody can know them before the draw)."""
    if n < 1:
        raise ValueError(f"n={n}: a held-out set needs at least one seed")
    rng = rng or secrets.SystemRandom()
    low, high = DRAW_RANGE
    out: list[int] = []
    while len(out) < n:
        s = rng.randrange(low, high)
        if s not in used and s not in out:
            out.append(s)
    return sorted(out)


def load_record(directory: Path) -> dict[str, Any] | None:
    """The latest held-out record (``record.json``), or None when no held-out run was committed."""
    path = Path(directory) / RECORD
    if not path.is_file():
        return None
    data = json.loads(path.read_text())
    if not isinstance(data, dict) or not isinstance(data.get("chapters"), dict) or "seeds" not in data:
        raise ValueError(f"{path}: expected a held-out record with 'seeds' and 'chapters'")
    if data.get("profile", "ci") not in PROFILES:
        raise ValueError(f"{path}: profile {data.get('profile')!r}; a held-out record has one of {PROFILES}")
    data["artifact"] = f"{PROFILE_DIRS[data.get('profile', 'ci')] / RECORD}"
    return data


def build_record(
    seeds: Sequence[int],
    chapters: Mapping[str, Mapping[str, Any]],
    *,
    commit: str,
    numerics: Mapping[str, Any] | None,
    seconds: float,
    profile: str = "ci",
) -> dict[str, Any]:
    """The committed record of one held-out run; ``chapters``: chapter → seed-sweep record
    (:func:`nlcl.harness.records.seed_sweeps.record_from_points`) of that chapter at ``seeds``;
    ``profile``: the profile the chapters ran at (:data:`PROFILES`), in the record and each chapter's set."""
    check_profile(profile)
    date = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    keys = ("chapter_sha256", "modules_sha256", "seeds", "errors", "rows", "points_time_s")
    return {
        "seeds": sorted(int(s) for s in seeds),
        "development_seeds": list(DEV_SEEDS),
        "profile": profile,
        "commit": commit,
        "date": date,
        "wall_time_s": round(float(seconds), 1),
        "numerics": dict(numerics) if numerics else None,
        "chapters": {
            c: {**{k: rec.get(k) for k in keys}, "profile": profile, "commit": commit, "date": date}
            for c, rec in chapters.items()
        },
    }


def merge_records(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> dict[str, Any]:
    """``new`` (a held-out run of some chapters, at a fresh set) over ``old``: the chapters of
    ``new`` replace theirs, the others keep the set they were decided at; ``seeds`` lists every set
    still in use (a chapter's own ``seeds`` say which decided it). Records of two profiles are
    never merged (a clear error)."""
    if not old:
        return dict(new)
    if old.get("profile", "ci") != new.get("profile", "ci"):
        raise ValueError(
            f"a held-out record of profile {old.get('profile', 'ci')!r} cannot take a run of profile "
            f"{new.get('profile', 'ci')!r} (each profile has its own directory: {PROFILE_DIRS})"
        )
    # an old chapter keeps the commit and date it was decided at (the new run's are not its own)
    kept = {
        c: {"commit": old.get("commit"), "date": old.get("date"), **r} for c, r in old["chapters"].items()
    }
    chapters = {**kept, **new["chapters"]}
    seeds = sorted({int(s) for rec in chapters.values() for s in rec["seeds"]})
    return {**new, "seeds": seeds, "chapters": chapters}


def _verdict(statuses: Mapping[Any, str], required: bool) -> str:
    seen = set(statuses.values())
    if required and seen & {"fail", "invalid"}:
        return "fail"
    if len(seen) == 1:
        return next(iter(seen))
    return "mixed"


def claim_verdicts(record: Mapping[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    """The verdicts of one record (each chapter's latest set; the verdicts of record accumulate
    over every set, :func:`accumulate`): (chapter, claim id) → ``verdict`` (``pass`` at every seed,
    ``fail`` when a required claim fails or is invalid at some seed, else the one status at every
    seed or ``mixed``), ``statuses`` and ``measured`` per held-out seed, ``kind``, ``required``,
    ``summary`` (counts) and ``seeds``."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for chapter, rec in record["chapters"].items():
        for row in rec["rows"]:
            c = out.setdefault(
                (chapter, row["claim"]),
                {"kind": row["kind"], "required": False, "statuses": {}, "measured": {}},
            )
            c["statuses"][int(row["seed"])] = row["status"]
            c["measured"][int(row["seed"])] = row.get("measured")
            c["required"] = c["required"] or bool(row["required"])
    for (chapter, _), c in out.items():
        seeds = record["chapters"][chapter]["seeds"]
        missing = [s for s in seeds if s not in c["statuses"]]
        for s in missing:  # the run at that seed failed before measuring this claim
            c["statuses"][s] = "missing"
        c["verdict"] = _verdict(c["statuses"], c["required"])
        c["summary"] = ", ".join(f"{n} {s}" for s, n in Counter(c["statuses"].values()).most_common())
        c["seeds"] = list(seeds)
    return out


def revised_since(record: Mapping[str, Any], root: Path | None = None) -> dict[str, str]:
    """Chapters whose source changed after the held-out run (their held-out verdicts describe an
    earlier version): chapter → reason. Their next held-out verdicts come from a new set."""
    from nlcl.harness.records import sources

    recs = {c: {"commit": record.get("commit"), **r} for c, r in record["chapters"].items()}
    try:
        return sources.stale_sources(recs, root, since="the held-out run")
    except FileNotFoundError:  # a record outside a book: nothing to compare with
        return {}


# -- the decision rule -------------------------------------------------------------------------


def interval(passes: int, n: int, confidence: float = CONFIDENCE) -> tuple[float, float] | None:
    """The two-sided Clopper–Pearson interval of a pass rate from ``passes`` of ``n`` seeds
    (``scipy.stats.binomtest(passes, n).proportion_ci(confidence, method="exact")``); None for n = 0."""
    if not (isinstance(n, int) and isinstance(passes, int) and 0 <= passes <= n):
        raise ValueError(f"passes={passes!r}, n={n!r}: need integers 0 ≤ passes ≤ n")
    if n == 0:
        return None
    from scipy.stats import binomtest

    ci = binomtest(passes, n).proportion_ci(confidence_level=confidence, method="exact")
    return float(ci.low), float(ci.high)


def decide(passes: int, n: int, statuses: Mapping[str, int] | None = None) -> str:
    """The held-out class of a claim from its pass count (the rule of the module docstring).

    ``statuses``: status → number of counted seeds (the not-passing ones decide between *not
    reproduced*, every one ``not-reproduced``, and *fails*). ``"none"`` when there is no seed."""
    if n == 0:
        return "none"
    lo, _ = interval(passes, n)
    if lo >= REPRODUCED_LOWER:
        return "reproduced"
    if passes == n:
        return "underpowered"
    if passes > 0:
        return "fragile"
    others = {s: k for s, k in (statuses or {}).items() if k and s not in ("pass", "not-gated")}
    return "not-reproduced" if others and set(others) == {"not-reproduced"} else "fails"


def p_reproduced(p: float, n: int) -> float:
    """The probability that a claim passing at each seed with probability ``p`` is *reproduced* at
    ``n`` seeds: the binomial mass of the pass counts whose interval clears :data:`REPRODUCED_LOWER`."""
    from scipy.stats import binom

    return float(sum(binom.pmf(k, n, p) for k in range(n + 1) if decide(k, n) == "reproduced"))


# -- the sets: every held-out run, kept ----------------------------------------------------------

_SET_KEYS = ("seeds", "commit", "date", "chapter_sha256", "modules_sha256", "errors", "points_time_s")


def _set_entry(rec: Mapping[str, Any], commit: Any = None, date: Any = None, **extra: Any) -> dict[str, Any]:
    out = {k: rec.get(k) for k in _SET_KEYS}
    out["seeds"] = sorted(int(s) for s in rec["seeds"])
    out["commit"] = rec.get("commit") or commit
    out["date"] = rec.get("date") or date
    if rec.get("profile"):  # sets made before the field are ci sets
        out["profile"] = rec["profile"]
    return {**out, **extra, "rows": list(rec["rows"])}


def _sets_file(directory: Path, chapter: str) -> Path:
    return Path(directory) / SETS / f"{chapter}.json"


def _read_sets(directory: Path, chapter: str) -> list[dict[str, Any]]:
    """The archived sets of ``chapter`` (``sets/<chapter>.json``; [] when there is none)."""
    path = _sets_file(directory, chapter)
    return json.loads(path.read_text())["sets"] if path.is_file() else []


def _dump_sets(chapter: str, sets: Sequence[Mapping[str, Any]]) -> str:
    """``sets/<chapter>.json``: one set per block, one row per line (small diffs when a set is appended)."""
    blocks = []
    for s in sets:
        head = json.dumps({k: v for k, v in s.items() if k != "rows"}, ensure_ascii=False, default=str)
        rows = ",\n".join(json.dumps(r, ensure_ascii=False, default=str) for r in s["rows"])
        blocks.append(f'{head[:-1]}, "rows": [\n{rows}\n]}}')
    return f'{{"chapter": {json.dumps(chapter)}, "sets": [\n' + ",\n".join(blocks) + "\n]}\n"


def load_sets(directory: Path, profile: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """chapter → every held-out set of it, oldest first: ``sets/<chapter>.json``, and the chapter sets
    of ``record.json`` that the archive lacks (matched by seeds). ``profile``: every set must be of
    it (a set without the field is a ``ci`` one), else a clear error: the sets of two profiles are
    never counted together."""
    directory = Path(directory)
    out: dict[str, list[dict[str, Any]]] = {}
    for path in sorted((directory / SETS).glob("*.json")):
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or not isinstance(data.get("sets"), list) or "chapter" not in data:
            raise ValueError(f"{path}: expected held-out sets {{'chapter': ..., 'sets': [...]}}")
        out[data["chapter"]] = [dict(s) for s in data["sets"]]
    record = load_record(directory)
    for chapter, rec in (record or {}).get("chapters", {}).items():
        have = {tuple(s["seeds"]) for s in out.get(chapter, [])}
        if tuple(sorted(int(s) for s in rec["seeds"])) not in have:
            entry = _set_entry(rec, record.get("commit"), record.get("date"))
            entry.setdefault("profile", record.get("profile", "ci"))
            out.setdefault(chapter, []).append(entry)
    for chapter, sets in out.items():
        sets.sort(key=lambda s: str(s.get("date") or ""))
        other = [s["seeds"] for s in sets if profile and s.get("profile", "ci") != check_profile(profile)]
        if other:
            raise ValueError(
                f"{directory}: {chapter}: sets at seeds {other} are not of profile {profile!r}; "
                "each profile's held-out sets have a directory of their own"
            )
    return out


def append_sets(
    directory: Path, chapters: Mapping[str, Mapping[str, Any]], commit: Any = None, date: Any = None
) -> list[str]:
    """Append each chapter's set (chapter → sweep record with ``seeds``, hashes and ``rows``) to
    ``sets/<chapter>.json``; an archived set is never rewritten: one with the same seeds is skipped.
    Returns the chapters appended to."""
    done = []
    for chapter, rec in chapters.items():
        path = _sets_file(directory, chapter)
        sets = _read_sets(directory, chapter)
        entry = _set_entry(rec, commit, date)
        if any(sorted(s["seeds"]) == entry["seeds"] for s in sets):
            continue
        if used := set(entry["seeds"]) & {int(x) for s in sets for x in s["seeds"]}:
            raise ValueError(f"{chapter}: seeds {sorted(used)} are in an archived set already")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(_dump_sets(chapter, [*sets, entry]))
        done.append(chapter)
    return done


def sets_from_history(
    root: Path | None = None, record_path: Path = HELD_OUT_DIR / RECORD
) -> dict[str, list[dict[str, Any]]]:
    """Every chapter set in the git history of ``record.json``, chapter → sets oldest first: the
    version of each (chapter, seeds) in the latest commit that has it (a later commit may have
    rewritten its hashes, never its rows), with ``archived_from`` naming that commit."""
    from nlcl.harness.records.provenance import repo_root

    root = repo_root(root)

    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout

    found: dict[tuple[str, tuple[int, ...]], dict[str, Any]] = {}
    for commit in reversed(git("log", "--format=%H", "--", str(record_path)).split()):
        try:
            record = json.loads(git("show", f"{commit}:{record_path}"))
        except (subprocess.CalledProcessError, json.JSONDecodeError):  # deleted, or not a record
            continue
        for chapter, rec in record.get("chapters", {}).items():
            entry = _set_entry(
                rec,
                record.get("commit"),
                record.get("date"),
                archived_from=f"git {commit[:12]}:{record_path}",
            )
            found[(chapter, tuple(entry["seeds"]))] = entry
    out: dict[str, list[dict[str, Any]]] = {}
    for (chapter, _), entry in found.items():
        out.setdefault(chapter, []).append(entry)
    for sets in out.values():
        sets.sort(key=lambda s: str(s.get("date") or ""))
    return out


def current_hashes(chapters: Iterable[str], root: Path | None = None) -> dict[str, tuple[str, str] | None]:
    """chapter → (``chapter_sha256``, ``modules_sha256``) of today's tree; None for a chapter that
    no longer exists (or a tree without a book)."""
    from nlcl.harness.records import provenance, sources

    out: dict[str, tuple[str, str] | None] = {}
    for chapter in chapters:
        try:
            sha = provenance.chapter_sha256(chapter, root)
            out[chapter] = None if sha is None else (sha, sources.modules_sha256(chapter, root))
        except (FileNotFoundError, SyntaxError):
            out[chapter] = None
    return out


def declared_unseeded(root: Path | None = None) -> set[tuple[str, str]]:
    """(chapter, claim) of every claim whose ledger declares ``seeded: false`` (nothing random in
    its computation; in a claim or in the ledger's ``defaults``)."""
    from nlcl.harness.claims.ledger import read_ledger
    from nlcl.harness.records.provenance import repo_root

    try:
        root = repo_root(root)
    except FileNotFoundError:
        return set()
    out = set()
    for path in sorted((root / "book" / "claims").glob("*.yaml")):
        led = read_ledger(path)
        out |= {(led.chapter, c["id"]) for c in led.claims if c.get("seeded") is False}
    return out


def _counted(s: Mapping[str, Any], now: tuple[str, str] | None) -> bool:
    """Whether a set was made at today's computation: both hashes equal today's (and present)."""
    return (
        bool(now)
        and s.get("chapter_sha256") == now[0]
        and bool(s.get("modules_sha256"))
        and s.get("modules_sha256") == now[1]
    )


def _count(statuses: Mapping[str, int]) -> dict[str, int]:
    """``passes`` and ``n`` (not-gated seeds left out) of a status count."""
    return {
        "passes": statuses.get("pass", 0),
        "n": sum(k for s, k in statuses.items() if s != "not-gated"),
    }


def _sets(k: int) -> str:
    return f"{k} set" + "s" * (k != 1)


def _earlier(c: Mapping[str, Any]) -> str:
    e = c.get("earlier") or {}
    return f"{e['passes']}/{e['n']} pass at earlier code, not counted" if e.get("n") else ""


def _summary(c: Mapping[str, Any]) -> str:
    n, passes = c["n"], c["passes"]
    if c["class"] == "revised":
        earlier = _earlier(c)
        return f"no held-out set at the current code ({_sets(c['excluded_sets'])} at earlier code" + (
            f"; {earlier})" if earlier else ", not counted)"
        )
    if n == 0:
        return "not gated at every held-out seed (timing, measured beside other runs)"
    others = ", ".join(f"{k} {s}" for s, k in sorted(c["statuses"].items()) if s != "pass" and k)
    text = f"{passes}/{n} pass" + (f" ({others})" if others else "")
    if c["evidence"] == "artifact":
        return f"{text}; not held-out evidence: {c['read_from']}"
    if c["evidence"] == "unseeded":
        return f"{text}; not held-out evidence: nothing random (ledger: seeded: false)"
    lo, hi = c["interval"]
    sets = len(c["sets"])
    return (
        f"{text}, {int(100 * CONFIDENCE)}% CI [{lo:.2f}, {hi:.2f}]: {c['class']}"
        + (f" ({sets} sets)" if sets > 1 else "")
        + ("; one value at every seed" if c["one_value"] else "")
    )


def accumulate(
    sets: Mapping[str, Sequence[Mapping[str, Any]]],
    current: Mapping[str, tuple[str, str] | None],
    unseeded: Iterable[tuple[str, str]] = (),
) -> dict[tuple[str, str], dict[str, Any]]:
    """(chapter, claim) → the claim's accumulated held-out verdict.

    ``sets``: chapter → its held-out sets (:func:`load_sets`); ``current``: chapter → today's hashes
    (:func:`current_hashes`); ``unseeded``: the claims declared ``seeded: false``. Only sets whose
    hashes equal today's are counted (a seed in two of them counts once). Each entry: ``kind``,
    ``required``, ``n`` (counted seeds, not-gated ones left out), ``passes``, ``statuses`` (status →
    seeds, a seed whose run measured no value for the claim is ``missing``), ``interval``
    (:func:`interval`), ``evidence`` (``seeded``, ``unseeded`` or ``artifact``; ``read_from``),
    ``class`` (:func:`decide` for seeded evidence; ``unseeded``/``artifact``; ``revised`` when no set
    is at today's code; ``not-gated``), ``sets`` (seeds, commit, date of each counted set),
    ``seeds``, ``excluded_sets``, ``earlier`` (``passes`` and ``n`` over the rows of those sets, for the
    audit), ``one_value`` (the same value at every counted seed) and ``summary``. A claim that no
    counted set recorded, where every counted run completed, is no longer in the chapter (withdrawn or
    renamed): it has no entry."""
    unseeded = set(unseeded)
    out: dict[tuple[str, str], dict[str, Any]] = {}
    for chapter, chapter_sets in sets.items():
        now = current.get(chapter)
        counted = [s for s in chapter_sets if _counted(s, now)]
        excluded = len(chapter_sets) - len(counted)
        claims: dict[str, dict[str, Any]] = {}
        for s in chapter_sets:  # every claim ever recorded, so a revised chapter's claims are shown
            for row in s["rows"]:
                c = claims.setdefault(row["claim"], {"kind": row["kind"], "required": bool(row["required"])})
                c.update(kind=row["kind"], required=bool(row["required"]))  # the latest set's
        per_seed: dict[str, dict[int, Mapping[str, Any] | None]] = {c: {} for c in claims}
        used: list[dict[str, Any]] = []
        for s in counted:
            used.append({"seeds": list(s["seeds"]), "commit": s.get("commit"), "date": s.get("date")})
            rows = {(int(r["seed"]), r["claim"]): r for r in s["rows"]}
            for claim in claims:
                for seed in s["seeds"]:
                    per_seed[claim][int(seed)] = rows.get((int(seed), claim))
        earlier: dict[str, Counter] = {c: Counter() for c in claims}
        for s in chapter_sets:
            if not _counted(s, now):  # shown for the audit, never counted
                for r in s["rows"]:
                    earlier[r["claim"]][r["status"]] += 1
        completed = bool(counted) and not any(s.get("errors") for s in counted)
        for claim, c in claims.items():
            rows = per_seed[claim]
            if completed and not any(rows.values()):
                # every run at today's code completed without recording it: the claim is no longer
                # in the chapter (withdrawn or renamed), not a claim missing at every seed
                continue
            statuses = Counter(r["status"] if r else "missing" for r in rows.values())
            n = sum(k for s, k in statuses.items() if s != "not-gated")
            passes = statuses.get("pass", 0)
            read = sorted(
                {r["computed"] for r in rows.values() if r and r.get("computed", _THIS_RUN) != _THIS_RUN}
            )
            values = {json.dumps(r.get("measured"), default=str) for r in rows.values() if r}
            c.update(
                chapter=chapter,
                claim=claim,
                n=n,
                passes=passes,
                statuses=dict(statuses),
                interval=interval(passes, n),
                evidence="artifact" if read else ("unseeded" if (chapter, claim) in unseeded else "seeded"),
                read_from="; ".join(read) or None,
                sets=used,
                seeds=sorted(rows),
                excluded_sets=excluded,
                earlier=_count(earlier[claim]),
                one_value=len(rows) > 1 and len(values) == 1 and "missing" not in statuses,
            )
            if not counted:
                c["class"] = "revised"
            elif n == 0:
                c["class"] = "not-gated"
            elif c["evidence"] != "seeded":
                c["class"] = c["evidence"]
            else:
                c["class"] = decide(passes, n, statuses)
            c["summary"] = _summary(c)
            out[(chapter, claim)] = c
    return out


def unseeded_problems(
    sets: Mapping[str, Sequence[Mapping[str, Any]]], unseeded: Iterable[tuple[str, str]]
) -> list[str]:
    """Claims declared ``seeded: false`` whose measured value differs between the seeds of one held-out
    set (within a set the code is one, so a declaration of no randomness is then wrong)."""
    problems = []
    for chapter, claim in sorted(set(unseeded)):
        for s in sets.get(chapter, []):
            values = {json.dumps(r.get("measured"), default=str) for r in s["rows"] if r["claim"] == claim}
            if len(values) > 1:
                problems.append(
                    f"{chapter}/{claim}: declared seeded: false, yet {len(values)} different values at "
                    f"held-out seeds {s['seeds']}"
                )
    return problems


def evidence(
    directory: Path = HELD_OUT_DIR, root: Path | None = None
) -> dict[tuple[str, str], dict[str, Any]] | None:
    """:func:`accumulate` over every set under ``directory`` with today's hashes and ledgers; None
    when there is no held-out set."""
    sets = load_sets(Path(directory), "ci")
    if not sets:
        return None
    return accumulate(sets, current_hashes(sets, root), declared_unseeded(root))


def _shown(
    accumulated: Mapping[tuple[str, str], Mapping[str, Any]], claims: Iterable[tuple[str, str]] | None
) -> list[Mapping[str, Any]]:
    """The required reproductions among ``accumulated`` (only those in ``claims``, the book's
    (chapter, id) pairs, where given: a claim a chapter no longer has is not counted)."""
    keep = None if claims is None else set(claims)
    return [
        c
        for key, c in accumulated.items()
        if c["required"] and c["kind"] == "reproduction" and (keep is None or key in keep)
    ]


def headline(
    accumulated: Mapping[tuple[str, str], Mapping[str, Any]], claims: Iterable[tuple[str, str]] | None = None
) -> dict[str, Any]:
    """The report's headline: required reproductions by accumulated held-out class.

    ``total`` required reproductions; one count per :data:`CLASSES` (seeded evidence decided by the
    rule); ``unseeded`` and ``artifact`` (not held-out evidence); ``revised`` (no set at today's
    code); ``not_gated`` (timing claims, undecided); ``seeds`` (the fewest and most counted seeds of
    a claim with seeded evidence). Informational claims and checks are left out, and so are claims
    not in ``claims`` (the book's (chapter, id) pairs) where given."""
    req = _shown(accumulated, claims)
    counts = Counter(c["class"] for c in req)
    counted = [c["n"] for c in req if c["class"] in CLASSES]
    out: dict[str, Any] = {"total": len(req)}
    out.update({k.replace("-", "_"): counts[k] for k in (*CLASSES, *NOT_EVIDENCE, "revised", "not-gated")})
    out["seeds"] = (min(counted), max(counted)) if counted else (0, 0)
    return out


def attach(
    records: Sequence[Mapping[str, Any]], accumulated: Mapping[tuple[str, str], Mapping[str, Any]] | None
):
    """Each claim record with ``held_out`` (its accumulated entry: ``class``, pass count, interval,
    ``evidence``, summary, counted seeds, ``revised`` when no set is at today's code, ``artifact``;
    ``verdict``: ``pass`` when reproduced, else the class) where a held-out set has the claim; the
    others unchanged."""
    out = []
    for r in records:
        r = dict(r)
        c = (accumulated or {}).get((r.get("chapter"), r.get("id")))
        if c is not None:
            r["held_out"] = {
                **{k: c[k] for k in ("class", "n", "passes", "interval", "evidence", "summary", "seeds")},
                "verdict": "pass" if c["class"] == "reproduced" else c["class"],
                "sets": len(c["sets"]),
                "revised": c["class"] == "revised",
                "artifact": f"{HELD_OUT_DIR / SETS}/{r['chapter']}.json",
            }
        out.append(r)
    return out


def headline_text(
    accumulated: Mapping[tuple[str, str], Mapping[str, Any]] | None,
    claims: Iterable[tuple[str, str]] | None = None,
) -> str:
    """The report's first line: the accumulated held-out verdicts of the required reproductions
    (of the book's ``claims`` where given, :func:`headline`)."""
    if not accumulated:
        return (
            "**No held-out verdicts yet**: the verdicts below come from the development set (base "
            "seed 0 of this build; seeds 0–4 in the seed sweeps), where the chapters were written."
        )
    h = headline(accumulated, claims)
    lo, hi = h["seeds"]
    seeds = "none yet" if not hi else f"{lo} seeds per claim" if lo == hi else f"{lo}–{hi} seeds per claim"
    rest = [
        f"{h['artifact']} read from committed artifacts" if h["artifact"] else "",
        f"{h['unseeded']} without randomness" if h["unseeded"] else "",
        f"{h['revised']} whose chapter changed since its last held-out set" if h["revised"] else "",
        f"{h['not_gated']} timing claims not gated" if h["not_gated"] else "",
    ]
    rest = [t for t in rest if t]
    return (
        f"**Verdicts of record** (`ci` profile at held-out base seeds drawn when each run started, "
        f"accumulated over every held-out set run at the chapter's current code: {seeds}; "
        f"`{HELD_OUT_DIR / SETS}/`): of **{h['total']} required reproductions**, "
        f"{h['reproduced']} reproduced, {h['underpowered']} underpowered, {h['fragile']} fragile, "
        f"{h['not_reproduced']} not reproduced, {h['fails']} fail at every seed (the classes: "
        "[Held-out evidence](#held-out-evidence))"
        + (f"; not counted as held-out evidence: {', '.join(rest)}" if rest else "")
        + ". The development set (base seed 0 of this build; 0–4 in the seed sweeps) gives:"
    )


def report_lines(
    accumulated: Mapping[tuple[str, str], Mapping[str, Any]] | None,
    order: Mapping[str, int] | None = None,
    claims: Iterable[tuple[str, str]] | None = None,
) -> list[str]:
    """The report's section on held-out evidence: every required reproduction (of the book's
    ``claims`` where given) that is not *reproduced*, with its pass count, interval, class and the
    sets counted (Markdown lines)."""
    if not accumulated:
        return []
    order = order or {}
    shown = sorted(
        (c for c in _shown(accumulated, claims) if c["class"] != "reproduced"),
        key=lambda c: (order.get(c["chapter"], len(order)), c["chapter"], c["claim"]),
    )
    lines = [
        "",
        "(held-out-evidence)=",
        "## Held-out evidence",
        "",
        f"A claim's held-out verdict counts its passes over every held-out seed at which its chapter's "
        f"code and ledger and the `nlcl` code it computes with were today's, with a "
        f"{int(100 * CONFIDENCE)}% Clopper–Pearson interval of the pass rate. Reproduced: lower bound "
        f"≥ {REPRODUCED_LOWER} (at least {seeds_to_decide()} seeds, all passing); underpowered: passes "
        "at every seed, bound below; fragile: passes at some seeds, not at others; not reproduced: its "
        "explanation held at every seed; fails: passes at none. Values read from committed artifacts and "
        f"claims without randomness are not evidence. The decision rule was declared on {RULE_DATE} "
        "(CONTRIBUTING). The required reproductions that are not reproduced:",
        "",
        "| claim | chapter | passes | interval | class | sets | not counted |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c in shown:
        iv = f"[{c['interval'][0]:.2f}, {c['interval'][1]:.2f}]" if c["interval"] else "—"
        others = ", ".join(f"{k} {s}" for s, k in sorted(c["statuses"].items()) if s != "pass" and k)
        lines.append(
            f"| `{c['claim']}` | {{doc}}`{c['chapter']}` | {c['passes']}/{c['n']}"
            f"{f' ({others})' if others else ''} | {iv} | {c['class']} | {len(c['sets'])} | "
            f"{_sets(c['excluded_sets'])} at earlier code{': ' + _earlier(c) if _earlier(c) else ''} |"
        )
    return lines


def _sweep(chapter: str, seeds: Sequence[int], args: argparse.Namespace):
    """``nlcl sweep`` of ``chapter`` at ``seeds`` in the profile (``args.profile``, default ci), as the
    command line asked."""
    from nlcl.harness.run.sweep import run_sweep

    return run_sweep(
        chapter,
        {"seed": list(seeds)},
        profile=check_profile(getattr(args, "profile", None) or "ci"),
        workers=args.workers,
        scheduler=args.scheduler,
        out=Path(args.sweep_dir) / chapter if args.sweep_dir else None,
        progress=not args.quiet,
    )


def compare_rows(old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A replay's rows (``new``) against the record's (``old``), matched by (seed, claim): ``rows``,
    ``status_differs`` (the record's rows whose status differs or that the replay lacks, each with
    both statuses and values), ``values_differ`` (equal status, another value) and
    ``max_rel_difference`` over the numeric values of magnitude above 1e-12 (smaller ones are
    rounding residuals of identities), with the claim it was found at."""
    replayed = {(int(r["seed"]), r["claim"]): r for r in new}
    status, values, worst = [], 0, (0.0, None)
    for row in old:
        key = (int(row["seed"]), row["claim"])
        now = replayed.get(key)
        if now is None or now["status"] != row["status"]:
            here = [now["status"], now.get("measured")] if now else None
            status.append(
                dict(seed=key[0], claim=key[1], record=[row["status"], row.get("measured")], here=here)
            )
            continue
        a, b = row.get("measured"), now.get("measured")
        if json.dumps(a, default=str) == json.dumps(b, default=str):
            continue
        values += 1
        numeric = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (a, b))
        if numeric and abs(a) > 1e-12 and abs(a - b) / abs(a) > worst[0]:
            worst = (abs(a - b) / abs(a), key[1])
    return {"rows": len(old), "status_differs": status, "values_differ": values, "max_rel_difference": worst}


def _replay(args: argparse.Namespace) -> int:
    from nlcl.harness.records import seed_sweeps

    record = load_record(Path(args.out))
    if record is None:
        print(f"{args.out}: no held-out record")
        return 1
    profile = record.get("profile", "ci")  # a replay runs the record's profile
    if args.profile is not None and args.profile != profile:
        print(f"held_out: --profile {args.profile}: {args.out} holds a {profile}-profile record")
        return 2
    args.profile = profile
    revised = revised_since(record)
    report: dict[str, Any] = {}
    for chapter in args.chapters or list(record["chapters"]):
        rec = record["chapters"].get(chapter)
        if rec is None or chapter in revised:
            why = "not in the record" if rec is None else f"revised since the run ({revised[chapter]})"
            print(f"{chapter}: not replayed: {why}")
            report[chapter] = {"skipped": why}
            continue
        res = _sweep(chapter, rec["seeds"], args)
        rows = seed_sweeps.record_from_points(
            chapter, res.points, chapter_sha256="", commit=None, profile=profile, seconds=0.0
        )["rows"]
        report[chapter] = cmp = compare_rows(rec["rows"], rows)
        rel, at = cmp["max_rel_difference"]
        same = cmp["rows"] - len(cmp["status_differs"])
        print(
            f"{chapter}: {same} of {cmp['rows']} rows with the record's status, {cmp['values_differ']} values "
            f"differ" + (f" (largest relative difference {rel:.2g}, {at})" if at else ""),
            flush=True,
        )
        for d in cmp["status_differs"]:
            print(f"  seed {d['seed']} {d['claim']}: record {d['record']}, here {d['here']}")
    if args.report:
        from nlcl.core.numerics import environment

        out = {
            "record_commit": record.get("commit"),
            "profile": profile,
            "numerics": environment(),
            "chapters": report,
        }
        Path(args.report).write_text(json.dumps(out, indent=1, default=str) + "\n")
    return 1 if any(c.get("status_differs") for c in report.values()) else 0


def _run(args: argparse.Namespace) -> int:
    from nlcl.core import numerics
    from nlcl.harness.records import provenance, seed_sweeps, sources
    from nlcl.harness.run import notebook

    root = provenance.repo_root()
    commit = provenance.git_commit(root)
    if commit.endswith("+dirty") and not args.allow_dirty:
        print(
            "held_out: the tree has uncommitted changes; a verdict of record needs a committed tree "
            "(commit, or run in a clean clone)"
        )
        return 2
    profile = args.profile = args.profile or "ci"
    default, fewest = seed_counts(profile)
    n = default if args.n is None else args.n
    if n < fewest:
        why = (
            "the fewest at which a claim passing at every seed is reproduced under the decision rule"
            if profile == "ci"
            else "its result is a pass count per claim, not a class"
        )
        print(
            f"held_out: --n {n}: a held-out {profile} set has at least {fewest} seeds (default {default}, {why})"
        )
        return 2
    out = Path(args.out)
    known = list(notebook.chapters(root))
    chapters = list(args.chapters or known)
    if unknown := [c for c in chapters if c not in known and not (root / "book" / f"{c}.py").is_file()]:
        print(f"held_out: --chapters: no chapter {', '.join(unknown)} (the chapters: {', '.join(known)})")
        return 2
    existing, ledger = load_record(out), load_ledger(out)
    found = {e.get("profile", "ci") for e in ledger} | (
        {existing.get("profile", "ci")} if existing else set()
    )
    if found - {profile}:
        print(
            f"held_out: --profile {profile}: {out} holds held-out sets of profile {', '.join(sorted(found))}"
        )
        return 2
    old = existing if args.chapters else None
    seeds = draw_seeds(n, used_seeds(all_ledgers(out, root)))  # no seed of either profile again
    print(f"held_out: seeds {seeds} (drawn now), {len(chapters)} chapters, profile {profile}", flush=True)
    t0 = time.perf_counter()
    per_chapter = {}
    for chapter in chapters:
        res = _sweep(chapter, seeds, args)
        per_chapter[chapter] = rec = seed_sweeps.record_from_points(
            chapter,
            res.points,
            chapter_sha256=provenance.chapter_sha256(chapter, root),
            modules_sha256=sources.modules_sha256(chapter, root),
            commit=commit,
            profile=profile,
            seconds=sum(float(p.get("seconds", 0.0)) for p in res.points),
            numerics={},
        )
        for row in rec["rows"]:
            row["profile"] = profile
    record = build_record(
        seeds,
        per_chapter,
        commit=commit,
        numerics=numerics.environment(),
        seconds=time.perf_counter() - t0,
        profile=profile,
    )
    record = merge_records(old, record)
    record.pop("artifact", None)
    out.mkdir(parents=True, exist_ok=True)
    (out / RECORD).write_text(json.dumps(record, indent=2, ensure_ascii=False, default=str) + "\n")
    entry = {
        "seeds": seeds,
        "date": record["date"],
        "commit": commit,
        "profile": profile,
        "chapters": chapters,
    }
    (out / LEDGER).write_text(json.dumps({"sets": [*ledger, entry]}, indent=2) + "\n")
    sets = {c: {**rec, "profile": profile} for c, rec in per_chapter.items()}
    append_sets(out, sets, commit, record["date"])  # every set kept: the evidence accumulates
    if profile == "full":  # pass counts, not classes (nlcl.harness.records.paper_scale.held_out_counts)
        sets = load_sets(out, "full")
        acc = accumulate(sets, current_hashes(sets, root), declared_unseeded(root))
        counted = [c for c in acc.values() if c["chapter"] in per_chapter]
        print(
            f"{out}: paper scale at held-out seeds, accumulated at today's code: "
            f"{sum(c['passes'] == c['n'] > 0 for c in counted)} of {len(counted)} claims pass at every seed"
        )
        for c in sorted(counted, key=lambda c: (c["chapter"], c["claim"])):
            if c["passes"] != c["n"]:
                others = ", ".join(f"{k} {s}" for s, k in sorted(c["statuses"].items()) if s != "pass" and k)
                print(
                    f"  {c['chapter']} {c['claim']}: {c['passes']}/{c['n']} held-out seeds ({others})"
                    + (" required" if c["required"] else "")
                )
        return 0
    acc = evidence(out, root) or {}
    h = headline(acc)
    print(
        f"{out}: required reproductions, accumulated over the held-out sets at today's code: "
        + ", ".join(
            f"{h[k.replace('-', '_')]} {k}" for k in (*CLASSES, *NOT_EVIDENCE, "revised", "not-gated")
        )
        + f" (of {h['total']})"
    )
    for (chapter, claim), c in sorted(acc.items()):
        if chapter in per_chapter and c["class"] != "reproduced":
            print(f"  {chapter} {claim}: {c['summary']}{' required' if c['required'] else ''}")
    return 0


def _archive(args: argparse.Namespace) -> int:
    """Copy each chapter set of record.json's git history that ``sets/`` lacks (never rewriting one)."""
    out = Path(args.out)
    history = sets_from_history(record_path=PROFILE_DIRS[args.profile or "ci"] / RECORD)
    added = 0
    for chapter, sets in sorted(history.items()):
        archived = _read_sets(out, chapter)
        known = {tuple(s["seeds"]) for s in archived}
        new = [s for s in sets if tuple(s["seeds"]) not in known]
        if new:
            merged = sorted([*archived, *new], key=lambda s: str(s.get("date") or ""))
            path = _sets_file(out, chapter)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(_dump_sets(chapter, merged))
            added += len(new)
    print(f"{out / SETS}: {added} chapter sets added from the git history of {out / RECORD}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m nlcl.harness.records.held_out run [--profile ci|full] [--n N] [--workers N]``,
    ``... check``, ``... replay`` or ``... archive`` (each with ``--profile``)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "action",
        choices=["run", "check", "replay", "archive"],
        help="run: a new held-out set; check: revised chapters; replay: the record's seeds again, here; "
        "archive: copy the sets in the git history of record.json into sets/",
    )
    parser.add_argument(
        "--profile",
        choices=PROFILES,
        default=None,
        help=f"the chapters' profile (default ci; full: the papers' sizes, recorded in {HELD_OUT_FULL_DIR}; "
        "replay: the record's own)",
    )
    parser.add_argument(
        "--n",
        type=int,
        default=None,
        help=f"seeds in the new held-out set (ci: default {N_SEEDS}, at least {MIN_SEEDS}; "
        f"full: default {N_SEEDS_FULL}, at least {MIN_SEEDS_FULL})",
    )
    parser.add_argument("--chapters", nargs="*", help="only these chapters (default: every chapter)")
    parser.add_argument("--workers", type=int, default=None, help="LocalCluster worker processes")
    parser.add_argument("--scheduler", default=None, help="address of a running Dask scheduler")
    parser.add_argument(
        "--sweep-dir", default=None, help="nlcl sweep folders (default: sweeps/<chapter>/...)"
    )
    parser.add_argument(
        "--out",
        default=None,
        help=f"the record's directory (default {HELD_OUT_DIR}; --profile full: {HELD_OUT_FULL_DIR})",
    )
    parser.add_argument("--allow-dirty", action="store_true", help="run from a tree with uncommitted changes")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    parser.add_argument("--report", default=None, help="replay: write the comparison as JSON here")
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = str(PROFILE_DIRS[args.profile or "ci"])
    if args.n is not None and args.action != "run":
        parser.error(f"--n: only a run draws seeds ({args.action} reads the record's)")
    if args.action == "run":
        return _run(args)
    if args.action == "replay":
        return _replay(args)
    if args.action == "archive":
        return _archive(args)
    record = load_record(Path(args.out))
    if record is None:
        print(f"{args.out}: no held-out record")
        return 1
    if record.get("profile", "ci") != (args.profile or record.get("profile", "ci")):
        print(
            f"held_out: --profile {args.profile}: {args.out} holds a {record.get('profile', 'ci')}-profile record"
        )
        return 2
    from nlcl.harness.records import provenance

    return provenance.print_stale(args.out, revised_since(record))


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
