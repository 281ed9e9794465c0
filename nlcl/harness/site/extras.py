"""What the staged book gets for its readers before jupyter-book builds it (one call from
:func:`nlcl.harness.site.build.build_book`):

* the site's static files (``_static/``: the dashboard script and styles) copied into the staging
  tree, where jupyter-book loads every ``*.js`` and ``*.css`` on every page;
* per chapter: the "Re-run this chapter" box, the Colab set-up cell and the ``.py`` download
  (:mod:`nlcl.harness.site.rerun`), and tidy outputs (:mod:`nlcl.harness.site.outputs`);
* the claims dashboard on the reproducibility page (:mod:`nlcl.harness.site.dashboard`), with each
  claim's paper-scale verdict from the committed full-profile records
  (``results/claims-full/<chapter>.json``, base seed 0) and its pass count at held-out full seeds
  (``results/held-out-full/``) beside its verdict in this build.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from nlcl.harness.records import held_out
from nlcl.harness.records.paper_scale import FULL_DIR, attach_held_out, held_out_counts, load_full_records
from nlcl.harness.site import dashboard, outputs, rerun
from nlcl.harness.site.report import merge_full

__all__ = ["add_site_extras"]


def add_site_extras(
    root: str | Path,
    staging: str | Path,
    chapters: Mapping[str, Path],
    records: Sequence[Mapping[str, Any]],
    timings: Mapping[str, Mapping[str, Any]],
) -> dict[str, int]:
    """Add the readers' extras to a staging tree whose chapters were executed.

    ``chapters`` maps the executed chapter ids to their ``book/*.py`` sources (TOC order); each
    has its executed notebook at the same path under ``staging`` with suffix ``.ipynb``. Returns
    the claims per status (from the dashboard).
    """
    root, staging = Path(root), Path(staging)
    static = staging / "_static"
    if (root / "_static").is_dir():
        shutil.copytree(root / "_static", static, dirs_exist_ok=True)
    for source in chapters.values():
        notebook = staging / source.resolve().relative_to(root.resolve()).with_suffix(".ipynb")
        if notebook.is_file():
            rerun.stage_chapter(notebook, source, root)
            outputs.tidy_outputs(notebook)
    page = staging / "book" / "reproducibility.md"
    if not page.is_file():
        return {}
    full_dir = root / FULL_DIR
    if full_dir.is_dir():  # the paper-scale verdicts, as the report shows them
        records = merge_full([dict(r) for r in records], load_full_records(full_dir))
    held = held_out.evidence(root / held_out.HELD_OUT_DIR, root)
    records = held_out.attach(records, held)  # the verdicts of record, as the headline counts them
    records = attach_held_out(records, held_out_counts(root / held_out.HELD_OUT_FULL_DIR, root))
    return dashboard.write_dashboard(records, timings, page, static, list(chapters))
