"""The claims ledger (nlcl.harness.claims.ledger): schema errors, checks as data, and the round trip
(a claim declared by a ledger gives exactly the record of the same claim declared with run.expect)."""

import json
import textwrap

import pytest

import nlcl
from nlcl.core.validate import ParameterError
from nlcl.harness.claims import checks, ledger, verdicts
from nlcl.harness.claims.ledger import LedgerError, MissingDiagnostic
from nlcl.harness.claims.ledger_schema import CHECK_KINDS, SCHEMA, SEED_RULES
from nlcl.harness.claims.registry import (
    NotReproduced,
    Revision,
    approx,
    at_least,
    at_most,
    between,
    exactly,
    greater_than,
    holds_on_fraction,
    is_true,
    less_than,
    mean_minus_2se_above,
)


@pytest.fixture()
def runs_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("NLCL_RUNS_DIR", str(tmp_path / "runs"))
    return tmp_path / "runs"


def write(tmp_path, text, chapter="unit"):
    path = tmp_path / "book" / "claims" / f"{chapter}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


ONE = """\
chapter: unit
claims:
  - id: c1
    basis: dynamical
    source: Paper, Fig. 1
    statement: One claim.
    check: {at_least: 8}
"""


def test_a_minimal_ledger_reads(tmp_path):
    led = ledger.read_ledger(write(tmp_path, ONE))
    assert led.ids == ["c1"] and led.chapter == "unit" and led.label == "book/claims/unit.yaml"
    assert led.claims[0]["check"] == {"at_least": 8} and led.values == {} and led.diagnostics == {}


@pytest.mark.parametrize(
    "edit, message",
    [
        (
            ("check: {at_least: 8}", "check: {at_leest: 8}"),
            "claim 'c1': field check: .*at_leest.*a check is one",
        ),
        (("check: {at_least: 8}", "check: {at_least: eight}"), "claim 'c1': field check.at_least: 'eight'"),
        (("check: {at_least: 8}", "check: {at_least: 8, at_most: 9}"), "claim 'c1': field check: .*too many"),
        (("check: {at_least: 8}", "check: {approx: {value: 1.0}}"), "claim 'c1': field check.approx"),
        (("    statement: One claim.\n", ""), "claim 'c1': 'statement' is a required property"),
        (("source: Paper, Fig. 1", "source: Paper\n    required: maybe"), "claim 'c1': field required"),
        (("source: Paper, Fig. 1", "source: P\n    kind: replication"), "claim 'c1': field kind"),
        (("source: Paper, Fig. 1", "source: P\n    profiles: [ci, gpu]"), "claim 'c1': field profiles.1"),
        (("source: Paper, Fig. 1", "source: P\n    decide: {holds_on_fraction: 1.5}"), "field decide"),
        (("source: Paper, Fig. 1", "source: P\n    chek: 1"), "claim 'c1': Additional properties .*'chek'"),
        (
            ("source: Paper, Fig. 1", "source: P\n    revised: [{from: 8, to: 7, reason: seen, date: May}]"),
            "claim 'c1': field revised.0.date",
        ),
        (
            ("source: Paper, Fig. 1", "source: P\n    not_reproduced: {why: x, expected: {diagnostic: d}}"),
            "field not_reproduced.expected.0: give exactly one check",
        ),
        (("chapter: unit", "chapter: other"), "field chapter: 'other' is not the chapter 'unit'"),
        (
            ("check: {at_least: 8}", "check: {between: [2, 1]}"),
            "claim 'c1': field check: between.*low must be",
        ),
        (
            ("    basis: dynamical\n", ""),
            "claim 'c1': field basis: a reproduction states its basis, one of exact, dynamical, statistical",
        ),
        (("basis: dynamical", "basis: empirical"), "claim 'c1': field basis: 'empirical' is not one of"),
        (
            ("source: Paper, Fig. 1", "source: P\n    kind: check"),
            "claim 'c1': field basis: a check has no basis",
        ),
    ],
)
def test_errors_name_the_file_the_claim_and_the_field(tmp_path, edit, message):
    path = write(tmp_path, ONE.replace(*edit))
    with pytest.raises(LedgerError, match=message) as err:
        ledger.read_ledger(path)
    assert "book/claims/unit.yaml" in str(err.value)


