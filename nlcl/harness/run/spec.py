"""Chapter parameters, declared once and checked before anything runs.

A chapter declares each parameter in two adjacent places that together say everything once:

* the papermill ``parameters`` cell gives the name, the type (``int``, ``float``, ``str``, ``bool``,
  ``list``, ``dict``; ``int | None`` when ``None`` is allowed), the default and a one-line help
  comment::

      n_grid: int | None = None  # number of θ grid points; None takes the profile's size

* the ``spec=`` literal of the chapter's ``nlcl.start`` call gives what is allowed and the sizes::

      run = nlcl.start("tian-fig8-landscape", globals(), spec={
          "activation": {"choices": ["relu", "linear"], "paper": "relu"},
          "n_grid": {"range": [16, 10_000_000], "ci": 3600, "full": 36000},
      })

  Keys of one parameter: ``choices`` (allowed values), ``range`` ([low, high], inclusive, ``None``
  for open; a bound may name another parameter), ``items`` (the same keys for each element of a
  list, plus ``type``), ``length`` ([low, high] for lists), ``ci`` / ``full`` (the profile's size
  when the value is ``None``) and ``paper`` (the value of the setting the claims are judged at, for
  ``run.paper_setting``) with ``source`` (where that value comes from, required with ``paper``):
  where the paper states it, ``"<Author> <year>, <Sec./Eq./Table/Fig./App./Theorem ...>"`` (e.g.
  ``"Tian 2023, Sec. 5"``), or, for a value the paper does not state, one of :data:`ORIGINS`
  (``"released code"``, ``"reconstruction"``, ``"our choice"``), optionally followed by ``: detail``
  or `` (detail)``. Only a citation makes the value the paper's (:attr:`Parameter.from_paper`).

The command line reads both from the chapter's source with :mod:`ast` (no kernel, no torch), and
:func:`nlcl.start` checks the same declaration inside the kernel, so plain papermill runs are checked
too. This module is light: standard library only.
"""

from __future__ import annotations

import ast
import difflib
import io
import math
import re
import tokenize
import types
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nlcl.core.validate import ParameterError, cuda_unavailable

__all__ = [
    "PROFILES",
    "COMMON",
    "RESERVED",
    "Parameter",
    "ChapterSpec",
    "read_chapter",
    "declare",
    "check_value",
    "check_values",
    "check_names",
    "parse_value",
    "resolve",
    "describe",
    "ORIGINS",
    "source_origin",
]

PROFILES = ("ci", "full")
#: Parameters every chapter has, with what is allowed (a chapter's ``spec`` may narrow them).
COMMON: dict[str, dict[str, Any]] = {
    "profile": {"choices": list(PROFILES)},
    "seed": {"range": [0, 2**31 - 1]},
    "device": {"choices": ["auto", "cpu", "cuda"]},
}
#: Variables the harness injects besides the parameters (the run folder chosen by ``nlcl run``).
RESERVED = ("nlcl_run_dir",)
TYPES = ("int", "float", "str", "bool", "list", "dict")
KEYS = {"choices", "range", "items", "length", "ci", "full", "paper", "source"}
#: Where a ``paper`` value the paper does not state comes from.
ORIGINS = ("released code", "reconstruction", "our choice")
#: A citation of the paper: ``"<Author(s)> <year>[ poster], <locator> ..."``.
_CITATION = re.compile(r"^[A-Z][^,]*\b(19|20)\d\d[a-z]?( poster)?, (?P<where>.+)$")
#: What a citation must point at: a section, equation, table, figure, appendix or statement.
_LOCATOR = re.compile(
    r"\b(Sec|Secs|Section|Eq|Eqs|Table|Tab|Fig|Figs|Figure|App|Appendix|Alg|Algorithm|Theorems?|Thm|"
    r"Lemmas?|Corollary|Corollaries|Cor|Propositions?|Prop|Assumptions?|Def|Definition|Remarks?|"
    r"Example|table)\b"
)
_MISSING = object()
_CELL = re.compile(r"^# %%")


@dataclass
class Parameter:
    """One declared parameter: type, default, help and what is allowed."""

    name: str
    type: str
    nullable: bool = False
    default: Any = None
    help: str = ""
    choices: list[Any] | None = None
    range: list[Any] | None = None
    items: dict[str, Any] | None = None
    length: list[Any] | None = None
    sizes: dict[str, Any] = field(default_factory=dict)
    paper: Any = _MISSING
    source: str | None = None

    @property
    def has_paper(self) -> bool:
        return self.paper is not _MISSING

    @property
    def origin(self) -> str | None:
        """``"paper"`` when ``source`` cites the paper, else the :data:`ORIGINS` entry it names."""
        return source_origin(self.source, self.name) if self.has_paper else None

    @property
    def from_paper(self) -> bool:
        """True when the declared ``paper`` value is stated by the paper (its source cites it)."""
        return self.origin == "paper"

    def allowed(self) -> str:
        """What is allowed, in words (for error messages and ``nlcl list``)."""
        return describe(self.type, self.choices, self.range, self.items, self.length, self.nullable)


