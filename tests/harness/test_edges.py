"""Tests for nlcl.harness.run.edges: every chapter safe at the edges of its declared parameters."""

from __future__ import annotations

from pathlib import Path

import pytest

from nlcl.core.validate import NonFiniteError, ParameterError
from nlcl.harness.claims.registry import ClaimsFailed
from nlcl.harness.run import edges
from nlcl.harness.run.notebook import chapters

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "fixtures" / "tiny-chapter.py"

DEPENDENT = """# %% tags=["parameters"]
profile: str = "ci"  # profile
seed: int = 0  # seed
device: str = "auto"  # device
d: int = 8  # a dimension
k: int = 4  # at most d
j: int = 3  # at most k
widths: list | None = None  # each at least d
mode: str = "a"  # a choice

# %%
import nlcl

run = nlcl.start(
    "dependent",
    globals(),
    spec={
        "d": {"range": [2, 64]},
        "k": {"range": [1, "d"]},
        "j": {"range": [1, "k"]},
        "widths": {"length": [2, 5], "items": {"type": "int", "range": ["d", 1000]}, "ci": [8, 16], "full": [8, 64]},
        "mode": {"choices": ["a", "b", "c"]},
    },
)
run.finish()
"""


def _cases(path, sizes=None):
    return {(c.parameter, c.end): c for c in edges.edge_cases(str(path), sizes or {}, ROOT)}


def test_edge_cases_take_each_parameter_to_each_end():
    cases = _cases(TINY)
    assert cases[("scale", "low")].value == 0.0 and cases[("scale", "high")].value == 10.0
    assert cases[("must_fail", "other")].value is True and cases[("make_nan", "other")].value is True
    assert cases[("seed", "high")].value == 2**31 - 1
    # a size is tried at its low end only: its high end only costs time
    assert cases[("n", "low")].value == 1 and ("n", "high") not in cases
    assert not any(p in ("profile", "device") for p, _ in cases)
    assert cases[(edges.BASELINE, "base")].values == {"profile": "ci"}
    # one parameter at a time, the others at the given small sizes
    for c in cases.values():
        assert c.values["profile"] == "ci"
        assert {k for k in c.values if k != "profile"} <= {c.parameter}


def test_the_small_sizes_alone_must_run_to_the_end():
    base = _cases(TINY)[(edges.BASELINE, "base")]
    assert edges.classify(base, ParameterError("n=3: too small"))[0] == "unclear"
    assert edges.run_case(base, ROOT).kind == "ran"


def test_edge_cases_move_the_parameters_whose_range_names_the_varied_one(tmp_path):
    path = tmp_path / "dependent.py"
    path.write_text(DEPENDENT)
    cases = _cases(path, {"widths": [8, 9]})
    low = cases[("d", "low")]
    assert low.value == 2 and low.values["k"] == 2  # k ≤ d moved down with d
    assert low.values["j"] == 2  # and j ≤ k with k
    high = cases[("d", "high")]
    assert high.value == 64 and high.values["widths"] == [64, 64]  # each width ≥ d moved up
    assert cases[("k", "high")].value == 8  # the bound named by k, at the other values
    assert cases[("widths", "low")].value == [8, 8]  # shortest length, each item at its low end
    assert ("widths", "high") not in cases  # a size
    every = edges.edge_cases(str(path), {"widths": [8, 9]}, ROOT)
    assert [c.value for c in every if c.parameter == "mode"] == ["b", "c"]  # each other choice


def test_edge_cases_reject_sizes_outside_the_declaration():
    with pytest.raises(ParameterError, match="n"):
        edges.edge_cases(str(TINY), {"n": 0}, ROOT)


def _case(parameter="lr"):
    return edges.EdgeCase("ch", parameter, "high", 1e6)


@pytest.mark.parametrize(
    ("exc", "kind"),
    [
        (None, "ran"),
        (ClaimsFailed("chapter 'ch': required claims failed: x"), "ran"),
        (NonFiniteError("the training diverged at lr=1000000.0 (loss is nan at step 3)"), "stopped"),
        (ParameterError("no run reached stage 2 with lr=1e+06"), "stopped"),
        (ParameterError("no run reached stage 2"), "unclear"),
        (ValueError("expected non-empty vector for x"), "crashed"),
    ],
)
def test_classify(exc, kind):
    if exc is not None:
        try:
            raise exc
        except Exception as e:  # keep a traceback, as a real run has
            exc = e
    got, ename, text = edges.classify(_case(), exc)
    assert got == kind
    if kind == "crashed":
        assert "Traceback" in text and "expected non-empty vector" in text
    outcome = edges.Outcome(_case(), got, text, ename)
    assert outcome.safe == (kind in ("ran", "stopped"))
    assert outcome.line().startswith(kind)


