"""Tests for nlcl.renli.text: captions and prompts, the embedding cache, and the offline frozen encoder."""

from __future__ import annotations

import os
from importlib import metadata

import numpy as np
import pytest

import nlcl.renli.text as text
from nlcl.core.validate import ParameterError
from nlcl.renli.text import (
    CAPTION_TEMPLATES,
    DIGIT_NAMES,
    ENCODER_PACKAGE,
    PROMPT_TEMPLATE,
    caption_sentences,
    encode_sentences,
    encoder_available,
    encoder_version,
    load_sentence_encoder,
    prompt_sentences,
    text_cache_dir,
)


class StubEncoder:
    """A deterministic stand-in with the sentence-transformers ``encode`` signature."""

    def __init__(self, dim: int = 8) -> None:
        self.dim = dim
        self.calls = 0

    def encode(
        self,
        sentences,
        batch_size=32,
        convert_to_numpy=True,
        normalize_embeddings=True,
        show_progress_bar=False,
    ):
        self.calls += 1
        out = np.stack([np.random.default_rng(sum(map(ord, s))).normal(size=self.dim) for s in sentences])
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def test_caption_sentences_digit_major():
    caps = caption_sentences()
    T = len(CAPTION_TEMPLATES)
    assert len(caps) == 10 * T
    assert caps[7 * T] == "a handwritten digit seven"
    assert caps[7 * T + 2] == "the digit 7, written by hand"
    assert all(DIGIT_NAMES[d] in caps[d * T] for d in range(10))
    assert caption_sentences(["{digit}/{name}"])[3] == "3/three"


@pytest.mark.parametrize("templates, match", [([], "at least one"), (["a {colour} digit"], "unknown field")])
def test_caption_sentences_rejects_bad_templates(templates, match):
    with pytest.raises(ParameterError, match=match):
        caption_sentences(templates)


def test_prompt_sentences_are_the_papers_prompts():
    prompts = prompt_sentences()
    assert PROMPT_TEMPLATE == "This is a {name}"
    assert prompts[0] == "This is a zero" and prompts[9] == "This is a nine" and len(prompts) == 10


def test_text_cache_dir(monkeypatch, tmp_path):
    assert text_cache_dir(tmp_path) == tmp_path
    monkeypatch.setenv("NLCL_TEXT_CACHE", str(tmp_path / "env"))
    assert text_cache_dir() == tmp_path / "env"
    monkeypatch.delenv("NLCL_TEXT_CACHE")
    assert text_cache_dir().parts[-3:] == (".cache", "nlcl", "text")


def test_encode_sentences_with_a_custom_encoder_is_not_cached(tmp_path):
    enc = StubEncoder()
    emb = encode_sentences(["a", "b", "c"], encoder=enc, cache_dir=tmp_path)
    assert emb.shape == (3, 8) and emb.dtype == np.float32
    assert np.allclose(np.linalg.norm(emb, axis=1), 1.0)
    encode_sentences(["a", "b", "c"], encoder=enc, cache_dir=tmp_path)
    assert enc.calls == 2 and not list(tmp_path.iterdir())


def test_encode_sentences_caches_the_frozen_encoder(monkeypatch, tmp_path):
    stub = StubEncoder()
    monkeypatch.setattr(text, "encoder_version", lambda: "stub 1.0")
    monkeypatch.setattr(text, "load_sentence_encoder", lambda: stub)
    first = encode_sentences(["one", "two"], cache_dir=tmp_path)
    second = encode_sentences(["one", "two"], cache_dir=tmp_path)
    assert stub.calls == 1 and np.array_equal(first, second)
    assert len(list(tmp_path.glob("*.npy"))) == 1
    encode_sentences(["two", "one"], cache_dir=tmp_path)  # another list, another key
    assert stub.calls == 2
    encode_sentences(["one", "two"], cache_dir=tmp_path, use_cache=False)
    assert stub.calls == 3


@pytest.mark.parametrize("sentences", [[], ["ok", 3]])
def test_encode_sentences_rejects_bad_input(sentences):
    with pytest.raises(ParameterError, match="non-empty list of strings"):
        encode_sentences(sentences, encoder=StubEncoder())


def test_missing_package_gives_a_clear_error(monkeypatch):
    def missing(name):
        raise metadata.PackageNotFoundError(name)

    monkeypatch.setattr(text.metadata, "version", missing)
    assert encoder_available() is False
    with pytest.raises(ImportError, match=f"pip install {ENCODER_PACKAGE}"):
        encoder_version()


@pytest.mark.slow
@pytest.mark.skipif(not encoder_available(), reason=f"{ENCODER_PACKAGE} not installed")
def test_frozen_encoder_loads_offline_and_matches_prompts_to_captions(tmp_path):
    assert encoder_version().startswith(ENCODER_PACKAGE)
    model = load_sentence_encoder()
    assert os.environ["HF_HUB_OFFLINE"] == "1" and os.environ["TRANSFORMERS_OFFLINE"] == "1"
    caps = caption_sentences(["a handwritten digit {name}"])
    emb = encode_sentences(caps + prompt_sentences(), cache_dir=tmp_path, encoder=model)
    assert emb.shape == (20, 384)
    sims = emb[10:] @ emb[:10].T
    assert (sims.argmax(1) == np.arange(10)).mean() >= 0.9  # "This is a seven" ↔ "... digit seven"
