"""The whole-book benchmark record: ``python -m nlcl.bench.book [--profile full] [--jobs 2]``.

Runs the book's own build (``nlcl book --profile P --jobs N``: every chapter, then the site) in
this checkout, times it end to end, and writes the record that issue 28 asks for and that
:func:`nlcl.harness.site.schedule.load_costs` reads the next build's chapter order from
(``results/book-<profile>-bench-cpu.json`` by default; ``...-gpu.json`` where CUDA is available):

* ``wall_s`` (the build, end to end), ``chapters`` (seconds per chapter, from the build's
  ``timings.json``), ``chapter_seconds_sum``, the slots of chapters that ran on more than one
  worker, ``every_chapter_ok`` and the build's claim counts per status;
* ``cpu_s``: the CPU seconds (``user`` and ``system``) of every process the build ran and waited
  for (chapter kernels, sweep workers, the site build), where the platform reports them;
* ``speed``: the machine's speed just before and just after the build (:func:`machine_speed`:
  medians of one-thread matmul GFLOP/s, memory-copy GB/s and small-operator dispatches per
  second, with their ranges), sampled during it every ``--sample-every`` seconds
  (:class:`SpeedSampler`: small-operator dispatches per second, its percentiles and series), and
  the CPU seconds the hypervisor took from this machine during the build (``steal_s``, Linux),
  so that two records made at different hours can be told apart from two different codes;
* ``before``: the record this one replaces (its commit, wall time, sum and per-chapter seconds),
  read from the output file before it is overwritten, so each record shows before → after;
* the commit, date, machine, device and numeric environment
  (:func:`nlcl.core.numerics.environment`), and ``target_s`` / ``meets_target`` when a target is
  given.

A benchmark says something only from a committed tree with nothing else running: a tree with
uncommitted changes is refused (``--allow-dirty`` to override), and the record's ``machine`` says
what it was measured on. A failed build writes no record.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import functools
import json
import os
import platform
import shlex
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from nlcl.core.validate import ParameterError
from nlcl.harness.records.run_time import bench_record_path

__all__ = [
    "SpeedSampler",
    "children_cpu",
    "dispatch_rate",
    "machine",
    "machine_speed",
    "make_record",
    "main",
    "steal_seconds",
]


def machine() -> dict[str, Any]:
    """What the record was measured on: platform, CPU cores, memory (GB) and the CUDA device, if any.
    The CPU itself (model name, generation, ISA) and numpy's BLAS kernels are in the record's
    ``numerics`` (:func:`nlcl.core.numerics.environment`)."""
    import torch

    info: dict[str, Any] = {
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_cores": os.cpu_count(),
        "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
    }
    try:
        pages, size = os.sysconf("SC_PHYS_PAGES"), os.sysconf("SC_PAGE_SIZE")
        info["memory_gb"] = round(pages * size / 2**30, 1)
    except (ValueError, OSError, AttributeError):  # not every platform has these
        pass
    return info


def children_cpu() -> dict[str, float] | None:
    """CPU seconds ``{"user", "system"}`` of this process's finished, waited-for children (and
    theirs); None where the platform has no ``resource`` module (Windows)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on Linux or macOS
        return None
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {"user": used.ru_utime, "system": used.ru_stime}


def machine_speed(scale: float = 1.0, samples: int = 5, repeats: int = 3) -> dict[str, Any]:
    """This machine's speed now, on one thread: the median over ``samples`` samples (each the best
    of ``repeats`` timings; about 5 s in all at ``scale=1``) of ``matmul_gflops`` (float32 1024²
    products, :func:`nlcl.core.speed.matmul_peak_gflops`: the arithmetic the chapters' large
    products do), ``copy_gbs`` (a 64 MiB float32 copy, read + write, beyond a 32 MiB L3: memory
    bandwidth) and ``dispatch_per_s`` (small elementwise operators: the per-call cost of
    small-tensor steps), and ``range``: each one's [lowest, highest] sample.

    Times are process CPU time, so time spent descheduled does not count; a slower figure means
    each cycle did less (a lower clock, or caches and memory shared with other machines). Samples
    are taken a probe after another, so a few seconds' disturbance moves the range, not the median.
    """
    import statistics

    import torch

    from nlcl.core.speed import matmul_peak_gflops

    if not scale > 0:
        raise ParameterError(f"scale must be > 0, got {scale}")
    samples, repeats = max(1, int(samples)), max(1, int(repeats))
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        n = max(64, int(1024 * scale ** (1 / 3)))
        src = torch.ones(max(1 << 16, int((1 << 24) * scale)))
        dst, small = torch.empty_like(src), torch.ones(8)
        calls = max(100, int(20_000 * scale))
        dispatch = functools.partial(_small_ops, small, calls)

        def best(work) -> float:
            times = []
            for _ in range(repeats):
                t0 = time.process_time()
                work()
                times.append(time.process_time() - t0)
            return max(min(times), 1e-9)

        probes = {
            "copy_gbs": (2 * src.element_size() * src.numel() / 1e9, lambda: dst.copy_(src)),
            "dispatch_per_s": (calls, dispatch),
        }
        for _, work in probes.values():
            work()  # warm: first-call allocations and library set-up
        rates: dict[str, list[float]] = {name: [] for name in ("matmul_gflops", *probes)}
        for _ in range(samples):
            rates["matmul_gflops"].append(matmul_peak_gflops(n, repeats=repeats, calls=1))
            for name, (amount, work) in probes.items():
                rates[name].append(amount / best(work))
        digits = {"matmul_gflops": 1, "copy_gbs": 2, "dispatch_per_s": 0}
        speed: dict[str, Any] = {
            name: _round(statistics.median(r), digits[name]) for name, r in rates.items()
        }
        speed["range"] = {
            name: [_round(min(r), digits[name]), _round(max(r), digits[name])] for name, r in rates.items()
        }
        return speed
    finally:
        torch.set_num_threads(threads)


