"""nlcl.harness.site.page and nlcl.harness.site.directives: sections, shown sources, history in prose."""

from __future__ import annotations

import pytest

from nlcl.harness.site import directives, page

CHAPTER = """# %% [markdown]
# # Title
#
# Overview {cite:t}`tian2023nonlinearity`.

# %%
from nlcl.tian.contrastive import energy, half_sq_dists
import nlcl.tian.alpha_cl as ac

# %% [markdown]
# ## 1. First
#
# ```{nlcl-source} nlcl.tian.contrastive.energy
# ```

# %%
e = energy(x, a)
run.claim("one").measure(e)

# %% [markdown]
# ## 2. Second

# %%
d = half_sq_dists(x)
s = ac.lemma2_study(d)
run.claim("two").measure(s)
"""


def test_sections_and_missing_sources(tmp_path):
    path = tmp_path / "ch.py"
    path.write_text(CHAPTER)
    parts = page.sections(path)
    assert [s.title for s in parts] == ["(overview)", "1. First", "2. Second"]
    assert parts[1].claims == ["one"] and parts[2].claims == ["two"]
    missing = page.missing_sources(path)
    assert len(missing) == 2 and "half_sq_dists" in missing[0] and "lemma2_study" in missing[1]
    path.write_text(
        CHAPTER.replace(
            "# ## 2. Second",
            "# ## 2. Second\n#\n# ```{nlcl-source} nlcl.tian.contrastive.half_sq_dists nlcl.tian.alpha_cl.lemma2_study\n# ```",
        )
    )
    assert page.missing_sources(path) == []
    path.write_text(CHAPTER.replace("contrastive.energy\n", "contrastive.no_such\n"))
    assert any("has no 'no_such'" in p for p in page.missing_sources(path))


@pytest.mark.parametrize(
    "line",
    [
        "measured on 2026-11-28 at ci",
        "the grid of 3 Dec 2026",
        "run 20261123T161200-1a2b3c-9f8e",
        "since commit 4f508d9 the check",
        "as stop 49 found",
        "see issue 28",
        "the problem was found at base seed 41",
        "seed 7 once failed here",
        "the tolerance was loosened",
    ],
)
def test_history_in_prose_is_found(tmp_path, line):
    path = tmp_path / "ch.py"
    path.write_text(f"# %% [markdown]\n# {line}\n\n# %%\nx = 1\n")
    assert page.history_problems(path), line


@pytest.mark.parametrize(
    "line",
    [
        "Tian (2023), Eq. 3 and Lemma 2",
        "a tolerance of 1e-10 at seed 0",
        "the 2-layer case",
        "β = 10, P = 10",
    ],
)
def test_ordinary_prose_is_not_history(tmp_path, line):
    path = tmp_path / "ch.py"
    path.write_text(f"# %% [markdown]\n# {line}\n\n# %%\nx = 1\n")
    assert page.history_problems(path) == []


def test_source_of_reads_the_package_file():
    path, start, code = directives.source_of("nlcl.tian.contrastive.energy")
    lines = path.read_text().splitlines()
    assert path.name == "contrastive.py" and code.splitlines()[0] == lines[start - 1]
    assert code.lstrip().startswith("def energy")


@pytest.mark.parametrize(
    "name, match",
    [
        ("nlcl.tian.contrastive.nope", "has no 'nope'"),
        ("numpy.mean", "not an nlcl name"),
        ("nlcl.tian.contrastive", "not a function, class or method"),
    ],
)
def test_a_name_that_does_not_resolve_is_an_error(name, match):
    with pytest.raises(directives.SourceNotFound, match=match):
        directives.source_of(name)


def test_claim_declarations_come_from_the_ledger():
    (entry,) = directives.claim_declarations("tian-alpha-cl", ["lemma2-rate"])
    assert entry["id"] == "lemma2-rate" and "check" in entry
    with pytest.raises(directives.ClaimNotFound, match="declares no claim"):
        directives.claim_declarations("tian-alpha-cl", ["no-such-claim"])
    assert directives._check_text({"at_most": 1e-10}) == "≤ 1e-10"
    assert directives._statement("{alpha} α, Σ_{{j≠i}}") == "<em>alpha</em> α, Σ_{j≠i}"


def test_called_names_maps_imports_and_module_aliases():
    source = "from nlcl.tian.contrastive import energy\nimport nlcl.tian.alpha_cl as ac\nenergy(x)\nac.lemma2_study(y)\nprint(z)\n"
    names = page.called_names(source, page._imports(__import__("ast").parse(source)))
    assert names == ["nlcl.tian.contrastive.energy", "nlcl.tian.alpha_cl.lemma2_study"]


def test_ledger_summary_counts_claims_and_required():
    from types import SimpleNamespace

    from nlcl.harness.claims.ledger_view import ledger_summary

    claims = {
        "a": SimpleNamespace(required=True, kind="reproduction"),
        "b": SimpleNamespace(required=False, kind="check"),
        "c": SimpleNamespace(required=True, kind="reproduction"),
    }
    assert (
        ledger_summary(None, claims)
        == "The claims of this chapter: 3 declared (1 check, 2 reproductions), 2 required"
    )