def test_run_case_executes_the_chapter_with_the_case_values():
    cases = _cases(TINY)
    ran = edges.run_case(cases[("scale", "high")], ROOT)
    assert ran.kind == "ran" and ran.cell is None and ran.seconds > 0
    failed = edges.run_case(cases[("must_fail", "other")], ROOT)
    assert failed.kind == "ran" and failed.ename == "ClaimsFailed" and failed.cell is not None


def test_run_case_stops_a_case_that_takes_too_long(tmp_path):
    path = tmp_path / "slow.py"
    path.write_text(DEPENDENT.replace("run.finish()", "import time\ntime.sleep(30)\nrun.finish()"))
    case = _cases(path, {"widths": [8, 9]})[("mode", "choice")]
    out = edges.run_case(case, ROOT, timeout=1)
    assert out.kind == "timeout" and not out.safe


def test_every_chapter_has_small_sizes_that_the_declaration_allows():
    sizes = edges.load_sizes(ROOT)
    assert set(sizes) == set(chapters(ROOT))
    for chapter, values in sizes.items():
        assert edges.edge_cases(chapter, values, ROOT), chapter


def test_main_reports_and_exits_1_on_an_unsafe_case(monkeypatch, capsys):
    bad = edges.Outcome(_case(), "crashed", "Traceback ...", "ValueError")
    good = edges.Outcome(_case("tau"), "ran")
    monkeypatch.setattr(edges, "check_chapters", lambda *a, **k: [good, bad])
    assert edges.main(["ch"]) == 1
    out = capsys.readouterr().out
    assert "2 cases, 1 safe, 1 not safe" in out and "crashed" in out


@pytest.fixture(scope="module")
def book_edges():
    gated = [c for c in chapters(ROOT) if c not in edges.load_not_gated(ROOT)]
    return edges.check_chapters(gated, workers=2, root=ROOT)


@pytest.mark.slow
@pytest.mark.parametrize("chapter", list(chapters(ROOT)))
def test_every_chapter_is_safe_at_the_edges_of_its_parameters(book_edges, chapter):
    """Issue 53, item 6: each parameter at each end either runs or stops with a sentence naming it.
    The cases of book/edges.yaml's known-unsafe entry are expected to fail, and only they: a case
    fixed since must leave the list."""
    why = edges.load_not_gated(ROOT).get(chapter)
    if why:
        pytest.skip(f"{chapter}: not gated yet: {why}")
    mine = [o for o in book_edges if o.case.chapter == chapter]
    assert mine, f"no edge case ran for {chapter}"
    known = edges.load_known(ROOT).get(chapter, {})
    bad = [o for o in mine if not o.safe and o.case.key not in known]
    assert not bad, f"{chapter}: {len(bad)} of {len(mine)} edge cases not safe:\n" + "\n".join(
        o.line() for o in bad
    )
    fixed = sorted(set(known) - {o.case.key for o in mine if not o.safe})
    assert not fixed, f"{chapter}: safe now, remove from {edges.EDGES_FILE}'s {edges.KNOWN_KEY}: {fixed}"


def test_not_gated_chapters_are_chapters_with_a_reason():
    for chapter, why in edges.load_not_gated(ROOT).items():
        assert chapter in chapters(ROOT) and len(why) > 20, chapter


def test_known_unsafe_cases_name_real_cases_with_a_reason():
    sizes = edges.load_sizes(ROOT)
    for chapter, cases in edges.load_known(ROOT).items():
        assert chapter in sizes, chapter
        keys = {c.key for c in edges.edge_cases(chapter, sizes[chapter], ROOT)}
        for key, why in cases.items():
            assert key in keys, f"{chapter}: {key} is not one of its edge cases"
            assert len(why) > 20, f"{chapter}: {key} needs a reason"


def test_a_known_slow_case_is_not_run_again(monkeypatch):
    monkeypatch.setattr(
        edges,
        "load_known",
        lambda root=None: {"tian-fig8-landscape": {"activation='tanh'": "slow: an example"}},
    )
    out = edges.check_chapter("tian-fig8-landscape", ROOT, only=["activation"])
    skipped = [o for o in out if o.kind == "skipped"]
    assert [o.case.key for o in skipped] == ["activation='tanh'"] and not skipped[0].safe


def test_check_chapter_runs_the_cases_of_one_chapter(monkeypatch):
    out = edges.check_chapter("tian-fig8-landscape", ROOT, only=["activation"])
    assert [o.case.parameter for o in out] == ["activation"] * 6 and all(o.safe for o in out)
    monkeypatch.setattr(edges, "load_sizes", lambda root=None: {})
    with pytest.raises(ValueError, match="no entry for chapter 'tian-fig8-landscape'"):
        edges.check_chapter("tian-fig8-landscape", ROOT)
