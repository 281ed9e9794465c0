"""nlcl.harness.run.chapter_shape: each rule is caught, and a chapter that follows them passes."""

import pytest

from nlcl.harness.run import chapter_shape

GOOD = """# %% [markdown]
# # Title
#
# **Overview.** Text.

# %% tags=["parameters", "hide-cell"]
profile: str = "ci"
seed: int = 0

# %% tags=["hide-cell"]
import nlcl

run = nlcl.start("demo", globals(), spec={})
P = run.params

# %% tags=["hide-cell"]
import numpy as np

from nlcl.core import plotting

# %%
x = np.arange(run.seed + 3)
plotting.mark_vertical

# %%
run.finish()
"""


def _write(tmp_path, text):
    path = tmp_path / "demo.py"
    path.write_text(text)
    return path


def test_a_chapter_that_follows_the_rules_passes(tmp_path):
    assert chapter_shape.shape_problems(_write(tmp_path, GOOD)) == []
    assert chapter_shape.cell_lengths(_write(tmp_path, GOOD)) == [2, 3, 2, 2, 1]


@pytest.mark.parametrize(
    "old, new, message",
    [
        ("x = np.arange(run.seed + 3)", "def f():\n    return 1", "defines 'f'"),
        ("x = np.arange(run.seed + 3)", "f = lambda: 1", "lambda bound to a name"),
        ("x = np.arange(run.seed + 3)", "import os", "outside the imports cell"),
        ("plotting.mark_vertical", "nlcl.core.plotting.mark_vertical", "nlcl.core without importing"),
        ("run.seed + 3", "seed + 3", "not the bare parameter seed"),
        ('tags=["parameters", "hide-cell"]', 'tags=["parameters"]', "parameters cell"),
        ("x = np.arange(run.seed + 3)", "x = " + "1 + " * 30 + "1", "characters (at most 88)"),
        ("x = np.arange(run.seed + 3)", "\n".join(f"x{i} = {i}" for i in range(41)), "has 42 lines"),
        ("# # Title", "# Title", "first cell"),
    ],
)
def test_each_rule_is_caught(tmp_path, old, new, message):
    assert old in GOOD
    problems = chapter_shape.shape_problems(_write(tmp_path, GOOD.replace(old, new, 1)))
    assert any(message in p for p in problems), problems


def test_the_median_rule(tmp_path):
    long = "\n".join(f"y{i} = {i}" for i in range(12))
    text = GOOD.replace("x = np.arange(run.seed + 3)", long).replace("run.finish()", long + "\nrun.finish()")
    text = text.replace(
        "import numpy as np\n", "import numpy as np\n" + "\n".join(f"import m{i}" for i in range(11)) + "\n"
    )
    problems = chapter_shape.shape_problems(_write(tmp_path, text))
    assert any("median code cell" in p for p in problems), problems