def test_a_reproduction_states_its_basis_and_the_record_carries_it(runs_dir, tmp_path):
    """Every reproduction of a ledger says what it rests on (exact, dynamical, statistical); the
    basis reaches the claim and its record; a check has none, and inline a bad basis is refused."""
    from nlcl.harness.claims.registry import ClaimRegistry

    path = write(tmp_path, ONE.replace("basis: dynamical", "basis: exact"))
    assert ledger.read_ledger(path).claims[0]["basis"] == "exact"
    registry = ClaimRegistry(
        "unit", profile="ci", device="cpu", commit="abc", directory=tmp_path, glue=False, display=False
    )
    claims = ledger.declare_ledger(
        ledger.read_ledger(path), {}, registry, {}, paper_setting=True, at_paper=lambda *n: True
    )
    assert claims["c1"].basis == "exact" and claims["c1"].measure(9)["basis"] == "exact"
    inline = ClaimRegistry(
        "other", profile="ci", device="cpu", commit="abc", directory=tmp_path, glue=False, display=False
    )
    check = inline.declare("k", source="s", statement="t", check=at_least(1), kind="check")
    assert check.measure(2)["basis"] is None
    assert inline.declare("u", source="s", statement="t", check=at_least(1)).measure(2)["basis"] is None
    with pytest.raises(ParameterError, match=r"basis='empirical'; allowed: \('exact', 'dynamical'"):
        inline.declare("b", source="s", statement="t", check=at_least(1), basis="empirical")
    with pytest.raises(ParameterError, match="a check has no basis"):
        inline.declare("c", source="s", statement="t", check=at_least(1), kind="check", basis="exact")


def test_ledger_level_errors(tmp_path):
    twice = ONE + ONE.split("claims:\n", 1)[1]
    with pytest.raises(LedgerError, match="claim 'c1': the id is declared twice"):
        ledger.read_ledger(write(tmp_path, twice))
    with pytest.raises(LedgerError, match="line 8: duplicate key 'check'"):
        ledger.read_ledger(write(tmp_path, ONE + "    check: {at_most: 1}\n"))
    unused = ONE.replace("claims:", "values: {v: a value}\ndiagnostics: {d: a diagnostic}\nclaims:")
    with pytest.raises(
        LedgerError, match="(?s)'v' is referenced by no claim.*'d' is tested by no prediction"
    ):
        ledger.read_ledger(write(tmp_path, unused))
    with pytest.raises(LedgerError, match="'w' is referenced but not listed"):
        ledger.read_ledger(write(tmp_path, ONE.replace("{at_least: 8}", "{at_least: {ref: w}}")))
    with pytest.raises(LedgerError, match="not valid YAML"):
        ledger.read_ledger(write(tmp_path, "chapter: [unit"))
    with pytest.raises(LedgerError, match="no such ledger"):
        ledger.read_ledger(tmp_path / "missing.yaml")


def test_yaml_numbers_and_dates_are_read_as_written(tmp_path):
    text = ONE.replace("{at_least: 8}", "{approx: {value: 1.0, rtol: 1e-3}}")
    text += "    revised: [{from: 0.5, to: 1e-3, reason: a threshold seen, date: 2026-01-02}]\n"
    claim = ledger.read_ledger(write(tmp_path, text)).claims[0]
    assert claim["check"]["approx"]["rtol"] == 1e-3 and claim["revised"][0]["date"] == "2026-01-02"