@dataclass
class ChapterSpec:
    """A chapter's id and its parameters in declaration order."""

    chapter: str
    parameters: dict[str, Parameter]


def describe(type_, choices=None, range_=None, items=None, length=None, nullable=False) -> str:
    """``"an int in [16, 10000000]"``, ``"one of 'relu', 'linear'"``, ``"a list of 1..100 float"``."""
    if choices is not None:
        text = "one of " + ", ".join(repr(c) for c in choices)
    else:
        text = {"int": "an int", "float": "a float", "str": "a string", "bool": "true or false"}.get(
            type_, f"a {type_}"
        )
        if range_ is not None:
            lo, hi = range_
            text += f" >= {lo}" if hi is None else f" <= {hi}" if lo is None else f" in [{lo}, {hi}]"
    if type_ == "list":
        if length is not None:
            lo, hi = length
            text += f" of {lo if lo is not None else 0}..{hi if hi is not None else '∞'} items"
        if items:
            text += (
                " (each "
                + describe(items.get("type", "float"), items.get("choices"), items.get("range"), None, None)
                + ")"
            )
    if nullable:
        text += ", or None"
    return text


def source_origin(source: Any, where: str = "parameter") -> str:
    """Where a declared ``paper`` value comes from: ``"paper"`` for a citation of the paper with a
    locator (``"Tian 2023, Sec. 5"``), else the :data:`ORIGINS` entry ``source`` starts with
    (``"released code"``, ``"reconstruction"``, ``"our choice"``, then ``: detail`` or
    `` (detail)``). Raises :class:`ParameterError` saying what a source must be."""
    how = (
        "where the paper states it, as '<Author> <year>, <Sec./Eq./Table/Fig./App./Theorem ...>' "
        "(e.g. 'Tian 2023, Sec. 5'), or, for a value the paper does not state, one of "
        + ", ".join(repr(o) for o in ORIGINS)
        + " (optionally followed by ': detail' or ' (detail)')"
    )
    if not isinstance(source, str) or not source.strip():
        raise ParameterError(f"{where}: a 'paper' value needs a 'source' saying {how}; got {source!r}")
    text = source.strip()
    for origin in ORIGINS:
        rest = text[len(origin) :]
        if text.lower().startswith(origin) and (not rest or rest[0] in ":(;, "):
            return origin
    m = _CITATION.match(text)
    if m and _LOCATOR.search(m.group("where")):
        return "paper"
    raise ParameterError(f"{where}: source {text!r} does not say where the value comes from; give {how}")


# ----------------------------------------------------------------------------------------------
# Reading the declaration: from a chapter's source (the CLI) or from the kernel's globals
# ----------------------------------------------------------------------------------------------


def _annotation(node: ast.expr | None, where: str) -> tuple[str, bool]:
    if isinstance(node, ast.Name) and node.id in TYPES:
        return node.id, False
    if (
        isinstance(node, ast.BinOp)
        and isinstance(node.op, ast.BitOr)
        and isinstance(node.right, ast.Constant)
        and node.right.value is None
    ):
        return _annotation(node.left, where)[0], True
    raise ParameterError(f"{where}: the type annotation must be one of {TYPES}, or 'TYPE | None'")


def _type_of(ann: Any, where: str) -> tuple[str, bool]:
    """``int`` → ("int", False); ``int | None`` → ("int", True) (kernel side, live annotations)."""
    if isinstance(ann, str):
        return _annotation(ast.parse(ann, mode="eval").body, where)
    if isinstance(ann, types.UnionType):
        args = [a for a in ann.__args__ if a is not type(None)]
        if len(args) == 1 and len(ann.__args__) == 2:
            return _type_of(args[0], where)[0], True
    if isinstance(ann, type) and ann.__name__ in TYPES:
        return ann.__name__, False
    raise ParameterError(f"{where}: the type annotation must be one of {TYPES}, or 'TYPE | None'")


