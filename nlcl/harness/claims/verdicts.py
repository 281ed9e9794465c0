"""How a measured claim becomes a verdict: kinds, scoped explanations, revisions, seeds, invalid.

The rules (issue 13, "verdicts a researcher can trust"):

- A claim is of *kind* ``"reproduction"`` (a statement of the paper the experiment could
  contradict) or ``"check"`` (a sanity or identity check of our own code). Only reproductions are
  counted in the book's headline.
- A measurement that is NaN or infinite (anywhere in the value, or on any seed) is ``"invalid"``:
  a failure of the run, never pass, fail or not reproduced.
- A *not reproduced* explanation (:class:`NotReproduced`) applies only in the profiles and the
  parameter setting it was observed in, and optionally only when an ``expected`` predicate on the
  measured value holds. Outside that, a failing required claim fails. A claim that passes while
  carrying an explanation that applies is reported as reproduced, with the explanation flagged
  *stale*.
- A tolerance changed after results were seen is declared as a :class:`Revision` and shown.
- A stochastic claim is measured on several seeds (``Claim.measure_seeds``); the check is
  applied per seed and a declared *seed rule* (:func:`holds_on_fraction`,
  :func:`mean_minus_2se_above`, :func:`mean_plus_2se_below`) decides.

- A *timing* claim (declared with ``timing=True``: a verdict on measured wall-clock time) is
  gated only where nothing else runs. When the chapter runs beside other chapters (``nlcl book
  --jobs N`` with N > 1, or a sweep running several points at once, tell the kernel with
  ``NLCL_CONCURRENT=1``), the claim is measured and shown with status ``"not-gated"``: its
  ``outcome`` (what the check said there) and the reason (``gate_note``) are recorded, and it
  never fails the run. Alone (``nlcl run``, ``nlcl book --jobs 1``) it is decided as usual.

See ``book/reproducibility.md`` for how the report shows these.
"""

from __future__ import annotations

import datetime as _dt
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from nlcl.core.validate import ParameterError

__all__ = [
    "CONCURRENT_ENV",
    "BASES",
    "KINDS",
    "NOT_GATED",
    "concurrent_run",
    "not_gated_note",
    "NotReproduced",
    "Revision",
    "SeedRule",
    "holds_on_fraction",
    "check_on_mean",
    "check_on_pooled",
    "mean_minus_2se_above",
    "mean_plus_2se_below",
    "is_finite",
    "normalize_not_reproduced",
    "normalize_revisions",
    "seed_summary",
    "THIS_RUN",
    "computed_label",
]

KINDS = ("reproduction", "check")
#: What a reproduction rests on (``basis:``): ``exact``, a paper's closed form or identity checked
#: against an independent computation, where round-off is the expected size of the difference;
#: ``dynamical``, what training or the integrated dynamics show; ``statistical``, what sampling
#: shows (Monte Carlo estimates, random draws, timings). A check has none.
BASES = ("exact", "dynamical", "statistical")
#: The status of a timing claim measured beside other runs: shown, never gating.
NOT_GATED = "not-gated"
#: Set to ``1`` in a chapter's kernel by a runner that executes other chapters at the same time.
CONCURRENT_ENV = "NLCL_CONCURRENT"


def concurrent_run(environ: Mapping[str, str] | None = None) -> bool:
    """Whether this chapter runs beside other chapters (:data:`CONCURRENT_ENV` is set and not
    ``0``/empty), so that wall-clock measurements share the CPU with them."""
    value = (os.environ if environ is None else environ).get(CONCURRENT_ENV, "")
    return value.strip().lower() not in ("", "0", "false", "no")


def not_gated_note(outcome: str) -> str:
    """Why a timing claim is not gated in a concurrent run (the record's ``gate_note``)."""
    return (
        f"timing claim measured while other chapters ran on the same machine ({CONCURRENT_ENV}=1): "
        f"shown, not gated (the check gave {outcome} here); it is decided by a run where nothing "
        "else runs (`nlcl run`, `nlcl book --jobs 1`)"
    )