@pytest.mark.parametrize(
    "spec, check",
    [
        ({"at_least": 8}, at_least(8)),
        ({"at_most": {"ref": "x"}}, at_most(0.25)),
        ({"greater_than": 0}, greater_than(0)),
        ({"less_than": 1.5}, less_than(1.5)),
        ({"exactly": "relu"}, exactly("relu")),
        ({"exactly": 2}, exactly(2)),
        ({"between": [0.75, {"ref": "x"}]}, between(0.75, 0.25 + 1)),
        ({"approx": {"value": 1.0, "rtol": 0.05}}, approx(1.0, rtol=0.05)),
        ({"approx": {"value": -0.5, "atol": 0.1, "rtol": 0.01}}, approx(-0.5, atol=0.1, rtol=0.01)),
        ({"is_true": True}, is_true()),
    ],
)
def test_make_check_gives_the_constructors_checks(spec, check):
    values = {"x": 0.25} if "between" not in spec else {"x": 1.25}
    made = ledger.make_check(spec, values)
    assert (made.description, made.expected, made.bounds) == (check.description, check.expected, check.bounds)
    for probe in (0, 0.3, 1.0, 1.2, 2, 8, 9, "relu", True):
        try:
            assert made(probe) == check(probe)
        except ParameterError:
            with pytest.raises(ParameterError):
                check(probe)
    assert set(CHECK_KINDS) == {k for k in SCHEMA["$defs"]["check"]["properties"]}
    assert all(hasattr(checks, k) for k in CHECK_KINDS)


def test_make_rule_gives_the_seed_rules():
    assert all(hasattr(verdicts, r) for r in SEED_RULES)
    assert ledger.make_rule(None, {}) is None
    assert ledger.make_rule("check_on_mean", {}).description == verdicts.check_on_mean().description
    assert ledger.make_rule("check_on_pooled", {}).on_mean
    rule = ledger.make_rule({"holds_on_fraction": 1.0}, {})
    assert rule.description == holds_on_fraction(1.0).description
    rule = ledger.make_rule({"mean_plus_2se_below": {"ref": "t"}}, {"t": 1.0})
    assert rule.description == verdicts.mean_plus_2se_below(1.0).description
    with pytest.raises(LedgerError, match=r"pass it to run.show_ledger\(t=...\)"):
        ledger.make_rule({"mean_minus_2se_above": {"ref": "t"}}, {})


# ---------------------------------------------------------------------------------------------
# The round trip: one chapter's claims declared by a ledger, and the same declared inline.
# ---------------------------------------------------------------------------------------------

FULL = """\
chapter: unit
values:
  tol: the tolerance of c2
  scale: the upper end of c3's interval
  c6_required: whether c6 is required
diagnostics:
  slope: the slope the explanation of c5 predicts
defaults:
  required: paper_setting
claims:
  - id: c1
    basis: exact
    source: Paper, Fig. 1
    statement: "With {act}, at least {n} maxima."
    check: {at_least: 8}
    paper: "≥ 8"
  - id: c2
    basis: dynamical
    source: Paper, Eq. 3
    statement: The ratio is one.
    check: {approx: {value: 1.0, atol: {ref: tol}}}
    decide: {holds_on_fraction: 1.0}
    revised:
      - {from: "1 ± 0.05", to: "1 ± 0.1", reason: the ci grid is coarser, date: "2026-01-02"}
  - id: c3
    source: Paper, Fig. 2
    statement: A pooled winner.
    check: {between: [0.5, {ref: scale}]}
    decide: check_on_pooled
    kind: check
  - id: c4
    basis: statistical
    source: Paper, Fig. 3
    statement: The gap is positive.
    check: {greater_than: 0}
    decide: {mean_minus_2se_above: 0.0}
    profiles: [full]
  - id: c5
    basis: dynamical
    source: Paper, Fig. 4
    statement: Steeper than a half.
    check: {less_than: -0.5}
    not_reproduced:
      why: the ci run is too short for the asymptote
      evidence: the printed slope
      profiles: [ci]
      setting: {act: relu}
      expected: [{between: [-0.4, -0.1]}, {diagnostic: slope, at_most: 1.25}]
  - id: c6
    basis: statistical
    source: Paper, Fig. 5
    statement: A timing claim.
    check: {is_true: true}
    required: {ref: c6_required}
    timing: true
  - id: c7
    basis: dynamical
    source: Paper, Tab. 1
    statement: The name of the winner.
    check: {exactly: relu}
    required: false
"""


