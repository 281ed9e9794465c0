"""The IDX file format of the MNIST distribution: read and write (optionally gzip-compressed).

Used by :mod:`nlcl.datasets.mnist`; the tests write their own IDX files with :func:`write_idx`.
"""

from __future__ import annotations

import gzip
import os
import struct
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    pass

__all__ = ["read_idx", "write_idx"]


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
        raise ValueError(f"{path} is not an IDX file: the first two bytes must be 0x00 0x00, got {raw[:2]!r}")
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
