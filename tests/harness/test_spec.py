import importlib
from pathlib import Path

import pytest

from nlcl.core.validate import ParameterError
from nlcl.harness.run import spec
from nlcl.harness.run.notebook import chapters

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "tests" / "fixtures" / "tiny-chapter.py"


def test_read_chapter_tiny():
    cs = spec.read_chapter(TINY)
    assert isinstance(cs, spec.ChapterSpec) and isinstance(cs.parameters["n"], spec.Parameter)
    assert cs.chapter == "tiny-chapter"
    assert list(cs.parameters) == ["profile", "seed", "device", "n", "scale", "must_fail", "make_nan"]
    n = cs.parameters["n"]
    assert (n.type, n.nullable, n.default, n.sizes) == ("int", True, None, {"ci": 3, "full": 30})
    assert n.help == "a size; None takes the profile's" and n.range == [1, 1000] and not n.has_paper
    assert cs.parameters["scale"].paper == 1.0 and cs.parameters["scale"].has_paper
    assert cs.parameters["scale"].source == "Tiny 2023, Eq. 1" and cs.parameters["scale"].from_paper
    assert n.origin is None and not n.from_paper
    assert cs.parameters["profile"].choices == ["ci", "full"]


@pytest.mark.parametrize(
    "source, origin",
    [
        ("Tian 2023, Sec. 5", "paper"),
        ("Esser et al. 2024, Fig. 3 (η = 0.01)", "paper"),
        ("Ren & Li 2023, Thm. 4.3", "paper"),
        ("Tian 2023 poster, table", "paper"),
        ("Tian 2023, App. E.3", "paper"),
        ("released code", "released code"),
        ("released code (luckmatters)", "released code"),
        ("reconstruction: the prototype", "reconstruction"),
        ("our choice", "our choice"),
    ],
)
def test_a_paper_value_names_where_it_comes_from(source, origin):
    params = spec.declare(
        {"profile": "str", "seed": "int", "device": "str", "lr": "float"},
        {"lr": {"range": [0.0, 1.0], "paper": 0.1, "source": source}},
        "ch",
    )
    assert params["lr"].origin == origin and params["lr"].from_paper == (origin == "paper")


@pytest.mark.parametrize(
    "entry, message",
    [
        ({"paper": 0.1}, r"ch: parameter lr: a 'paper' value needs a 'source'.*Tian 2023, Sec. 5"),
        ({"paper": 0.1, "source": ""}, r"needs a 'source'"),
        ({"paper": 0.1, "source": 5}, r"needs a 'source'.*got 5"),
        ({"paper": 0.1, "source": "Tian 2023"}, r"source 'Tian 2023' does not say where"),
        ({"paper": 0.1, "source": "the paper"}, r"does not say where.*'released code', 'reconstruction'"),
        ({"paper": 0.1, "source": "reconstructed"}, r"does not say where"),
        ({"paper": 0.1, "source": "Sec. 5"}, r"does not say where"),
        ({"source": "Tian 2023, Sec. 5"}, r"gives a 'source' but no 'paper' value"),
    ],
)
def test_a_paper_value_without_a_source_is_refused(entry, message):
    with pytest.raises(ParameterError, match=message):
        spec.declare(
            {"profile": "str", "seed": "int", "device": "str", "lr": "float"},
            {"lr": {"range": [0.0, 1.0], **entry}},
            "ch",
        )


@pytest.mark.parametrize("name", list(chapters(ROOT)))
def test_every_paper_value_of_a_chapter_names_its_source(name):
    """A chapter's ``paper`` value cites where the paper states it, or says it is not the paper's."""
    for p in spec.read_chapter(chapters(ROOT)[name]).parameters.values():
        if p.has_paper:
            assert p.origin in ("paper", *spec.ORIGINS), (name, p.name, p.source)


