"""The life of one chapter run: parameters and profile sizes, seed and device, claims, provenance.

Every chapter calls :func:`start` right after its papermill ``parameters`` cell and
:meth:`Run.finish` in its last cell::

    run = nlcl.start("tian-fig8-landscape", profile=profile, seed=seed, device=device,
                     sizes={"ci": dict(n_grid=3601), "full": dict(n_grid=36001)},
                     params=dict(activation=activation, n_grid=n_grid))
    P = run.params          # P.n_grid: the explicit value, or the profile's size when None
    ...
    run.finish()            # provenance + claims table; raises if a required claim failed
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from typing import Any

import torch

from nlcl.core import plotting
from nlcl.core.device import describe_device, get_device, seed_everything
from nlcl.core.validate import ParameterError, choice
from nlcl.harness import claims as _claims
from nlcl.harness import provenance

__all__ = ["PROFILES", "Params", "Run", "start", "resolve_sizes"]

PROFILES = ("ci", "full")


class Params(Mapping):
    """Read-only parameters with attribute access (``P.n_grid``) and mapping access (``P["n_grid"]``)."""

    def __init__(self, values: Mapping[str, Any]) -> None:
        object.__setattr__(self, "_values", dict(values))

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(
                f"no parameter {name!r}; parameters are: {', '.join(sorted(self._values))}"
            ) from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("parameters are read-only; change them in the parameters cell")

    def __getitem__(self, key: str) -> Any:
        return self._values[key]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Params({self._values!r})"


def resolve_sizes(
    profile: str, sizes: Mapping[str, Mapping[str, Any]], params: Mapping[str, Any]
) -> dict[str, Any]:
    """Merge the profile's sizes with the explicit parameters (an explicit non-``None`` value wins).

    ``sizes`` must name every profile in :data:`PROFILES` with the same keys: a profile changes
    sizes only, so both profiles size the same things.
    """
    choice("profile", profile, PROFILES)
    missing = [p for p in PROFILES if p not in sizes]
    if missing:
        raise ParameterError(f"sizes must define every profile {PROFILES}; missing: {missing}")
    extra = [p for p in sizes if p not in PROFILES]
    if extra:
        raise ParameterError(f"sizes has unknown profiles {extra}; allowed: {PROFILES}")
    keys = [set(sizes[p]) for p in PROFILES]
    if any(k != keys[0] for k in keys):
        raise ParameterError(
            "the profiles must size the same things; keys differ: "
            + "; ".join(f"{p}: {sorted(sizes[p])}" for p in PROFILES)
        )
    merged = dict(sizes[profile])
    for name, value in params.items():
        if value is not None or name not in merged:
            merged[name] = value
    return merged


class Run:
    """One execution of a chapter. Create it with :func:`start`."""

    def __init__(
        self,
        chapter: str,
        *,
        profile: str,
        seed: int,
        device: str | torch.device,
        sizes: Mapping[str, Mapping[str, Any]],
        params: Mapping[str, Any],
        claims_dir: str | None = None,
    ) -> None:
        self.t0 = time.perf_counter()
        self.chapter = chapter
        self.profile = choice("profile", profile, PROFILES)
        self.params = Params(resolve_sizes(profile, sizes, params))
        self.seed = seed
        self.generator = seed_everything(seed)
        self.device = get_device(device)
        self.device_name = describe_device(self.device)
        self.sizes = {p: dict(s) for p, s in sizes.items()}
        self.commit = provenance.git_commit()
        directory = claims_dir or (provenance.build_dir() / "claims")
        self.registry = _claims.ClaimRegistry(
            chapter, profile=self.profile, device=self.device_name, commit=self.commit, directory=directory
        )
        self.registry.settings = dict(self.params)  # where a NotReproduced(setting=...) applies
        plotting.setup()
        self._finished = False

    # -- claims ---------------------------------------------------------------------------------
    def expect(
        self,
        id: str,
        *,
        source: str,
        statement: str,
        check: _claims.Check,
        paper: Any = None,
        required: bool = True,
        profiles: Sequence[str] = PROFILES,
        not_reproduced: Any = None,
        **verdict: Any,
    ) -> _claims.Claim:
        """Declare a claim before its measurement; call ``.measure(value)`` (or
        ``.measure_seeds(values)``) on the result later. ``verdict`` keywords (``kind``,
        ``revised``, ``decide``) go to :meth:`~nlcl.harness.claims.ClaimRegistry.declare`.
        """
        return self.registry.declare(
            id,
            source=source,
            statement=statement,
            check=check,
            paper=paper,
            required=required,
            profiles=profiles,
            not_reproduced=not_reproduced,
            **verdict,
        )

    def claim(self, id: str, measured: Any, **kwargs: Any) -> dict[str, Any]:
        """Declare and measure in one call (same keywords as :meth:`expect`)."""
        return self.expect(id, **kwargs).measure(measured)

    def glue(self, name: str, value: Any, display: bool = False) -> None:
        """Glue a computed value for the prose (``{glue:text}`name```); not a claim."""
        from myst_nb import glue

        glue(name, _claims.to_plain(value), display=display)

    # -- provenance -----------------------------------------------------------------------------
    @property
    def wall_time(self) -> float:
        return time.perf_counter() - self.t0

    def provenance(self) -> dict[str, Any]:
        """The provenance record of this run (also written to ``_build/provenance/<chapter>.json``)."""
        return provenance.collect(
            profile=self.profile,
            params={k: _claims.to_plain(v) for k, v in self.params.items()},
            device=self.device_name,
            commit=self.commit,
            chapter=self.chapter,
            seed=self.seed,
            wall_time_s=round(self.wall_time, 2),
        )

    def finish(self) -> None:
        """Show provenance and the claims table; raise :class:`ClaimsFailed` if a required claim failed.

        Call it in the chapter's last cell, after every claim was measured. The provenance record
        is kept as ``run.record``.
        """
        record = self.record = self.provenance()
        out = provenance.build_dir() / "provenance"
        out.mkdir(parents=True, exist_ok=True)
        (out / f"{self.chapter}.json").write_text(json.dumps(record, indent=2, default=str) + "\n")
        self._display(record)
        self._finished = True
        unmeasured = self.registry.unmeasured()
        failed = self.registry.failed_required()
        problems = []
        if failed:
            problems.append(
                "required claims failed: "
                + "; ".join(f"{r['id']} (check {r['tolerance']}, measured {r['measured']})" for r in failed)
            )
        if unmeasured:
            problems.append("declared claims never measured: " + ", ".join(unmeasured))
        if problems:
            raise _claims.ClaimsFailed(f"chapter {self.chapter!r}: " + " | ".join(problems))

    def _display(self, record: dict[str, Any]) -> None:
        params = ", ".join(f"{k}={v!r}" for k, v in record["parameters"].items())
        versions = ", ".join(f"{k} {v}" for k, v in record["versions"].items())
        text = "\n".join(
            [
                "**Claims of this chapter**",
                "",
                self.registry.table_markdown(),
                "",
                "**Provenance**",
                "",
                "| | |",
                "| --- | --- |",
                f"| chapter | `{self.chapter}` |",
                f"| commit | `{record['commit']}` |",
                f"| profile | `{record['profile']}` |",
                f"| parameters | {params} |",
                f"| seed | {record['seed']} |",
                f"| device | {record['device']} |",
                f"| versions | {versions} |",
                f"| date (UTC) | {record['date']} |",
                f"| wall time | {record['wall_time_s']:.1f} s |",
            ]
        )
        _claims.show_markdown(text)


def start(
    chapter: str,
    *,
    profile: str = "ci",
    seed: int = 0,
    device: str = "auto",
    sizes: Mapping[str, Mapping[str, Any]] | None = None,
    params: Mapping[str, Any] | None = None,
) -> Run:
    """Begin a chapter run: validate the profile, fill sizes, seed everything, pick the device,
    open the claims registry (clearing the chapter's previous claims) and set the figure style.
    """
    sizes = sizes if sizes is not None else {p: {} for p in PROFILES}
    return Run(chapter, profile=profile, seed=seed, device=device, sizes=sizes, params=params or {})
