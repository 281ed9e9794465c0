"""nlcl: nonlinearity in contrastive learning — the helper package of the executable book.

Modules are named by the papers' concepts (``contrastive``, ``landscape``, ``models``, ``data``,
``metrics``, ``training``, ...); the book machinery lives in ``chapter`` (a chapter run),
``claims`` (the claims registry), ``results`` (artifacts), ``pipeline`` and ``cli``.
"""

__version__ = "0.1.0"

from .chapter import Run, start  # noqa: E402
from .device import get_device, seed_everything  # noqa: E402

__all__ = ["__version__", "Run", "start", "get_device", "seed_everything"]