@dataclass(frozen=True)
class NotReproduced:
    """An explanation of why a claim does not reproduce, valid only where it was observed.

    ``why`` is the explanation; ``evidence`` names what in the chapter shows it (a figure, a
    number, a diagnostic). It applies in the ``profiles`` listed, only when the run's parameters
    match ``setting`` (``{"n_grid": 3601}``) and, if given, only when ``expected(measured)`` is
    true (the failure looks the way the explanation says it does). ``diagnostics`` names the
    quantities the chapter measures (``run.diagnostic(name, value)``, before the claim) that
    ``expected`` tests; a required claim's explanation must predict something narrower than its
    failure (:mod:`nlcl.harness.claims.predictions`). ``band`` is the part of ``expected`` on the
    measured value alone when diagnostics are named too (``None``: no such part; without diagnostics
    ``expected`` is the band); ``sources`` says where each diagnostic comes from (``run``,
    ``artifact`` or ``derived``; ``run`` when not named) and ``value_range`` is the range the measured
    quantity can take, within which the failure region is sampled.
    """

    why: str
    profiles: tuple[str, ...] = ("ci",)
    setting: Mapping[str, Any] = field(default_factory=dict)
    expected: Callable[[Any], bool] | None = field(default=None, compare=False)
    evidence: str = ""
    diagnostics: tuple[str, ...] = ()
    band: Callable[[Any], bool] | None = field(default=None, compare=False)
    sources: Mapping[str, str] = field(default_factory=dict)
    value_range: tuple[float, float] = (-math.inf, math.inf)

    def __post_init__(self) -> None:
        if not isinstance(self.why, str) or not self.why.strip():
            raise ParameterError("not_reproduced must be an explanation (non-empty string)")
        object.__setattr__(self, "profiles", tuple(self.profiles))
        if isinstance(self.diagnostics, str):
            object.__setattr__(self, "diagnostics", (self.diagnostics,))
        object.__setattr__(self, "diagnostics", tuple(self.diagnostics))
        if not all(isinstance(d, str) and d for d in self.diagnostics):
            raise ParameterError(
                f"NotReproduced(diagnostics={self.diagnostics!r}) must name diagnostics (strings)"
            )
        if not self.profiles:
            raise ParameterError("NotReproduced(profiles=()) would never apply; name the profiles")
        lo, hi = (float(v) for v in self.value_range)
        if not lo < hi:
            raise ParameterError(
                f"NotReproduced(value_range={self.value_range!r}) must be (lo, hi) with lo < hi"
            )
        object.__setattr__(self, "value_range", (lo, hi))
        object.__setattr__(self, "sources", dict(self.sources))

    def in_scope(self, profile: str, params: Mapping[str, Any] | None) -> bool:
        """Whether the run is where the explanation was observed (its profiles and setting)."""
        if profile not in self.profiles:
            return False
        params = params or {}
        return all(name in params and params[name] == value for name, value in self.setting.items())

    def applies(self, profile: str, params: Mapping[str, Any] | None, measured: Any) -> bool:
        """Whether this explanation covers a failure in ``profile`` with ``params`` and ``measured``."""
        if not self.in_scope(profile, params):
            return False
        if self.expected is not None:
            try:
                return bool(self.expected(measured))
            except (TypeError, ValueError):
                return False
        return True

    def scope(self) -> str:
        """A short description of where the explanation applies ("profile ci, n_grid=3601")."""
        parts = ["profile " + "/".join(self.profiles)]
        parts += [f"{k}={v!r}" for k, v in self.setting.items()]
        if self.diagnostics:
            parts.append("when the diagnostics " + ", ".join(self.diagnostics) + " look as explained")
        elif self.expected is not None:
            parts.append("when the measured value looks as explained")
        return ", ".join(parts)


def normalize_not_reproduced(value: Any) -> NotReproduced | None:
    """Accept ``None``, a :class:`NotReproduced`, a string (observed in ci only) or ``{profile: why}``.

    The string and mapping forms are for informational claims only: a required claim's
    explanation must predict something (:func:`nlcl.harness.claims.predictions.validate_explanation`)."""
    if value is None or isinstance(value, NotReproduced):
        return value
    if isinstance(value, str):
        return NotReproduced(value)
    if isinstance(value, Mapping):
        whys = {str(k): v for k, v in value.items()}
        texts = set(whys.values())
        if len(texts) != 1:
            raise ParameterError(
                "not_reproduced as a mapping must give one explanation for its profiles; "
                "use NotReproduced(...) for more"
            )
        return NotReproduced(texts.pop(), profiles=tuple(whys))
    raise ParameterError(
        f"not_reproduced={value!r} must be None, a string, {{profile: explanation}} or NotReproduced(...)"
    )