def inline(run, slope):
    """FULL, declared with run.expect."""
    diag = {"slope": slope}
    paper = run.paper_setting
    return [
        run.expect(
            "c1",
            basis="exact",
            source="Paper, Fig. 1",
            statement=f"With {run.params.act}, at least {run.params.n} maxima.",
            check=at_least(8),
            paper="≥ 8",
            required=paper,
        ),
        run.expect(
            "c2",
            basis="dynamical",
            source="Paper, Eq. 3",
            statement="The ratio is one.",
            check=approx(1.0, atol=0.1),
            decide=holds_on_fraction(1.0),
            required=paper,
            revised=[
                Revision(from_="1 ± 0.05", to="1 ± 0.1", reason="the ci grid is coarser", date="2026-01-02")
            ],
        ),
        run.expect(
            "c3",
            source="Paper, Fig. 2",
            statement="A pooled winner.",
            check=between(0.5, 2.0),
            decide=verdicts.check_on_pooled(),
            kind="check",
            required=paper,
        ),
        run.expect(
            "c4",
            basis="statistical",
            source="Paper, Fig. 3",
            statement="The gap is positive.",
            check=greater_than(0),
            decide=mean_minus_2se_above(0.0),
            profiles=("full",),
            required=paper,
        ),
        run.expect(
            "c5",
            basis="dynamical",
            source="Paper, Fig. 4",
            statement="Steeper than a half.",
            check=less_than(-0.5),
            required=paper,
            not_reproduced=NotReproduced(
                why="the ci run is too short for the asymptote",
                evidence="the printed slope",
                profiles=("ci",),
                setting={"act": "relu"},
                expected=lambda m: -0.4 <= m <= -0.1 and diag["slope"] <= 1.25,
                diagnostics=("slope",),
                band=lambda m: -0.4 <= m <= -0.1,
            ),
        ),
        run.expect(
            "c6",
            basis="statistical",
            source="Paper, Fig. 5",
            statement="A timing claim.",
            check=is_true(),
            required=True,
            timing=True,
        ),
        run.expect(
            "c7",
            basis="dynamical",
            source="Paper, Tab. 1",
            statement="The name of the winner.",
            check=exactly("relu"),
            required=False,
        ),
    ]


def measure(claims):
    c1, c2, c3, c4, c5, c6, c7 = claims
    c1.measure(9)
    c2.measure_seeds([1.02, 0.97, 1.05])
    c3.measure(1.2, per_seed=[1.1, 1.3, 2.5])
    c4.measure_seeds([0.2, 0.3, 0.25])
    c5.measure(-0.2)
    c6.measure(True)
    c7.measure("relu")


@pytest.mark.parametrize("slope", [1.0, 2.0])  # the prediction holds: not reproduced; it does not: fail
def test_a_ledger_claim_gives_the_record_of_the_same_run_expect(runs_dir, tmp_path, slope):
    path = write(tmp_path, FULL)
    params = {"act": "relu", "n": 8}
    a = nlcl.start("unit", device="cpu", params=params, run_dir=tmp_path / "a")
    claims = inline(a, slope)
    a.diagnostic("slope", slope)
    measure(claims)
    b = nlcl.start("unit", device="cpu", params=params, run_dir=tmp_path / "b")
    b.show_ledger(ledger=path, tol=0.1, scale=2.0, c6_required=True)
    b.diagnostic("slope", slope)
    measure([b.claim(f"c{i}") for i in range(1, 8)])
    ra, rb = (json.loads((r.run_dir / "claims" / "unit.json").read_text()) for r in (a, b))
    assert [r["id"] for r in ra] == [r["id"] for r in rb] == [f"c{i}" for i in range(1, 8)]
    for x, y in zip(ra, rb):
        assert set(x) == set(y), x["id"]
        for name in set(x) - {"time", "run_id"}:
            assert x[name] == y[name], f"{x['id']}: field {name}: {x[name]!r} != {y[name]!r}"
    status = {r["id"]: r["status"] for r in rb}
    assert status["c5"] == ("not-reproduced" if slope <= 1.25 else "fail")
    assert rb[0]["statement"] == "With relu, at least 8 maxima." and not rb[3]["required"]
    assert rb[1]["revised"][0]["from"] == "1 ± 0.05" and rb[2]["seeds"]["pooled"]