def _round(x: float, digits: int) -> float | int:
    return round(x, digits) if digits else round(x)


def _small_ops(t, calls: int) -> None:
    for _ in range(calls):
        t.add_(0.0)


def dispatch_rate(calls: int = 5_000) -> float:
    """Small elementwise operators per second of this thread's CPU time (``calls`` of them): the
    probe :class:`SpeedSampler` takes while a build runs."""
    import torch

    calls = max(1, int(calls))
    small = torch.ones(8)
    small.add_(0.0)
    t0 = time.thread_time()
    _small_ops(small, calls)
    return calls / max(time.thread_time() - t0, 1e-9)


class SpeedSampler:
    """Samples :func:`dispatch_rate` every ``interval_s`` seconds on a background thread while a
    build runs (``with SpeedSampler() as s: ...``; then ``s.summary()``).

    Each sample costs 12–25 ms of one core, about 0.2% at the default interval. The probe is a few
    bytes in L1 and is timed in its own thread's CPU time, so the chapters running beside it
    change it little; a slower machine (its clock, or cores and caches shared with other
    machines) lowers it. Over a build it tells the machine's hour, where the snapshots before and
    after (:func:`machine_speed`) tell only their own seconds.
    """

    def __init__(self, interval_s: float = 10.0, calls: int = 5_000) -> None:
        import threading

        if not interval_s > 0:
            raise ParameterError(f"interval_s must be > 0, got {interval_s}")
        self.interval_s, self.calls = float(interval_s), int(calls)
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="nlcl-speed-sampler", daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            self.samples.append(dispatch_rate(self.calls))

    def __enter__(self) -> SpeedSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def summary(self) -> dict[str, Any] | None:
        """``{"interval_s", "samples", "dispatch_per_s": {"p10", "median", "p90"}, "series_k"}`` (the
        samples in thousands per second, in order); None without samples."""
        if not self.samples:
            return None
        import numpy as np

        p10, median, p90 = (round(float(v)) for v in np.percentile(self.samples, [10, 50, 90]))
        rates = {"p10": p10, "median": median, "p90": p90}
        series = [round(v / 1e3) for v in self.samples]
        return {
            "interval_s": self.interval_s,
            "samples": len(series),
            "dispatch_per_s": rates,
            "series_k": series,
        }


