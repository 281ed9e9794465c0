"""Results artifacts: a run's result table plus its provenance, committed under ``results/``.

Paper-scale (``full`` profile) runs are often too slow for CI, so a chapter shows the committed
full-profile table beside its live ``ci`` run. An artifact is two files::

    results/<name>.csv    the table (pandas)
    results/<name>.json   provenance: name, schema, columns, rows, parameters, profile, device,
                          commit, date, versions, and free-form notes

:func:`load` compares the stored parameters with the chapter's current ones and refuses a stale
artifact with a message naming every parameter that differs.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from nlcl.core.validate import ParameterError
from nlcl.harness.claims.registry import to_plain
from nlcl.harness.records import provenance

__all__ = ["SCHEMA", "Artifact", "ArtifactMismatch", "results_dir", "save", "load", "concat_seeds", "records"]

SCHEMA = 1
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


class ArtifactMismatch(ValueError):
    """A stored artifact was produced with other parameters (or another schema) than asked for."""


@dataclass(frozen=True)
class Artifact:
    """A loaded artifact: the table and its provenance record."""

    table: pd.DataFrame
    meta: dict[str, Any]

    def label(self) -> str:
        """One line for captions: profile, device, commit and date of the stored run (of each part)."""
        m = self.meta
        if m.get("parts"):
            return " + ".join(
                f"seeds {p['parameters']['seeds']}: {Artifact(self.table, p).label()}" for p in m["parts"]
            )
        return f"{m['profile']} profile, {m['device']}, commit {m['commit']}, {m['date'][:10]}"


def results_dir(directory: str | os.PathLike | None = None) -> Path:
    """``directory`` if given, else ``NLCL_RESULTS_DIR``, else ``<repo root>/results``."""
    if directory is not None:
        return Path(directory)
    env = os.environ.get("NLCL_RESULTS_DIR")
    return Path(env) if env else provenance.repo_root() / "results"


def _check_name(name: str) -> str:
    if not isinstance(name, str) or not _NAME.match(name):
        raise ParameterError(f"artifact name={name!r} must match {_NAME.pattern}")
    return name


def save(
    name: str,
    table: pd.DataFrame,
    *,
    params: dict[str, Any],
    profile: str,
    device: str = "unknown",
    notes: str = "",
    directory: str | os.PathLike | None = None,
    commit: str | None = None,
) -> Path:
    """Write ``table`` and its provenance as ``<directory>/<name>.csv`` and ``.json``; return the csv path.

    ``commit`` records the code's commit as read when the computation started (a long run that
    saves partial results should pass it, so that later edits to the checkout are not recorded);
    by default it is read now.
    """
    _check_name(name)
    if not isinstance(table, pd.DataFrame):
        raise ParameterError(f"table must be a pandas DataFrame, got {type(table).__name__}")
    out = results_dir(directory)
    out.mkdir(parents=True, exist_ok=True)
    csv = out / f"{name}.csv"
    table.to_csv(csv, index=False)
    meta = provenance.collect(profile=profile, params=to_plain(dict(params)), device=device, commit=commit)
    meta.update(
        name=name,
        schema=SCHEMA,
        columns=list(map(str, table.columns)),
        rows=int(len(table)),
        notes=notes,
    )
    (out / f"{name}.json").write_text(json.dumps(meta, indent=2, default=str) + "\n")
    return csv


def load(
    name: str,
    *,
    params: dict[str, Any] | None = None,
    columns: list[str] | None = None,
    directory: str | os.PathLike | None = None,
) -> Artifact:
    """Load an artifact; with ``params``/``columns``, fail clearly if the stored ones differ."""
    _check_name(name)
    base = results_dir(directory)
    csv, meta_path = base / f"{name}.csv", base / f"{name}.json"
    for path in (csv, meta_path):
        if not path.is_file():
            raise FileNotFoundError(
                f"results artifact {name!r} is missing {path}; produce it by running the chapter "
                "with --profile full and nlcl.harness.records.results.save"
            )
    meta = json.loads(meta_path.read_text())
    if meta.get("schema") != SCHEMA:
        raise ArtifactMismatch(
            f"artifact {name!r} has schema {meta.get('schema')!r}; this nlcl reads schema {SCHEMA}: re-run it"
        )
    table = pd.read_csv(csv)
    if list(map(str, table.columns)) != meta["columns"] or len(table) != meta["rows"]:
        raise ArtifactMismatch(
            f"artifact {name!r}: {csv} does not match its record {meta_path} "
            f"(columns {list(table.columns)} vs {meta['columns']}, rows {len(table)} vs {meta['rows']})"
        )
    if columns is not None and list(columns) != meta["columns"]:
        raise ArtifactMismatch(
            f"artifact {name!r} has columns {meta['columns']}; the chapter expects {list(columns)}: re-run it"
        )
    if params is not None:
        stored, wanted = meta["parameters"], to_plain(dict(params))
        diffs = [
            f"{k}: stored {stored.get(k, '<absent>')!r}, chapter {wanted.get(k, '<absent>')!r}"
            for k in sorted(set(stored) | set(wanted))
            if stored.get(k, "<absent>") != wanted.get(k, "<absent>")
        ]
        if diffs:
            raise ArtifactMismatch(
                f"artifact {name!r} ({meta_path}) was produced with other parameters than the chapter's "
                "code uses; re-run it with --profile full. Differences: " + "; ".join(diffs)
            )
    return Artifact(table=table, meta=meta)


def concat_seeds(parts: list[Artifact]) -> Artifact:
    """One artifact from artifacts of the same grid trained at disjoint seeds (extra seeds trained later).

    Every stored parameter except ``seeds`` must agree and the seeds must be disjoint, else
    :class:`ArtifactMismatch`. The table holds the parts' rows in order, restricted to the columns
    every part has (in the first part's order); ``meta`` is the first part's with ``parameters.seeds``
    the union, ``rows``/``columns`` of the combined table and ``parts`` the provenance record of
    each part, which :meth:`Artifact.label` names one by one.
    """
    if not parts:
        raise ParameterError("concat_seeds needs at least one artifact, got none")
    first = parts[0].meta["parameters"]
    seen: list[int] = []
    for part in parts:
        params = part.meta["parameters"]
        diffs = sorted(k for k in set(first) | set(params) if k != "seeds" and first.get(k) != params.get(k))
        if diffs:
            raise ArtifactMismatch(
                f"artifact {part.meta.get('name')!r} differs from {parts[0].meta.get('name')!r} in "
                f"{diffs}; only artifacts of one grid at different seeds can be combined"
            )
        overlap = sorted(set(seen) & set(params["seeds"]))
        if overlap:
            raise ArtifactMismatch(
                f"artifact {part.meta.get('name')!r} repeats seeds {overlap}; the parts' seeds must be disjoint"
            )
        seen += list(params["seeds"])
    common = [c for c in parts[0].table.columns if all(c in p.table.columns for p in parts)]
    table = pd.concat([p.table[common] for p in parts], ignore_index=True)
    meta = {
        **parts[0].meta,
        "parameters": {**first, "seeds": seen},
        "columns": list(map(str, common)),
        "rows": int(len(table)),
        "parts": [p.meta for p in parts],
    }
    return Artifact(table=table, meta=meta)


def records(prefix: str, *, directory: str | os.PathLike | None = None) -> dict[str, dict[str, Any]]:
    """The committed JSON records ``<directory>/<prefix>*.json`` that are not table artifacts
    (e.g. benchmark records), name → content, sorted by name."""
    if not isinstance(prefix, str) or (prefix and not _NAME.match(prefix)):
        raise ParameterError(f"prefix={prefix!r} must match {_NAME.pattern}")
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(results_dir(directory).glob(f"{prefix}*.json")):
        if path.with_suffix(".csv").is_file():
            continue  # a table artifact's provenance: use load()
        out[path.stem] = json.loads(path.read_text())
    return out