def test_show_ledger_shows_the_table_before_any_measurement(runs_dir, tmp_path, capsys):
    run = nlcl.start("unit", device="cpu", params={"act": "relu", "n": 8}, run_dir=tmp_path / "r")
    run.show_ledger(ledger=write(tmp_path, FULL), tol=0.1, scale=2.0, c6_required=False)
    out = capsys.readouterr().out
    assert "Declared before anything is measured" in out and "<code>book/claims/unit.yaml</code>" in out
    assert out.lstrip().startswith('<details class="nlcl-ledger">') and out.rstrip().endswith("</details>")
    assert "<summary>The claims of this chapter: " in out and " required." in out  # collapsed, counted
    assert "| `c2` | The ratio is one. | Paper, Eq. 3 | 1 ± 0.1 | holds on ≥ 100% of seeds |" in out
    assert "- `c2`: 1 ± 0.05 → 1 ± 0.1 (2026-01-02): the ci grid is coarser" in out
    assert (
        "predicts measured ∈ [-0.4, -0.1] and slope ≤ 1.25" in out
        and "`tol` = 0.1 (the tolerance of c2)" in out
    )
    assert "| reported, not required · reproduction |" in out  # c6 with c6_required false
    led = ledger.read_ledger(tmp_path / "book" / "claims" / "unit.yaml")
    text = ledger.ledger_markdown(led, {"c1": run.claim("c1")}, {})
    assert "≥ 8 |" in text and "(paper: ≥ 8)" not in text  # the paper's value when it says more


def test_the_ledger_is_used_as_declared(runs_dir, tmp_path):
    path = write(tmp_path, FULL)
    start = lambda name: nlcl.start(
        "unit", device="cpu", params={"act": "relu", "n": 8}, run_dir=tmp_path / name
    )  # noqa: E731
    values = dict(tol=0.1, scale=2.0, c6_required=True)
    run = start("a")
    with pytest.raises(LedgerError, match=r"call run.show_ledger\(\) first"):
        run.claim("c1")
    with pytest.raises(LedgerError, match=r"missing \['c6_required'\], not listed \['other'\]"):
        run.show_ledger(ledger=path, tol=0.1, scale=2.0, other=1)
    with pytest.raises(LedgerError, match="named like a parameter"):
        run.show_ledger(
            ledger=write(tmp_path / "other", FULL.replace("scale", "n")),
            tol=0.1,
            n=2,
            c6_required=True,
        )
    run.show_ledger(ledger=path, **values)
    with pytest.raises(LedgerError, match="called twice"):
        run.show_ledger(ledger=path, **values)
    with pytest.raises(ParameterError, match=r"declares its claims in book/claims/unit.yaml, not inline"):
        run.expect("c8", source="s", statement="s", check=at_least(1))
    with pytest.raises(LedgerError, match="declares no such claim; did you mean 'c1'"):
        run.claim("c1x")
    with pytest.raises(LedgerError, match=r"lists diagnostics \['slope'\]"):
        run.diagnostic("slop", 1.0)
    with pytest.raises(MissingDiagnostic, match=r"run.diagnostic\('slope', value\) before measuring"):
        run.claim("c5").measure(-0.2)  # fails, in the explanation's scope: the prediction needs `slope`
    with pytest.raises(ParameterError, match="needs the measured value"):
        run.claim("c1", source="s")
    early = start("b")
    early.expect("c1", source="s", statement="s", check=at_least(1))
    with pytest.raises(
        LedgerError, match=r"before any claim is declared or measured; declared inline already: \['c1'\]"
    ):
        early.show_ledger(ledger=path, **values)
    bad = start("c")
    with pytest.raises(LedgerError, match=r"claim 'c1': field statement: \{a\} names no parameter"):
        bad.show_ledger(ledger=write(tmp_path / "bad", ONE.replace("One claim.", "With {a}.")))


