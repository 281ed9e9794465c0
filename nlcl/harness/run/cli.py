"""The ``nlcl`` command line: run one chapter, build the book, list chapters and their parameters.

Examples::

    nlcl list
    nlcl run tian-fig8-landscape -p activation linear
    nlcl run tian-fig8-landscape --profile full -o fig8-full.ipynb
    nlcl book --profile ci --jobs 2
    nlcl train-grid --workers 2          # the token task's paper grid (results/tian-tokens-full-*)
    nlcl bench --quick                   # benchmark the token trainer
    nlcl sweep tian-alpha-cl -p seed 0..4 # one chapter over a parameter grid, on Dask

Every ``nlcl run`` writes into a run folder of its own, ``runs/<chapter>/<run id>/`` (printed at
the start): executed notebook, claims, provenance, run record and log. ``nlcl book`` alone writes
``_build/``.

Exit codes: 0 success; 1 a chapter failed (an error in a cell, a non-finite value, a failed
required or an invalid claim) or the site did not build; 2 a usage error (unknown chapter or
parameter, a wrong type, a value out of range, an output path that cannot be written); 130
interrupted (Ctrl-C; the run folder is marked ``interrupted``).

Paper-specific commands (``train-grid``, ``bench``) are registered by their subpackage
(``COMMANDS`` in ``nlcl.<paper>.commands``, :mod:`nlcl.core.commands`); this module finds them
by name and imports no paper code otherwise.

This module and what ``--help``, ``list`` and usage errors need import no torch and no notebook
library, so they answer at once.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys

from nlcl import __version__
from nlcl.core.commands import Command, Services
from nlcl.core.validate import ParameterError
from nlcl.harness.run.spec import PROFILES

EXIT_CODES = """exit codes:
  0    success
  1    a chapter failed: an error, a non-finite value, a failed required or an invalid claim
  2    usage error: unknown chapter or parameter, wrong type, value out of range, bad output path
  130  interrupted (Ctrl-C); the run folder is marked interrupted"""

#: The paper subpackages, searched for ``commands`` modules; the book's own commands.
PAPERS = ("tian", "esser", "renli")
BOOK_COMMANDS = ("run", "book", "list", "sweep")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nlcl",
        description="Run the chapters of the nlcl book and build it.",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"nlcl {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser(
        "run",
        help="execute one chapter with custom parameters into its own run folder",
        description="Execute one chapter into runs/<chapter>/<run id>/ (notebook, claims, provenance, log).",
        epilog=EXIT_CODES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    run.add_argument("chapter", help="chapter id (see `nlcl list`) or path to a book/*.py chapter")
    run.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUE"),
        help="set a parameter (repeatable); VALUE is a Python literal or a bare string",
    )
    run.add_argument(
        "-f",
        "--parameters-file",
        default=None,
        metavar="PARAMS.yaml",
        help="parameters from a YAML mapping (as papermill -f); -p values win",
    )
    run.add_argument("--profile", choices=PROFILES, default=None, help="size profile (default: ci)")
    run.add_argument(
        "-o", "--output", default=None, help="executed notebook (default: <run folder>/notebook.ipynb)"
    )
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    run.add_argument(
        "--log-output", action="store_true", help="stream the chapter's output (as papermill --log-output)"
    )

    book = sub.add_parser("book", help="execute every chapter and build the site into _build/html")
    book.add_argument("--profile", choices=PROFILES, default="ci")
    book.add_argument("--jobs", "-j", type=int, default=1, help="chapters executed in parallel")
    book.add_argument(
        "--only", nargs="+", default=None, metavar="CHAPTER", help="execute only these chapters"
    )
    book.add_argument("--no-site", action="store_true", help="execute and report, but do not build the site")

    lst = sub.add_parser("list", help="list the chapters, or one chapter's parameters")
    lst.add_argument("chapter", nargs="?", default=None)

    sweep = sub.add_parser(
        "sweep", help="run one chapter over a grid of parameters on a Dask cluster (local or remote)"
    )
    sweep.add_argument("chapter", help="chapter id (see `nlcl list`) or path to a book/*.py chapter")
    sweep.add_argument(
        "-p",
        "--parameter",
        nargs=2,
        action="append",
        default=[],
        metavar=("NAME", "VALUES"),
        help="swept parameter (repeatable): comma-separated values 'a,b,c' or an integer range '0..9'",
    )
    sweep.add_argument("--profile", choices=PROFILES, default="ci")
    sweep.add_argument(
        "--scheduler", default=None, help="address of a running Dask scheduler (default: a LocalCluster)"
    )
    sweep.add_argument(
        "--workers", type=int, default=None, help="LocalCluster worker processes (default: one per core)"
    )
    sweep.add_argument("--out", default=None, help="sweep folder (default: sweeps/<chapter>/<grid hash>)")
    sweep.add_argument("--quiet", action="store_true", help="no progress bar")

    for command in paper_commands().values():  # train-grid, bench: registered by nlcl.tian.commands
        command.add_arguments(sub.add_parser(command.name, help=command.help, description=command.help))
    return parser


def paper_commands() -> dict[str, Command]:
    """The subcommands the paper subpackages register (``COMMANDS`` in ``nlcl.<paper>.commands``,
    :mod:`nlcl.core.commands`), by name; a name registered twice, or clashing with the book's own
    commands, is an error."""
    found: dict[str, Command] = {}
    for paper in PAPERS:
        if importlib.util.find_spec(f"nlcl.{paper}.commands") is None:
            continue
        for command in importlib.import_module(f"nlcl.{paper}.commands").COMMANDS:
            if command.name in found or command.name in BOOK_COMMANDS:
                raise RuntimeError(f"nlcl.{paper}.commands registers {command.name!r} a second time")
            found[command.name] = command
    return found


def services() -> Services:
    """What the harness lends a paper command: the results artifact store and the code's commit."""
    from nlcl.harness.records import results
    from nlcl.harness.records.provenance import git_commit

    return Services(save_artifact=results.save, git_commit=git_commit)


