"""Readable outputs for the published chapters: what a reader should not have to scroll past.

:func:`tidy_outputs` rewrites an executed chapter notebook at staging time (``nlcl book``):

* progress-bar residue (tqdm lines, carriage-return redraws, ANSI escapes) is removed from every
  text stream: a progress bar is for the person waiting, not for the page;
* what remains on **stderr** (warnings, log messages) is shown once, in a collapsed note in the
  cell that raised it: "Warnings and messages (n)". A message already shown earlier on the page
  is not repeated;
* a long printed output (more than :data:`LONG_OUTPUT` lines on stdout) is collapsed into a
  note "Printed output (n lines)"; chapters should print summaries and display tables as
  DataFrames (HTML tables), and the browser test flags long plain-text results.
"""

from __future__ import annotations

import html
import re
from pathlib import Path
from typing import Any

import nbformat

__all__ = [
    "LONG_OUTPUT",
    "is_progress_line",
    "clean_stream",
    "tidy_outputs",
]

#: Printed outputs longer than this (in lines) are collapsed.
LONG_OUTPUT = 25
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
_PROGRESS = (
    re.compile(r"\d+%\|[^|]*\|"),  # tqdm bar: " 42%|████      | 42/100"
    re.compile(r"\d+(\.\d+)?\s?(\w+/s|s/\w+)\]\s*$"),  # tqdm rate: "[00:01<00:02, 10.9it/s]"
    re.compile(r"\[\d\d:\d\d(<|\]).*\]\s*$"),  # tqdm elapsed/remaining
)


def is_progress_line(line: str) -> bool:
    """Whether a printed line is progress-bar residue (tqdm's bar, rate or time stamps)."""
    return any(p.search(line) for p in _PROGRESS)


def clean_stream(text: str) -> str:
    """Remove ANSI escapes and progress-bar lines (including carriage-return redraws)."""
    text = _ANSI.sub("", text)
    lines = []
    for raw in text.split("\n"):
        # A line redrawn with "\r" shows only its last state; progress bars are dropped entirely.
        parts = raw.split("\r")
        if not any(p.strip() for p in parts):
            lines.append("")
            continue
        kept = [p for p in parts if p.strip() and not is_progress_line(p)]
        if kept:
            lines.append(kept[-1])
    out = "\n".join(lines)
    return re.sub(r"\n{3,}", "\n\n", out).strip("\n") + ("\n" if out.strip() else "")


def _note(summary: str, body: str, css: str) -> nbformat.NotebookNode:
    escaped = html.escape(body.rstrip("\n"))
    return nbformat.v4.new_output(
        "display_data",
        data={
            "text/html": f'<details class="{css}"><summary>{html.escape(summary)}</summary><pre>{escaped}</pre></details>',
            "text/plain": f"{summary}\n{body}",
        },
    )


def tidy_outputs(notebook: str | Path) -> dict[str, int]:
    """Tidy the text outputs of an executed notebook in place (see the module docstring).

    Returns counts: ``progress_lines`` removed, ``notes`` (stderr notes added), ``repeated``
    (stderr lines dropped as already shown), ``collapsed`` (long stdout outputs collapsed).
    """
    path = Path(notebook)
    nb = nbformat.read(str(path), as_version=4)
    seen: set[str] = set()
    counts = {"progress_lines": 0, "notes": 0, "repeated": 0, "collapsed": 0}
    for cell in nb.cells:
        if cell.cell_type != "code" or not cell.get("outputs"):
            continue
        outputs: list[Any] = []
        messages: list[str] = []
        for out in cell.outputs:
            if out.get("output_type") != "stream":
                outputs.append(out)
                continue
            before = len([line for line in re.split(r"[\r\n]", _ANSI.sub("", out.text)) if line.strip()])
            text = clean_stream(out.text)
            after = len([line for line in text.splitlines() if line.strip()])
            counts["progress_lines"] += max(0, before - after)
            if out.name == "stderr":
                for line in text.splitlines():
                    key = line.strip()
                    if not key:
                        continue
                    if key in seen:
                        counts["repeated"] += 1
                        continue
                    seen.add(key)
                    messages.append(line)
            elif text.strip():
                out.text = text
                outputs.append(out)
        if messages:
            n = len(messages)
            outputs.append(_note(f"Warnings and messages ({n})", "\n".join(messages), "nlcl-warnings"))
            counts["notes"] += 1
        for i, out in enumerate(outputs):
            if out.get("output_type") == "stream" and len(out.text.splitlines()) > LONG_OUTPUT:
                outputs[i] = _note(
                    f"Printed output ({len(out.text.splitlines())} lines)", out.text, "nlcl-long-output"
                )
                counts["collapsed"] += 1
        cell.outputs = outputs
    nbformat.write(nb, str(path))
    return counts
