"""What a reader reads on every chapter's page (issue 51): the code behind each claim, the papers
cited, prose without the project's history, exercises at the end (rules: nlcl.harness.site.page)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from nlcl.harness.site import page

ROOT = Path(__file__).resolve().parents[1]
CHAPTERS = sorted((ROOT / "book").glob("*.py"))
PAPER_KEYS = {
    "tian": "tian2023nonlinearity",
    "esser": "esser2024representation",
    "renli": "renli2023importance",
}


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_every_section_shows_the_code_that_computes_its_claims(path):
    """Every nlcl function or class a section calls (data, model, loss, update, measurement, figure)
    is shown from the package source by an nlcl-source directive, there or earlier; every shown
    name resolves."""
    problems = page.missing_sources(path)
    assert not problems, "\n".join(problems)
    assert any(s.claims for s in page.sections(path)), f"{path.stem} measures no claim"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_prose_carries_no_history(path):
    """No dates, hash-like tokens, 'stop N', 'issue N', run ids or seed stories in chapter prose:
    that history lives in the ledger's revision log and on the reproducibility page."""
    problems = page.history_problems(path)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_cites_its_paper_first_and_closes_with_references(path):
    parts = page.sections(path)
    key = PAPER_KEYS[path.stem.split("-")[0]]
    first = parts[0].markdown[0] if parts[0].markdown else ""
    paragraphs = [p for p in re.split(r"\n\s*\n", first) if p.strip() and not p.lstrip().startswith("# ")]
    assert paragraphs and f"`{key}`" in paragraphs[0], (
        f"{path.stem}: the first paragraph cites {{cite:t}}`{key}`"
    )
    assert parts[-1].title == "References", f"{path.stem}: the last section is '## References'"
    assert "{cite" in "\n".join(parts[-1].markdown), f"{path.stem}: the references section cites its works"


@pytest.mark.parametrize("path", CHAPTERS, ids=[p.stem for p in CHAPTERS])
def test_chapter_ends_with_exercises(path):
    """A 'Try it yourself' section of 2-3 exercises: each a parameter change (nlcl run ... -p or
    papermill) with a collapsed answer."""
    parts = {s.title: s for s in page.sections(path)}
    assert "Try it yourself" in parts, f"{path.stem}: no '## Try it yourself' section"
    from nlcl.harness.records import exercises

    runs = exercises.exercises(path)  # refuses a command that is not `nlcl run <chapter> -p NAME VALUE ...`
    assert 2 <= len(runs) <= 3 and all(e["parameters"] for e in runs), (
        f"{path.stem}: {len(runs)} exercises (`nlcl run {path.stem} -p ...`)"
    )
    unanswered = [e["command"] for e in runs if "{dropdown}" not in e["answer"]]
    assert not unanswered, f"{path.stem}: exercises without a collapsed answer: {unanswered}"


def test_the_bibliography_lists_the_three_papers_and_the_released_code():
    bib = (ROOT / "book" / "references.bib").read_text()
    for key in (*PAPER_KEYS.values(), "luckmatters"):
        assert re.search(r"@\w+\{" + key + ",", bib), key
    assert "arxiv.org/abs/2206.01342" in bib or "2206.01342" in bib
    toc = (ROOT / "_toc.yml").read_text()
    assert "book/references" in toc and "book/appendix-renli-setup" in toc


def test_no_chapter_points_at_files_outside_the_book():
    """A reader of the site cannot open shared/: the Ren-Li setup is the appendix page."""
    for path in CHAPTERS:
        assert "shared/papers" not in path.read_text(), path.stem


def test_every_exercise_answer_is_the_recorded_measurement():
    """Each chapter's exercises ran at the committed code (results/exercises/, current), and every
    claim value an answer quotes is the recorded one at the precision printed."""
    from nlcl.harness.records import exercises

    stale = exercises.stale_exercises(ROOT)
    assert not stale, (
        "stale exercise records (python -m nlcl.harness.records.exercises run CHAPTER):\n"
        + "\n".join(f"  {c}: {w}" for c, w in sorted(stale.items()))
    )
    records = exercises.load(ROOT)
    problems = [
        p for path in CHAPTERS for p in exercises.answer_problems(path.stem, records[path.stem], path)
    ]
    assert not problems, "\n".join(problems)