def steal_seconds() -> float | None:
    """CPU seconds the hypervisor has taken from this machine since boot (``/proc/stat``'s steal
    column, all CPUs); None where the platform does not report it."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()
        return int(fields[8]) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError, AttributeError):
        return None


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ParameterError(f"{what} {path} does not exist; build the book first") from None
    except ValueError as err:
        raise ParameterError(f"{what} {path} is not valid JSON: {err}") from None


def make_record(
    build: Path,
    wall_s: float,
    *,
    profile: str,
    command: str,
    commit: str,
    before: dict[str, Any] | None = None,
    target_s: float | None = None,
    notes: str | None = None,
    cpu_s: dict[str, float] | None = None,
    speed: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The benchmark record of a finished build in ``build`` (its ``timings.json`` and ``claims/``).

    Raises :class:`~nlcl.core.validate.ParameterError` when the build has no timings, or timings
    of another profile (a record of ``full`` must come from a ``full`` build).
    """
    timings = _read_json(Path(build) / "timings.json", "the build's timings")
    if not isinstance(timings, dict) or not timings:
        raise ParameterError(f"{Path(build) / 'timings.json'} lists no chapters")
    other = sorted(c for c, e in timings.items() if e.get("profile") != profile)
    if other:
        raise ParameterError(f"the build's timings of {other} are not of profile {profile!r}; rebuild them")
    chapters = {c: float(e["seconds"]) for c, e in timings.items()}
    claims: Counter[str] = Counter()
    for path in sorted((Path(build) / "claims").glob("*.json")):
        for row in _read_json(path, "the claims file"):
            claims[row["status"]] += 1
    from nlcl.core import numerics

    record: dict[str, Any] = {
        "what": f"`nlcl book --profile {profile}` (every chapter, then the site), timed end to end",
        "command": command,
        "commit": commit,
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "machine": machine(),
        "numerics": numerics.environment(),
        "wall_s": round(float(wall_s), 1),
        "chapter_seconds_sum": round(sum(chapters.values()), 1),
        "chapters": chapters,
        "workers": {c: e["workers"] for c, e in timings.items() if e.get("workers", 1) != 1},
        "every_chapter_ok": all(bool(e.get("ok")) for e in timings.values()),
        "claims": dict(sorted(claims.items())),
    }
    if cpu_s is not None:
        record["cpu_s"] = {k: round(float(v), 1) for k, v in cpu_s.items()}
    if speed:
        record["speed"] = speed
    if target_s is not None:
        record["target_s"] = float(target_s)
        record["meets_target"] = float(wall_s) <= float(target_s)
    if before:
        record["before"] = {
            k: before.get(k) for k in ("commit", "date", "wall_s", "chapter_seconds_sum", "chapters")
        }
        if "cpu_s" in before:
            record["before"]["cpu_s"] = before["cpu_s"]
    if notes:
        record["notes"] = notes
    return record


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: build the book timed, write the record; returns the exit status (0: written;
    2: a tree with uncommitted changes or a build without timings; the build's own status if it failed)."""
    from nlcl.harness.records.provenance import build_dir, git_commit
    from nlcl.harness.run.spec import PROFILES

    ap = argparse.ArgumentParser(
        prog="python -m nlcl.bench.book",
        description="build the whole book, timed, and write the benchmark record (before → after)",
    )
    ap.add_argument("--profile", default="full", choices=list(PROFILES))
    ap.add_argument(
        "--jobs", type=int, default=os.cpu_count() or 1, help="chapters at a time (nlcl book --jobs)"
    )
    ap.add_argument(
        "--out", type=Path, default=None, help="default: results/book-<profile>-bench-<cpu|gpu>.json"
    )
    ap.add_argument(
        "--target", type=float, default=None, help="wall-time target in seconds, recorded with meets_target"
    )
    ap.add_argument("--notes", default=None, help="a note stored with the record")
    ap.add_argument(
        "--sample-every",
        type=float,
        default=10.0,
        help="seconds between the machine-speed samples during the build",
    )
    ap.add_argument("--allow-dirty", action="store_true", help="benchmark a tree with uncommitted changes")
    ap.add_argument("--build-command", default=None, help=argparse.SUPPRESS)  # tests: another command
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error(f"--jobs must be >= 1, got {args.jobs}")
    if not args.sample_every > 0:
        ap.error(f"--sample-every must be > 0 seconds, got {args.sample_every}")
    commit = git_commit()
    if commit.endswith("+dirty") and not args.allow_dirty:
        print(
            f"book_bench: the tree has uncommitted changes ({commit}); commit them, or pass --allow-dirty",
            file=sys.stderr,
        )
        return 2
    out = args.out or bench_record_path(args.profile)
    before = None
    if out.exists():
        try:
            before = json.loads(out.read_text())
        except ValueError:
            before = None
    if args.build_command:
        command = shlex.split(args.build_command)
    else:
        command = [
            sys.executable,
            "-m",
            "nlcl.harness.run.cli",
            "book",
            "--profile",
            args.profile,
            "--jobs",
            str(args.jobs),
        ]
    shown = " ".join(shlex.quote(c) for c in command)
    print(f"book_bench: {shown}", flush=True)
    speed0, steal0 = machine_speed(), steal_seconds()
    t0, used0 = time.perf_counter(), children_cpu()
    with SpeedSampler(args.sample_every) as sampler:
        rc = subprocess.call(command)
    wall, used1, steal1 = time.perf_counter() - t0, children_cpu(), steal_seconds()
    if rc != 0:
        print(
            f"book_bench: the build failed (exit {rc}) after {wall:.0f} s; no record written", file=sys.stderr
        )
        return rc
    speed, during = {"before": speed0, "after": machine_speed()}, sampler.summary()
    if during:
        speed["during"] = during
    if steal0 is not None and steal1 is not None:
        speed["steal_s"] = round(steal1 - steal0, 1)
    try:
        record = make_record(
            build_dir(),
            wall,
            profile=args.profile,
            command=shown,
            commit=commit,
            before=before,
            target_s=args.target,
            notes=args.notes,
            cpu_s={k: used1[k] - used0[k] for k in used1} if used0 and used1 else None,
            speed=speed,
        )
    except ParameterError as err:
        print(f"book_bench: {err}", file=sys.stderr)
        return 2
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=2) + "\n")
    was = f" (was {before['wall_s']} s at {before.get('commit')})" if before and "wall_s" in before else ""
    print(
        f"book_bench: {record['wall_s']:.0f} s{was}; chapters sum {record['chapter_seconds_sum']:.0f} s; wrote {out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
