"""nlcl: nonlinearity in contrastive learning — the helper package of the executable book.

The layout shows the architecture:

* :mod:`nlcl.harness` — the book machinery, one subpackage per concern: running a chapter
  (``run``: :func:`start`, :class:`Run`, the command line), claims and ledgers (``claims``),
  committed records (``records``: provenance, results artifacts, paper-scale, seed-sweep and
  held-out records) and the site (``site``: the book build, the report). Paper code never imports it.
* :mod:`nlcl.bench` — the whole-book benchmark (it times the book; the harness never imports it).
* :mod:`nlcl.core` — shared by every paper: argument validation, device and seeding, activations,
  the figure style, small tensor helpers.
* :mod:`nlcl.datasets` — MNIST loading and image augmentation.
* :mod:`nlcl.tian`, :mod:`nlcl.esser`, :mod:`nlcl.renli` — one subpackage per paper, one module per
  concept of that paper.

``import nlcl`` is light (no torch): :func:`start` and :class:`Run` are imported on first use.
It puts the process on the numeric path that ``NLCL_NUMERICS`` names (``native``, the default, or
``portable``: :mod:`nlcl.core.numerics`) before torch loads.
"""

from nlcl.core import numerics as _numerics

_numerics.apply()

__version__ = "0.1.0"

__all__ = ["__version__", "Run", "start", "get_device", "seed_everything"]

_LAZY = {
    "Run": "nlcl.harness.run.chapter",
    "start": "nlcl.harness.run.chapter",
    "get_device": "nlcl.core.device",
    "seed_everything": "nlcl.core.device",
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'nlcl' has no attribute {name!r}")
