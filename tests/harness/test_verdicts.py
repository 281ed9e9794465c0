import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from nlcl.core.validate import ParameterError
from nlcl.harness.claims import verdicts
from nlcl.harness.claims.verdicts import (
    NotReproduced,
    Revision,
    check_on_mean,
    check_on_pooled,
    holds_on_fraction,
    is_finite,
    mean_minus_2se_above,
    mean_plus_2se_below,
    normalize_not_reproduced,
    normalize_revisions,
    now_date,
    seed_summary,
)


def test_is_finite_nested():
    assert is_finite(1.0) and is_finite([1, 2.5, {"a": 3.0}]) and is_finite("x") and is_finite(None)
    assert not is_finite(float("nan")) and not is_finite([1.0, [float("inf")]])
    assert not is_finite({"a": -math.inf}) and is_finite(True)


def test_normalize_not_reproduced_forms():
    assert normalize_not_reproduced(None) is None
    nr = normalize_not_reproduced("why")
    assert nr.profiles == ("ci",) and nr.why == "why"
    assert normalize_not_reproduced({"full": "why"}).profiles == ("full",)
    same = NotReproduced("w", profiles=("ci", "full"))
    assert normalize_not_reproduced(same) is same
    with pytest.raises(ParameterError, match="non-empty"):
        normalize_not_reproduced(" ")


def test_not_reproduced_applies_and_scope():
    nr = NotReproduced("w", setting={"n": 3}, expected=lambda m: m > 1)
    assert nr.applies("ci", {"n": 3}, 2) and not nr.applies("full", {"n": 3}, 2)
    assert not nr.applies("ci", {"n": 4}, 2) and not nr.applies("ci", {}, 2)
    assert not nr.applies("ci", {"n": 3}, 0) and not nr.applies("ci", {"n": 3}, "x")
    assert nr.scope() == "profile ci, n=3, when the measured value looks as explained"


def test_revisions():
    assert normalize_revisions(None) == []
    out = normalize_revisions([Revision("a", "b", "r"), {"from": 1, "to": 2, "reason": "q"}])
    assert out == [
        {"from": "a", "to": "b", "reason": "r", "date": ""},
        {"from": "1", "to": "2", "reason": "q", "date": ""},
    ]


def test_seed_rules_and_summary():
    assert holds_on_fraction(0.5).decide([1, 2], [True, False])
    assert not holds_on_fraction(1.0).decide([1, 2], [True, False])
    assert mean_minus_2se_above(0.0).decide([1.0, 1.1, 0.9], [True] * 3)
    assert not mean_plus_2se_below(1.0).decide([0.5, 1.5], [True, False])
    assert check_on_mean().on_mean and isinstance(holds_on_fraction(), verdicts.SeedRule)
    assert check_on_pooled().on_mean and "seed-averaged" in check_on_pooled().description
    s = seed_summary([0.0, 0.02], [False, True], check_on_pooled(), 0.0, center=0.005)
    assert s["margin"] == 0.005 and s["margin_within_spread"] and s["mean"] == 0.01
    s = seed_summary(["relu", "x"], [True, False], check_on_pooled(), "relu")
    assert s["mean"] is None and s["holds_fraction"] == 0.5 and "margin" not in s
    s = seed_summary([1.0, 3.0], [True, False], holds_on_fraction(0.5), 2.5)
    assert s["n"] == 2 and s["mean"] == 2.0 and s["holds_fraction"] == 0.5
    assert s["std"] == pytest.approx(math.sqrt(2)) and s["margin"] == -0.5 and s["margin_within_spread"]
    assert "margin" not in seed_summary([1.0, 2.0], [True, True], holds_on_fraction(), "x")
    assert len(now_date()) == 10 and verdicts.KINDS == ("reproduction", "check")


@given(st.lists(st.floats(-1e3, 1e3), min_size=2, max_size=20))
def test_seed_summary_mean_is_between_extremes(values):
    s = seed_summary(values, [True] * len(values), holds_on_fraction(), 0.0)
    assert min(values) - 1e-9 <= s["mean"] <= max(values) + 1e-9 and s["std"] >= 0


def test_margin_of_an_interval_is_the_distance_to_the_nearest_bound():
    """Issue 26 §4: for a two-sided check the margin is measured to the nearest bound, not to the
    interval's centre: a value at the centre (lemma5-residual-rate's −0.50002 in [−0.7, −0.3]) is
    not flagged, one near an edge with the same spread is."""
    rule = holds_on_fraction()
    centre = seed_summary([-0.52, -0.48, -0.50006], [True] * 3, rule, (-0.7, -0.3))
    assert centre["mean"] == pytest.approx(-0.50002) and centre["std"] == pytest.approx(0.02, rel=1e-3)
    assert centre["margin"] == pytest.approx(0.19998) and not centre["margin_within_spread"]
    edge = seed_summary([-0.32, -0.28, -0.30], [True, False, True], rule, (-0.7, -0.3))
    assert edge["margin"] == pytest.approx(0.0) and edge["margin_within_spread"]
    below = seed_summary([-0.74, -0.70], [False, True], rule, (-0.7, -0.3))
    assert below["margin"] == pytest.approx(-0.02) and below["margin_within_spread"]
    # one bound: the threshold itself; bounds given in either order
    assert seed_summary([1.0, 3.0], [True, False], rule, (2.5,))["margin"] == -0.5
    assert seed_summary([0.0, 1.0], [True, True], rule, (1.0, 0.0))["margin"] == 0.5
    assert "margin" not in seed_summary([0.0, 1.0], [True, True], rule, ("a", "b"))


def test_not_gated_note_names_the_outcome_and_where_the_claim_is_decided():
    note = verdicts.not_gated_note("fail")
    assert "gave fail" in note and verdicts.CONCURRENT_ENV in note and "nlcl book --jobs 1" in note
    assert verdicts.NOT_GATED == "not-gated"
    assert verdicts.concurrent_run({"NLCL_CONCURRENT": "1"}) and not verdicts.concurrent_run(
        {"NLCL_CONCURRENT": "0"}
    )


def test_computed_label_names_seeds_joined_with_this_run(tmp_path, capsys):
    from nlcl.harness.claims.display import show_claim
    from nlcl.harness.claims.registry import ClaimRegistry, at_most

    assert (
        verdicts.computed_label(None, ["a.json", "b.json"])
        == "this run, joined with seeds read from a.json, b.json"
    )
    for bad in ([], [""], 3):
        with pytest.raises(ParameterError, match="joined_with=.* must name the committed artifact"):
            verdicts.computed_label(None, bad)
    with pytest.raises(ParameterError, match="comes without read_from"):
        verdicts.computed_label("r.json", "a.json")
    reg = ClaimRegistry("g", profile="full", device="cpu", commit="c", directory=tmp_path, glue=False)
    rec = reg.declare("x", source="s", statement="s", check=at_most(1.0)).measure(
        0.5, per_seed=[0.4, 0.6, 0.5], joined_with=["results/extra.json"]
    )
    assert rec["computed"] == "this run, joined with seeds read from results/extra.json"
    show_claim(rec)
    out = capsys.readouterr().out
    assert "Computed in this run, joined with seeds read from results/extra.json" in out
    assert "Not computed in this run" not in out