def test_declare_ledger_and_ledger_claim_without_a_run(tmp_path):
    """The ledger side of Run.show_ledger and Run.claim, called with a bare registry."""
    from nlcl.harness.claims.registry import ClaimRegistry

    registry = ClaimRegistry(
        "unit", profile="ci", device="cpu", commit="abc", directory=tmp_path, glue=False, display=False
    )
    led = ledger.read_ledger(write(tmp_path, ONE.replace("One claim.", "At n={n}.")))
    with pytest.raises(LedgerError, match="call run.show_ledger"):
        ledger.ledger_claim(None, {}, "c1")
    asked = []
    claims = ledger.declare_ledger(
        led, {}, registry, {"n": 8}, paper_setting=True, at_paper=lambda *n: asked.append(n) or True
    )
    assert list(claims) == ["c1"] and registry.ledger == led.label and asked == []
    assert ledger.ledger_claim(led, claims, "c1") is claims["c1"]
    with pytest.raises(LedgerError, match="did you mean 'c1'"):
        ledger.ledger_claim(led, claims, "c1x")
    with pytest.raises(LedgerError, match="before any claim is declared"):
        ledger.declare_ledger(led, {}, registry, {}, paper_setting=True, at_paper=lambda *n: True)


def test_claim_calls_reads_a_chapter_by_ast():
    source = textwrap.dedent(
        """
        run.show_ledger(two_grid_steps=0.1)
        run.claim("a").measure(1)
        c = run.claim("b")
        run.claim("x", 2, source="s")
        run.expect("y", source="s")
        run.claim(name)
        other.claim("z")
        """
    )
    calls = ledger.claim_calls(source)
    assert calls == {
        "measured": ["a", "b", "<dynamic>"],
        "inline": ["x", "y"],
        "show_ledger": ["run.show_ledger"],
    }


def test_ledger_path_is_beside_the_chapters(one_chapter_repo):
    assert ledger.ledger_path("ch") == one_chapter_repo.resolve() / "book" / "claims" / "ch.yaml"
    assert ledger.ledger_dir() == ledger.ledger_path("ch").parent
    assert isinstance(ledger.Ledger(ledger.ledger_path("ch"), "ch", []).label, str)
    # one Run class, its ledger methods in it (no mixin): show_ledger, claim, diagnostic, data_source
    assert nlcl.Run.__mro__ == (nlcl.Run, object)
    assert all(m in vars(nlcl.Run) for m in ("show_ledger", "claim", "diagnostic", "data_source"))


def test_required_forms_and_a_plain_explanation(runs_dir, tmp_path):
    text = ONE.replace("One claim.", "Braces {{kept}} at lr={lr}.") + textwrap.dedent(
        """\
          - id: c2
            basis: dynamical
            source: P
            statement: At the paper's lr.
            check: {at_most: 1}
            required: {at_paper: [lr]}
            not_reproduced: {why: the ci run is short, expected: {between: [1.5, 2.5]}}
          - id: c3
            basis: dynamical
            source: P
            statement: A flag.
            check: {at_most: 1}
            required: {ref: flag}
        values: {flag: whether c3 is required}
        """
    )
    path = write(tmp_path, text)
    annotations = {"profile": str, "seed": int, "device": str, "lr": float}
    spec = {"lr": {"range": [0.0, 1.0], "paper": 0.1, "source": "our choice"}}
    for lr, required in ((0.1, True), (0.5, False)):
        ns = dict(__annotations__=annotations, profile="ci", seed=0, device="cpu", lr=lr)
        run = nlcl.start("unit", ns, spec=spec, run_dir=tmp_path / f"r{lr}")
        run.show_ledger(ledger=path, flag=False)
        assert run.claim("c1").statement == f"Braces {{kept}} at lr={lr}."
        c2 = run.claim("c2")
        assert c2.required is required and c2.not_reproduced.why == "the ci run is short"
        assert c2.measure(2)["status"] == "not-reproduced" and not run.claim("c3").required
    with pytest.raises(
        LedgerError, match="claim 'c3': field required: the value 'flag' must be True or False"
    ):
        nlcl.start("unit", ns, spec=spec, run_dir=tmp_path / "x").show_ledger(ledger=path, flag=1)


