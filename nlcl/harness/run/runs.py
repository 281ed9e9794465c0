"""Run folders: every chapter run writes into a folder of its own, never into another run's.

``nlcl run`` creates ``runs/<chapter>/<UTC time>-<parameter hash>-<random>/`` and passes it to the
kernel (the injected variable ``nlcl_run_dir``); a plain papermill run without it gets a new folder
the same way from :func:`nlcl.start`. ``nlcl book`` uses ``_build/runs/<chapter>/``. A run folder
holds::

    run.json                 run id, chapter, status, parameters, profile, seed, times
    claims/<chapter>.json    the claims measured by this run
    provenance.json          the provenance record (written by ``run.finish()``)
    notebook.ipynb           the executed notebook (``nlcl run`` without ``-o``)
    log.txt                  what ``nlcl run`` printed, and the chapter's output with ``--log-output``
    kernel.log               the kernel process's own stderr

``status`` is ``running`` while the chapter runs, then ``complete``, ``failed`` or ``interrupted``
(a folder left ``running`` by a killed process is incomplete too). Standard library only.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import secrets
from pathlib import Path
from typing import Any

from nlcl.core.validate import ParameterError

__all__ = ["RUN_FILE", "runs_root", "run_id", "new_run_dir", "read_run", "update_run"]

RUN_FILE = "run.json"
STATUSES = ("running", "complete", "failed", "interrupted")


def runs_root(root: str | os.PathLike) -> Path:
    """``NLCL_RUNS_DIR`` (relative to the book's root if relative), else ``<root>/runs``."""
    env = os.environ.get("NLCL_RUNS_DIR")
    base = Path(env) if env else Path("runs")
    return (Path(root) / base).resolve() if not base.is_absolute() else base


def run_id(parameters: dict[str, Any]) -> str:
    """``20261123T161200-1a2b3c-9f8e``: UTC time, a hash of the parameters, a random suffix."""
    stamp = _dt.datetime.now(_dt.timezone.utc).strftime("%Y%m%dT%H%M%S")
    digest = hashlib.sha1(json.dumps(parameters, sort_keys=True, default=str).encode()).hexdigest()[:6]
    return f"{stamp}-{digest}-{secrets.token_hex(2)}"


def new_run_dir(root: str | os.PathLike, chapter: str, parameters: dict[str, Any]) -> Path:
    """Create a new, empty run folder ``<runs root>/<chapter>/<run id>``; one-line error if impossible."""
    base = runs_root(root) / chapter
    for _ in range(5):
        path = base / run_id(parameters)
        try:
            path.mkdir(parents=True)
            return path
        except FileExistsError:
            continue
        except OSError as exc:
            raise ParameterError(f"cannot create the run folder {path}: {exc.strerror or exc}") from None
    raise ParameterError(f"cannot create a new run folder under {base}")  # pragma: no cover


def read_run(path: str | os.PathLike) -> dict[str, Any]:
    """The run record of a run folder (``{}`` if the kernel never wrote one)."""
    file = Path(path) / RUN_FILE
    try:
        return json.loads(file.read_text())
    except (OSError, ValueError):
        return {}


def update_run(path: str | os.PathLike, **fields: Any) -> dict[str, Any]:
    """Merge ``fields`` into the run record and write it atomically; return the record."""
    path = Path(path)
    record = {**read_run(path), **fields}
    if "status" in fields and fields["status"] not in STATUSES:
        raise ParameterError(f"status={fields['status']!r} is not allowed; choose one of: {STATUSES}")
    record.setdefault("run_id", path.name)
    tmp = path / (RUN_FILE + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record, indent=2, default=str) + "\n")
    tmp.replace(path / RUN_FILE)
    return record