@dataclass(frozen=True)
class Revision:
    """A tolerance or threshold changed after results were seen (``from_`` → ``to``, why, when)."""

    from_: str
    to: str
    reason: str
    date: str = ""

    def as_record(self) -> dict[str, str]:
        return {"from": str(self.from_), "to": str(self.to), "reason": self.reason, "date": self.date}


def normalize_revisions(revised: Sequence[Revision | Mapping[str, str]] | None) -> list[dict[str, str]]:
    """The ``revised`` field of a record: a list of ``{from, to, reason, date}``."""
    out = []
    for r in revised or ():
        if isinstance(r, Revision):
            out.append(r.as_record())
        elif isinstance(r, Mapping) and {"from", "to", "reason"} <= set(r):
            out.append(
                {
                    "from": str(r["from"]),
                    "to": str(r["to"]),
                    "reason": str(r["reason"]),
                    "date": str(r.get("date", "")),
                }
            )
        else:
            raise ParameterError(f"revised entry {r!r} must be Revision(from_, to, reason[, date])")
        if not out[-1]["reason"].strip():
            raise ParameterError("a tolerance revision needs a reason")
    return out


def is_finite(value: Any) -> bool:
    """False when a float anywhere in ``value`` (nested lists/dicts) is NaN or ±inf."""
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, (list, tuple)):
        return all(is_finite(v) for v in value)
    if isinstance(value, dict):
        return all(is_finite(v) for v in value.values())
    return True


# --------------------------------------------------------------------------------------------
# Seeds: the check applied per seed, an aggregate rule decides.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SeedRule:
    """Decides a claim from its per-seed values and per-seed verdicts."""

    description: str
    decide: Callable[[list[float], list[bool]], bool] = field(repr=False, compare=False)
    on_mean: bool = False  # decided by the claim's own check applied to the mean over seeds


def holds_on_fraction(fraction: float = 0.8) -> SeedRule:
    """The claim holds if the per-seed check holds on at least ``fraction`` of the seeds."""
    if not 0 < fraction <= 1:
        raise ParameterError(f"holds_on_fraction(fraction={fraction}) must be in (0, 1]")
    return SeedRule(f"holds on ≥ {100 * fraction:g}% of seeds", lambda v, ok: sum(ok) >= fraction * len(ok))


def check_on_mean() -> SeedRule:
    """The claim's check is applied to the mean over seeds (the claim states a mean); the record
    still shows the spread and the fraction of seeds on which the check holds.
    """
    return SeedRule("check applied to the mean over seeds", lambda v, ok: False, on_mean=True)


def check_on_pooled() -> SeedRule:
    """The claim's check is applied to one quantity computed from all seeds together (e.g. a
    grid of cells that are means over seeds, as a paper's figure averages them); the per-seed
    values (the same quantity from each seed alone) are recorded to show the spread and the
    fraction of seeds on which the check would hold, not to decide.
    """
    return SeedRule(
        "check applied to the quantity of the seed-averaged data; per-seed values show the spread",
        lambda v, ok: False,
        on_mean=True,
    )


def _mean_se(values: list[float]) -> tuple[float, float]:
    n = len(values)
    mean = sum(values) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1)) if n > 1 else 0.0
    return mean, std / math.sqrt(n)


def mean_minus_2se_above(threshold: float) -> SeedRule:
    """The claim holds if mean − 2·standard error of the per-seed values is above ``threshold``."""
    return SeedRule(
        f"mean − 2 s.e. > {threshold:g}",
        lambda v, ok: (lambda m, se: m - 2 * se > threshold)(*_mean_se([float(x) for x in v])),
    )


