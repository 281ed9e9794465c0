import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402

from nlcl.core import plotting  # noqa: E402


def test_setup_and_subplots():
    plotting.setup()
    fig, axes = plotting.subplots(2, 3, width=2, height=1)
    assert axes.shape == (2, 3)
    assert tuple(fig.get_size_inches()) == (6.0, 2.0)
    plotting.mark_vertical(axes[0, 0], [0.0, 1.0])
    assert len(axes[0, 0].lines) == 2
    plt.close(fig)