# Module constants the chapters' literal choices must stay within.
CONSTANTS = {
    "activation": ("nlcl.core.activations", "ACTIVATIONS"),
    "alpha": ("nlcl.tian.contrastive", "ALPHA_FAMILIES"),
    "loss": ("nlcl.esser.losses", "LOSSES"),
    "source": ("nlcl.datasets.mnist", "SOURCES"),
    "mnist_source": ("nlcl.datasets.mnist", "SOURCES"),
    "constraints": ("nlcl.esser.constraints", "CONSTRAINTS"),
    "activations": ("nlcl.core.activations", "ACTIVATIONS"),
}


@pytest.mark.parametrize("name", list(chapters(ROOT)))
def test_every_chapter_declares_its_parameters(name):
    cs = spec.read_chapter(chapters(ROOT)[name])
    assert cs.chapter == name
    for pname, p in cs.parameters.items():
        assert p.help, f"{name}: parameter {pname} has no help comment"
        # the default and both profile sizes are allowed values
        spec.check_value(p, p.default, name, {k: q.default for k, q in cs.parameters.items()})
        for prof in p.sizes:
            resolved = spec.resolve({}, cs.parameters, prof)
            spec.check_value(p, p.sizes[prof], name, resolved)
        if pname in CONSTANTS:
            module, const = CONSTANTS[pname]
            allowed = set(getattr(importlib.import_module(module), const))
            choices = p.choices if p.choices is not None else (p.items or {}).get("choices", [])
            assert set(choices) <= allowed, f"{name}: {pname} allows {set(choices) - allowed}"
        if p.type in ("int", "float") and p.choices is None and pname != "seed":
            assert p.range is not None, f"{name}: numeric parameter {pname} declares no range"


def test_tokens_full_grid_is_the_papers():
    from nlcl.tian.tokens.grid import PAPER_BETAS, PAPER_PS

    p = spec.read_chapter(chapters(ROOT)["tian-tokens"]).parameters
    assert p["betas"].sizes["full"] == list(PAPER_BETAS) and p["Ps"].sizes["full"] == list(PAPER_PS)


def _params():
    return spec.declare(
        {
            "profile": "str",
            "seed": "int",
            "device": "str",
            "n": "int | None",
            "k": "int",
            "xs": "list | None",
        },
        {
            "n": {"range": [1, 100], "ci": 3, "full": 30},
            "k": {"range": [1, "n"]},
            "xs": {"length": [1, 3], "items": {"type": "float", "range": [0.0, 1.0]}},
        },
        "ch",
        defaults={"profile": "ci", "seed": 0, "device": "auto", "n": None, "k": 2, "xs": None},
    )


def test_check_values_and_errors():
    P = _params()
    assert spec.check_values({"n": 5, "k": 5, "xs": (0, 0.5)}, P, "ch") == {"n": 5, "k": 5, "xs": [0.0, 0.5]}
    with pytest.raises(
        ParameterError, match=r"ch: parameter n=-1 is not allowed; expected an int in \[1, 100\]"
    ):
        spec.check_values({"n": -1}, P, "ch")
    with pytest.raises(ParameterError, match=r"parameter k=7 is not allowed; expected an int in \[1, n\]"):
        spec.check_values({"n": 6, "k": 7}, P, "ch")
    with pytest.raises(ParameterError, match=r"parameter k=4 is not allowed"):  # n=None → ci size 3
        spec.check_values({"k": 4}, P, "ch")
    with pytest.raises(ParameterError, match=r"xs=\[\] has 0 items; expected a list of 1..3 items"):
        spec.check_values({"xs": []}, P, "ch")
    with pytest.raises(ParameterError, match=r"parameter xs\[1\]=2.0 is not allowed"):
        spec.check_values({"xs": [0.1, 2.0]}, P, "ch")
    with pytest.raises(ParameterError, match="seed=2147483648 is not allowed"):
        spec.check_values({"seed": 2**31}, P, "ch")
    with pytest.raises(
        ParameterError, match=r"device='gpu' is not allowed; expected one of 'auto', 'cpu', 'cuda'"
    ):
        spec.check_values({"device": "gpu"}, P, "ch")
    with pytest.raises(ParameterError, match="k=None is not allowed"):
        spec.check_values({"k": None}, P, "ch")
    with pytest.raises(ParameterError, match="k=True is not allowed"):
        spec.check_values({"k": True}, P, "ch")