def mean_plus_2se_below(threshold: float) -> SeedRule:
    """The claim holds if mean + 2·standard error of the per-seed values is below ``threshold``."""
    return SeedRule(
        f"mean + 2 s.e. < {threshold:g}",
        lambda v, ok: (lambda m, se: m + 2 * se < threshold)(*_mean_se([float(x) for x in v])),
    )


def seed_summary(
    values: Sequence[Any],
    verdicts: Sequence[bool],
    rule: SeedRule,
    threshold: Any,
    center: float | None = None,
) -> dict:
    """The ``seeds`` field of a record: n, mean, std, holds_fraction, values, rule, and whether the
    margin between the deciding value and the check's threshold is smaller than the seed spread.

    The deciding value is the mean over seeds, or ``center`` when the claim is decided on another
    aggregate (:func:`check_on_pooled`). ``threshold`` is a number (the margin is the deciding value
    minus it) or the two bounds ``(low, high)`` of an interval check (``between``, ``approx``): the
    margin is then the signed distance to the *nearest* bound (positive inside the interval), so a
    value near the centre of a wide interval is not flagged and one near an edge is. Non-numeric
    values (e.g. the name of a winner) have no mean, spread or margin: only n, holds_fraction,
    values and rule.
    """
    n = len(values)
    out: dict[str, Any] = {
        "n": n,
        "mean": None,
        "std": None,
        "holds_fraction": sum(bool(x) for x in verdicts) / n,
        "values": list(values),
        "rule": rule.description,
    }
    if not all(isinstance(v, (int, float)) for v in values):
        return out
    nums = [float(v) for v in values]
    mean = sum(nums) / n
    std = math.sqrt(sum((v - mean) ** 2 for v in nums) / (n - 1)) if n > 1 else 0.0
    out.update(mean=mean, std=std)
    at = mean if center is None else float(center)
    margin = _margin(at, threshold)
    if margin is not None and n > 1:
        out["margin"] = margin
        out["margin_within_spread"] = abs(margin) < std
    return out


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _margin(at: float, threshold: Any) -> float | None:
    """``at`` minus a numeric threshold; for bounds ``(low, high)`` the signed distance to the
    nearest one (positive inside); ``(t,)`` is the threshold ``t``; None when not numeric."""
    if isinstance(threshold, (tuple, list)):
        if len(threshold) == 1:
            threshold = threshold[0]
        elif len(threshold) == 2 and all(_number(b) for b in threshold):
            low, high = sorted(float(b) for b in threshold)
            return min(at - low, high - at)
        else:
            return None
    return at - float(threshold) if _number(threshold) else None


def now_date() -> str:
    """Today's date (UTC), for revisions and full-profile provenance."""
    return _dt.datetime.now(_dt.timezone.utc).date().isoformat()


#: The ``computed`` field of a claim measured from this run's own computation.
THIS_RUN = "this run"


def computed_label(
    read_from: str | Sequence[str] | None, joined_with: str | Sequence[str] | None = None
) -> str:
    """``"this run"``, or ``"read from <artifact>[, <artifact>]"`` for a value read from committed
    artifacts (issue 26: a verdict that cannot change with the run says so), or ``"this run, joined
    with seeds read from <artifact>[, ...]"`` for a value computed in this run on data pooled with
    seeds read from committed artifacts (``joined_with``)."""
    if joined_with is not None:
        joined = [joined_with] if isinstance(joined_with, str) else joined_with
        if not isinstance(joined, (list, tuple)):
            joined = []
        if read_from is not None or not joined or not all(isinstance(n, str) and n.strip() for n in joined):
            raise ParameterError(
                f"joined_with={joined_with!r} must name the committed artifact file(s) whose seeds join "
                "this run's own computation (and comes without read_from)"
            )
        return f"{THIS_RUN}, joined with seeds read from " + ", ".join(joined)
    if read_from is None:
        return THIS_RUN
    names = [read_from] if isinstance(read_from, str) else list(read_from)
    if not names or not all(isinstance(n, str) and n.strip() for n in names):
        raise ParameterError(
            f"read_from={read_from!r} must name the committed artifact file(s) the value comes from"
        )
    return "read from " + ", ".join(names)