def declare(
    annotations: Mapping[str, Any],
    spec: Mapping[str, Mapping[str, Any]] | None,
    chapter: str = "chapter",
    defaults: Mapping[str, Any] | None = None,
    helps: Mapping[str, str] | None = None,
) -> dict[str, Parameter]:
    """Combine the parameters cell (annotations, defaults, help) with the ``spec`` literal."""
    spec = dict(spec or {})
    unknown = [k for k in spec if k not in annotations]
    if unknown:
        raise ParameterError(
            f"{chapter}: spec declares {unknown}, which the parameters cell does not define "
            f"(it defines {list(annotations)})"
        )
    for name in COMMON:
        if name not in annotations:
            raise ParameterError(f"{chapter}: the parameters cell must define {name!r}")
    out: dict[str, Parameter] = {}
    for name, ann in annotations.items():
        where = f"{chapter}: parameter {name}"
        type_, nullable = _type_of(ann, where)
        entry = {**COMMON.get(name, {}), **dict(spec.get(name, {}))}
        bad = set(entry) - KEYS
        if bad:
            raise ParameterError(f"{where}: unknown spec keys {sorted(bad)}; allowed: {sorted(KEYS)}")
        if "source" in entry and "paper" not in entry:
            raise ParameterError(f"{where}: spec gives a 'source' but no 'paper' value for it to describe")
        if "paper" in entry:
            source_origin(entry.get("source"), where)
        sizes = {p: entry[p] for p in PROFILES if p in entry}
        if sizes and set(sizes) != set(PROFILES):
            raise ParameterError(f"{where}: give a size for every profile {PROFILES}, not only {list(sizes)}")
        out[name] = Parameter(
            name=name,
            type=type_,
            nullable=nullable,
            default=(defaults or {}).get(name),
            help=(helps or {}).get(name, ""),
            choices=entry.get("choices"),
            range=entry.get("range"),
            items=entry.get("items"),
            length=entry.get("length"),
            sizes=sizes,
            paper=entry.get("paper", _MISSING),
            source=entry.get("source"),
        )
    return out


def _comments(source: str) -> dict[int, str]:
    out: dict[int, str] = {}
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                out[tok.start[0]] = tok.string.lstrip("#").strip()
    except (tokenize.TokenError, IndentationError):  # pragma: no cover - the file compiles
        pass
    return out


def _is_start(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "start"
        and isinstance(node.func.value, ast.Name)
        and node.func.value.id == "nlcl"
    )


def read_chapter(path: str | Path) -> ChapterSpec:
    """Read a ``book/*.py`` chapter's declaration from its source, without executing anything."""
    path = Path(path)
    source = path.read_text()
    name = path.stem
    lines = source.splitlines()
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise ParameterError(f"{path} does not compile as Python: {exc}") from None
    headers = [i + 1 for i, line in enumerate(lines) if _CELL.match(line)] + [len(lines) + 1]
    tagged = [h for h in headers[:-1] if "parameters" in lines[h - 1] and "tags" in lines[h - 1]]
    if len(tagged) != 1:
        raise ParameterError(f"{name} must have exactly one cell tagged 'parameters'; found {len(tagged)}")
    first = tagged[0]
    last = next(h for h in headers if h > first)
    comments = _comments(source)
    annotations: dict[str, Any] = {}
    defaults: dict[str, Any] = {}
    helps: dict[str, str] = {}
    for node in tree.body:
        if not first < node.lineno < last:
            continue
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            raise ParameterError(
                f"{name}: line {node.lineno} of the parameters cell must be 'name: type = default  # help'"
            )
        key = node.target.id
        annotations[key] = ast.unparse(node.annotation)
        try:
            defaults[key] = ast.literal_eval(node.value) if node.value is not None else None
        except ValueError:
            raise ParameterError(f"{name}: the default of {key!r} must be a literal") from None
        helps[key] = next(
            (comments[i] for i in range(node.lineno, (node.end_lineno or node.lineno) + 1) if i in comments),
            "",
        )
    calls = [n for n in ast.walk(tree) if _is_start(n)]
    if len(calls) != 1:
        raise ParameterError(f"{name} must call nlcl.start exactly once; found {len(calls)} calls")
    call = calls[0]
    spec: dict[str, Any] = {}
    for kw in call.keywords:
        if kw.arg == "spec":
            try:
                spec = ast.literal_eval(kw.value)
            except ValueError:
                raise ParameterError(
                    f"{name}: the spec= of nlcl.start must be a literal (numbers, strings, lists, dicts)"
                ) from None
    chapter = name
    if call.args and isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str):
        chapter = call.args[0].value
    return ChapterSpec(chapter, declare(annotations, spec, name, defaults, helps))


# ----------------------------------------------------------------------------------------------
# Checking values
# ----------------------------------------------------------------------------------------------