def _cmd_sweep(args: argparse.Namespace) -> int:
    from nlcl.harness.run.sweep import parse_values, run_sweep

    grid: dict = {}
    for name, spec in args.parameter:
        if name in grid:
            raise ParameterError(f"parameter {name!r} is given twice")
        grid[name] = parse_values(name, spec)
    if not grid:
        raise ParameterError(
            "nlcl sweep needs at least one swept parameter: -p NAME v1,v2,... or -p seed 0..9"
        )
    res = run_sweep(
        args.chapter,
        grid,
        profile=args.profile,
        scheduler=args.scheduler,
        workers=args.workers,
        out=args.out,
        progress=not args.quiet,
    )
    if not res.summary.empty:
        print(res.summary.to_string(index=False))
    return 1 if res.failed else 0


def _read_parameters_file(path: str) -> dict:
    import yaml

    try:
        data = yaml.safe_load(open(path).read())
    except OSError as exc:
        raise ParameterError(f"-f {path!r}: cannot read it: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise ParameterError(f"-f {path!r}: not valid YAML: {str(exc).splitlines()[0]}") from None
    if data is None:
        return {}
    if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
        raise ParameterError(f"-f {path!r}: expected a mapping of parameter names to values")
    return data


def _cmd_run(args: argparse.Namespace) -> int:
    from nlcl.harness.run.notebook import run_chapter

    params = _read_parameters_file(args.parameters_file) if args.parameters_file else {}
    given = set()
    for name, value in args.parameter:
        if name in given:
            raise ParameterError(f"parameter {name!r} is given twice")
        given.add(name)
        params[name] = value
    lines: list[str] = []

    def say(text: str, err: bool = False) -> None:
        lines.append(text)
        print(text, file=sys.stderr if err else sys.stdout, flush=True)

    res = run_chapter(
        args.chapter,
        parameters=params,
        profile=args.profile,
        output=args.output,
        progress_bar=not args.quiet,
        log_output=args.log_output,
        echo=say,
    )
    passed = sum(c["status"] == "pass" for c in res.claims)
    say(
        f"nlcl run: {res.chapter}: {'ok' if res.ok else 'FAILED'} in {res.seconds:.1f} s; "
        f"claims {passed}/{len(res.claims)} pass; notebook: {res.output}"
    )
    for c in res.claims:
        say(
            f"  {c['status']:<15} {c['id']}: measured {c['measured']!r}, check {c['tolerance']}"
            + ("" if c["required"] else " (not required)")
        )
    if not res.ok:
        where = f"code cell {res.cell}" if res.cell else "outside a cell"
        say(f"nlcl run: {res.chapter} failed in {where}:\n{res.error}", err=True)
    if res.run_dir is not None:
        with open(res.run_dir / "log.txt", "a") as log:
            log.write("\n".join(lines) + "\n")
    if not res.ok:
        return 2 if res.usage else 1
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    from nlcl.harness.run.notebook import chapter_parameters, chapters, resolve_chapter

    if args.chapter is None:
        for name, path in chapters().items():
            print(f"{name:<34} {path}")
        return 0
    path = resolve_chapter(args.chapter)
    for name, p in chapter_parameters(path).items():
        sizes = f"; ci {p.sizes['ci']!r}, full {p.sizes['full']!r}" if p.sizes else ""
        paper = f"; {'paper' if p.from_paper else 'setting'} {p.paper!r} ({p.source})" if p.has_paper else ""
        type_ = p.type + (" | None" if p.nullable else "")
        print(f"{name} ({type_}) = {p.default!r}  # {p.help}\n    allowed: {p.allowed()}{sizes}{paper}")
    return 0


def _check_book_arguments(args: argparse.Namespace) -> None:
    """``nlcl book``'s usage errors (profile, jobs, unknown ``--only`` chapters), found at once."""
    from nlcl.core.validate import choice, positive_int
    from nlcl.harness.run.notebook import ChapterNotFound, chapters

    choice("profile", args.profile, PROFILES)
    positive_int("jobs", args.jobs)
    if args.only:
        todo = chapters()
        unknown = [c for c in args.only if c not in todo]
        if unknown:
            raise ChapterNotFound(f"unknown chapters {unknown}; available: {', '.join(todo)}")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``nlcl`` console script."""
    try:
        args = _parser().parse_args(argv)
        if args.command == "run":
            return _cmd_run(args)
        if args.command == "list":
            return _cmd_list(args)
        commands = paper_commands()
        if args.command in commands:
            return commands[args.command].run(args, services())
        if args.command == "sweep":
            return _cmd_sweep(args)
        _check_book_arguments(args)  # usage errors before the site machinery (torch, seaborn) loads
        from nlcl.harness.site.build import build_book

        return build_book(profile=args.profile, jobs=args.jobs, only=args.only, site=not args.no_site)
    except (ParameterError, FileNotFoundError) as exc:
        print(f"nlcl: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as exc:
        detail = f": {exc}" if str(exc) else ""
        print(f"nlcl: interrupted{detail}", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