def test_check_names_did_you_mean():
    with pytest.raises(ParameterError, match=r"ch has no parameter 'nn'; did you mean 'n'\?") as err:
        spec.check_names(["nn"], _params(), "ch")
    assert "k (int) = 2: an int in [1, n]" in str(err.value)
    with pytest.raises(ParameterError, match=r"no parameter 'zzz'\n"):
        spec.check_names(["zzz"], _params(), "ch")


def test_parse_value_and_resolve():
    P = _params()
    assert spec.parse_value(P["n"], "5") == 5 and spec.parse_value(P["n"], "None") is None
    assert spec.parse_value(P["profile"], "123") == "123" and spec.parse_value(P["xs"], "[0.5]") == [0.5]
    assert spec.parse_value(P["k"], "abc") == "abc"
    assert spec.resolve({"n": None}, P, "full")["n"] == 30 and spec.resolve({"n": 4}, P, "ci")["n"] == 4


def test_declare_errors():
    with pytest.raises(ParameterError, match="spec declares \\['m'\\]"):
        spec.declare({"profile": "str", "seed": "int", "device": "str"}, {"m": {}}, "ch")
    with pytest.raises(ParameterError, match="must define 'device'"):
        spec.declare({"profile": "str", "seed": "int"}, {}, "ch")
    with pytest.raises(ParameterError, match="unknown spec keys \\['rnage'\\]"):
        spec.declare(
            {"profile": "str", "seed": "int", "device": "str", "n": "int"}, {"n": {"rnage": 1}}, "ch"
        )
    with pytest.raises(ParameterError, match="every profile"):
        spec.declare({"profile": "str", "seed": "int", "device": "str", "n": "int"}, {"n": {"ci": 1}}, "ch")
    with pytest.raises(ParameterError, match="type annotation"):
        spec.declare({"profile": "str", "seed": "int", "device": "str", "n": "tuple"}, {}, "ch")
    # live annotations (kernel side)
    P = spec.declare({"profile": str, "seed": int, "device": str, "n": int | None}, {}, "ch")
    assert P["n"].type == "int" and P["n"].nullable


def test_describe():
    assert spec.describe("int", range_=[1, None]) == "an int >= 1"
    assert spec.describe("str", choices=["a"], nullable=True) == "one of 'a', or None"


def test_read_chapter_errors(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text('# %% tags=["parameters"]\nprofile: str = "ci"\nx = 1\n\n# %%\n')
    with pytest.raises(ParameterError, match="must be 'name: type = default"):
        spec.read_chapter(bad)
    bad.write_text('# %% tags=["parameters"]\nprofile: str = "ci"\nseed: int = 0\ndevice: str = "auto"\n')
    with pytest.raises(ParameterError, match="call nlcl.start exactly once"):
        spec.read_chapter(bad)


def test_source_origin_names_the_origin():
    assert spec.source_origin("Tian 2023, Eq. 9") == "paper"
    assert spec.source_origin("reconstruction (prototype)") == "reconstruction"
    with pytest.raises(ParameterError, match="x: source 'Tian 2023, p. 3' does not say where"):
        spec.source_origin("Tian 2023, p. 3", "x")


def test_every_ledger_paper_value_cites_where_the_paper_states_it():
    """A claim's ``paper:`` value is the paper's only where its ``source`` cites the paper with a
    section, equation, table or figure; a value the paper does not state is written in parentheses
    (e.g. "(not in the paper)")."""
    import yaml

    bad = []
    for path in sorted((ROOT / "book" / "claims").glob("*.yaml")):
        for c in yaml.safe_load(path.read_text())["claims"]:
            paper = c.get("paper")
            if paper is None or str(paper).strip().startswith("("):
                continue
            try:
                origin = spec.source_origin(c.get("source"), c["id"])
            except ParameterError as exc:
                origin = str(exc)
            if origin != "paper":
                bad.append((path.name, c["id"], c.get("source")))
    assert bad == []