def test_from_ledgers_reads_statements_and_revisions_from_the_ledger(tmp_path):
    from nlcl.harness.site.report import from_ledgers

    write(
        tmp_path,
        """\
        chapter: unit
        claims:
          - id: c1
            basis: dynamical
            source: Paper, Fig. 2
            statement: "With {activation}, a claim."
            check: {at_least: 8}
            revised:
              - {from: "≥ 9", to: "≥ 8", reason: "why", date: "2026-11-26"}
          - id: c2
            basis: dynamical
            source: Paper
            statement: "A bound {bound}."
            check: {at_most: {ref: bound}}
        values:
          bound: "a value the chapter computes"
        """,
    )
    records = [
        {
            "id": "c1",
            "chapter": "unit",
            "statement": "old",
            "source": "old",
            "parameters": {"activation": "relu"},
        },
        {"id": "c2", "chapter": "unit", "statement": "A bound 0.5.", "parameters": {}},
        {"id": "c3", "chapter": "unit", "statement": "not in the ledger"},
        {"id": "d1", "chapter": "other", "statement": "no ledger"},
    ]
    (tmp_path / "_toc.yml").write_text("root: intro\n")
    out = from_ledgers(records, tmp_path)
    assert out[0]["statement"] == "With relu, a claim." and out[0]["source"] == "Paper, Fig. 2"
    assert out[0]["revised"] == [{"from": "≥ 9", "to": "≥ 8", "reason": "why", "date": "2026-11-26"}]
    assert out[0]["ledger"] == "book/claims/unit.yaml"
    # kind and basis as the ledger declares them now, also for a record made before the field
    assert out[0]["basis"] == "dynamical" and out[0]["kind"] == "reproduction" and "basis" not in records[0]
    assert out[1]["statement"] == "A bound 0.5."  # a computed value: the record's own rendering
    assert out[2:] == records[2:]


def test_a_value_only_a_statement_uses_is_accepted_and_rendered(runs_dir, tmp_path):
    path = write(
        tmp_path,
        """\
        chapter: unit
        values:
          family: "the α family the run used"
        claims:
          - id: c1
            basis: dynamical
            source: Paper
            statement: "With {family} α, one claim."
            check: {at_least: 1}
        """,
    )
    assert ledger.read_ledger(path).values == {"family": "the α family the run used"}
    run = nlcl.start("unit", device="cpu", params={}, run_dir=tmp_path / "r")
    run.show_ledger(ledger=path, family="Gaussian")
    run.claim("c1").measure(2)
    assert "With Gaussian α" in run.registry.records[-1]["statement"]


def test_timing_chapters_are_those_whose_ledger_has_a_timing_claim(tmp_path):
    (tmp_path / "_toc.yml").write_text("root: intro\n")
    write(tmp_path, ONE, chapter="unit")
    timed = ONE.replace("chapter: unit", "chapter: timed").replace(
        "check: {at_least: 8}", "check: {at_least: 8}\n    timing: true"
    )
    write(tmp_path, timed, chapter="timed")
    assert ledger.timing_chapters(tmp_path) == ["timed"]


def test_the_books_timing_chapters_are_decided_in_the_serial_ci_stage():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    assert "esser-grassmann" in ledger.timing_chapters(root)
    assert "python -m nlcl.harness.claims.ledger" in (root / ".ci" / "run").read_text()


def test_a_declared_failure_reaches_the_claim_its_record_and_the_ledger_table(runs_dir, tmp_path):
    """``fails: {why}`` declares a required claim's failure that no prediction explains: the record
    says why, the chapter does not stop on it, and the ledger's table lists it."""
    from nlcl.harness.claims.ledger_view import ledger_markdown
    from nlcl.harness.claims.registry import ClaimRegistry

    path = write(tmp_path, ONE + "    fails:\n      why: Nothing in the run predicts it.\n")
    led = ledger.read_ledger(path)
    registry = ClaimRegistry(
        "unit", profile="ci", device="cpu", commit="abc", directory=tmp_path, glue=False, display=False
    )
    claims = ledger.declare_ledger(led, {}, registry, {}, paper_setting=True, at_paper=lambda *n: True)
    rec = claims["c1"].measure(1)
    assert rec["status"] == "fail" and rec["declared_failure"] == "Nothing in the run predicts it."
    assert registry.failed_required() == [] and "Declared failures" in ledger_markdown(led, claims, {})
    with pytest.raises(LedgerError, match="why"):
        ledger.read_ledger(write(tmp_path, ONE + "    fails: {}\n"))