def _fmt(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _check_scalar(
    where: str, value: Any, type_: str, choices, range_, resolved: Mapping[str, Any], allowed: str
) -> Any:
    def fail() -> None:
        named = [b for b in (range_ or []) if isinstance(b, str)]
        values = ", ".join(f"{b} = {resolved.get(b)!r}" for b in named)
        raise ParameterError(
            f"{where}={_fmt(value)} is not allowed; expected {allowed}" + (f" ({values})" if named else "")
        )

    if type_ == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
                value = int(value)
            else:
                fail()
    elif type_ == "float":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            fail()
        value = float(value)
    elif type_ == "str":
        if not isinstance(value, str):
            fail()
    elif type_ == "bool":
        if not isinstance(value, bool):
            fail()
    elif type_ == "dict":
        if not isinstance(value, dict):
            fail()
    if choices is not None and value not in choices:
        fail()
    if range_ is not None:
        lo, hi = (resolved.get(b) if isinstance(b, str) else b for b in range_)
        if (lo is not None and value < lo) or (hi is not None and value > hi):
            fail()
    return value


def check_value(p: Parameter, value: Any, chapter: str = "chapter", resolved: Mapping[str, Any] = {}) -> Any:
    """Return ``value`` (ints widened to float for ``float``, tuples to lists) if ``p`` allows it.

    ``resolved`` gives the other parameters' values, for range bounds that name a parameter.
    Raises :class:`ParameterError` naming the chapter, the parameter, the value and what is allowed.
    """
    where = f"{chapter}: parameter {p.name}"
    if value is None:
        if p.nullable:
            return None
        raise ParameterError(f"{where}=None is not allowed; expected {p.allowed()}")
    if p.type == "list":
        if not isinstance(value, (list, tuple)):
            raise ParameterError(f"{where}={_fmt(value)} is not allowed; expected {p.allowed()}")
        value = list(value)
        if p.length is not None:
            lo, hi = p.length
            if (lo is not None and len(value) < lo) or (hi is not None and len(value) > hi):
                raise ParameterError(f"{where}={_fmt(value)} has {len(value)} items; expected {p.allowed()}")
        if p.items:
            it = p.items
            itype = it.get("type", "float")
            allowed = describe(itype, it.get("choices"), it.get("range"))
            value = [
                _check_scalar(
                    f"{where}[{i}]", v, itype, it.get("choices"), it.get("range"), resolved, allowed
                )
                for i, v in enumerate(value)
            ]
        return value
    return _check_scalar(where, value, p.type, p.choices, p.range, resolved, p.allowed())


def check_names(given: list[str], params: Mapping[str, Parameter], chapter: str = "chapter") -> None:
    """Raise for names that are not parameters, with a "did you mean" and the list of parameters."""
    for name in given:
        if name in params:
            continue
        close = difflib.get_close_matches(name, list(params), n=3, cutoff=0.6)
        hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
        listed = "\n  ".join(
            f"{k} ({p.type}{' | None' if p.nullable else ''}) = {p.default!r}: {p.allowed()}"
            for k, p in params.items()
        )
        raise ParameterError(f"{chapter} has no parameter {name!r}{hint}\nits parameters are:\n  {listed}")


def parse_value(p: Parameter, raw: Any) -> Any:
    """A command-line string as a Python value for ``p`` (literals; a bare word for strings)."""
    if not isinstance(raw, str):
        return raw
    text = raw.strip()
    lowered = text.lower()
    if lowered == "none":
        return None
    if p.type == "str":
        return raw
    if lowered in ("true", "false"):
        return lowered == "true"
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return raw


def check_values(
    values: Mapping[str, Any], params: Mapping[str, Parameter], chapter: str = "chapter"
) -> dict[str, Any]:
    """Check every given value (names first, then each value); return the checked values."""
    check_names(list(values), params, chapter)
    defaults = {k: p.default for k, p in params.items()}
    merged = {**defaults, **values}
    profile = merged.get("profile") or "ci"
    resolved = {
        k: (p.sizes.get(profile) if merged.get(k) is None and p.sizes else merged.get(k))
        for k, p in params.items()
    }
    out = {k: check_value(params[k], v, chapter, resolved) for k, v in values.items()}
    device = out.get("device")
    if isinstance(device, str) and device.split(":")[0] == "cuda" and (why := cuda_unavailable()):
        raise ParameterError(f"device={device!r} but CUDA is not available here ({why}); use 'cpu' or 'auto'")
    return out


def resolve(values: Mapping[str, Any], params: Mapping[str, Parameter], profile: str) -> dict[str, Any]:
    """The run's values: an explicit value, else the profile's size for ``None`` where declared."""
    return {
        k: (p.sizes[profile] if values.get(k) is None and p.sizes else values.get(k, p.default))
        for k, p in params.items()
    }
