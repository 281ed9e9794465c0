"""nlcl.harness.records.exercises: parsing a chapter's exercises and checking its answers."""

from __future__ import annotations

import pytest

from nlcl.harness.records import exercises as ex

CHAPTER = """# %% [markdown]
# # Title

# %%
x = 1

# %% [markdown]
# ## Try it yourself
#
# 1. Hotter: `nlcl run ch -p tau 2.0`. Look at the rate.
#
#    :::{dropdown} Answer
#    `rate-claim` = −0.49 and `other` is 1.2e-3; `tau` = 2 here.
#    :::
#
# 2. Wider: `nlcl run ch -p widths "[1, 2]" -p seed 3`.
#
#    :::{dropdown} Answer
#    `rate-claim` 0.512 (pass).
#    :::

# %% [markdown]
# ## References
"""


@pytest.fixture
def chapter(tmp_path):
    path = tmp_path / "ch.py"
    path.write_text(CHAPTER)
    return path


def test_exercises_are_read_with_their_parameters_and_answers(chapter):
    found = ex.exercises(chapter)
    assert all(isinstance(e, ex.Exercise) for e in found)
    assert [e["parameters"] for e in found] == [{"tau": "2.0"}, {"widths": "[1, 2]", "seed": "3"}]
    assert "`rate-claim` = −0.49" in found[0]["answer"] and "0.512" in found[1]["answer"]


def test_quoted_values_carry_their_printed_precision(chapter):
    first, second = (ex.quoted_values(e["answer"]) for e in ex.exercises(chapter))
    assert first == [
        ("rate-claim", -0.49, pytest.approx(0.005)),
        ("other", 1.2e-3, pytest.approx(5e-5)),
        ("tau", 2.0, 0.5),
    ]
    assert second == [("rate-claim", 0.512, pytest.approx(0.0005))]


def test_answer_problems_compare_with_the_record(chapter):
    record = {
        "exercises": [
            {
                "command": "nlcl run ch -p tau 2.0",
                "claims": {"rate-claim": {"measured": -0.4912}, "other": {"measured": 0.00118}},
            },
            {
                "command": 'nlcl run ch -p widths "[1, 2]" -p seed 3',
                "claims": {"rate-claim": {"measured": 0.5126}},
            },
        ]
    }
    problems = ex.answer_problems("ch", record, chapter)
    assert len(problems) == 1 and "0.512" in problems[0] and "0.5126" in problems[0]
    record["exercises"].pop()
    assert any("has no recorded run" in p for p in ex.answer_problems("ch", record, chapter))


def test_an_answers_pass_count_is_the_records(tmp_path):
    """ "k of n claims pass" in an answer is checked against the record's statuses."""
    path = tmp_path / "ch.py"
    path.write_text(CHAPTER.replace("`rate-claim` = −0.49", "2 of 3 claims pass; `rate-claim` = −0.49"))
    claims = {
        "rate-claim": {"measured": -0.49, "status": "pass"},
        "other": {"measured": 0.0012, "status": "pass"},
    }
    record = {
        "exercises": [
            {
                "command": "nlcl run ch -p tau 2.0",
                "claims": {**claims, "x": {"measured": 1, "status": "fail"}},
            },
            {
                "command": 'nlcl run ch -p widths "[1, 2]" -p seed 3',
                "claims": {"rate-claim": {"measured": 0.512}},
            },
        ]
    }
    assert ex.answer_problems("ch", record, path) == []
    record["exercises"][0]["claims"]["x"]["status"] = "pass"
    assert ex.answer_problems("ch", record, path) == [
        "ch: `nlcl run ch -p tau 2.0`: the answer says 2 of 3 claims pass, the record has 3 of 3"
    ]


def test_an_exercise_must_run_its_own_chapter(tmp_path):
    path = tmp_path / "ch.py"
    path.write_text(CHAPTER.replace("nlcl run ch -p tau", "nlcl run other -p tau"))
    with pytest.raises(ValueError, match="runs another chapter"):
        ex.exercises(path)


def test_code_sha256_ignores_prose(tmp_path):
    (tmp_path / "book").mkdir()
    path = tmp_path / "book" / "ch.py"
    path.write_text(CHAPTER)
    first = ex.code_sha256("ch", tmp_path)
    path.write_text(CHAPTER.replace("Look at the rate.", "Look at the slope."))
    assert ex.code_sha256("ch", tmp_path) == first
    path.write_text(CHAPTER.replace("x = 1", "x = 2"))
    assert ex.code_sha256("ch", tmp_path) != first
