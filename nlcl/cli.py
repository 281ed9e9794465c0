"""The ``nlcl`` command line: run one chapter, build the book, list chapters and their parameters.

Examples::

    nlcl list
    nlcl run tian-fig8-landscape -p activation linear
    nlcl run tian-fig8-landscape --profile full -o fig8-full.ipynb
    nlcl book --profile ci --jobs 2

Exit codes: 0 success; 1 a chapter failed (an error in a cell or a failed required claim) or the
site did not build; 2 a usage error (unknown chapter, parameter, profile, wrong type).
"""

from __future__ import annotations

import argparse
import sys

from . import __version__
from .validate import ParameterError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nlcl", description="Run the chapters of the nlcl book and build it."
    )
    parser.add_argument("--version", action="version", version=f"nlcl {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    run = sub.add_parser("run", help="execute one chapter with custom parameters")
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
    run.add_argument("--profile", choices=("ci", "full"), default=None, help="size profile (default: ci)")
    run.add_argument("-o", "--output", default=None, help="executed notebook (default: _build/notebooks/<chapter>.ipynb)")
    run.add_argument("--quiet", action="store_true", help="no progress bar")

    book = sub.add_parser("book", help="execute every chapter and build the site into _build/html")
    book.add_argument("--profile", choices=("ci", "full"), default="ci")
    book.add_argument("--jobs", "-j", type=int, default=1, help="chapters executed in parallel")
    book.add_argument("--only", nargs="+", default=None, metavar="CHAPTER", help="execute only these chapters")
    book.add_argument("--no-site", action="store_true", help="execute and report, but do not build the site")

    lst = sub.add_parser("list", help="list the chapters, or one chapter's parameters")
    lst.add_argument("chapter", nargs="?", default=None)
    return parser


def _cmd_run(args: argparse.Namespace) -> int:
    from .pipeline import run_chapter

    params = {}
    for name, value in args.parameter:
        if name in params:
            raise ParameterError(f"parameter {name!r} is given twice")
        params[name] = value
    res = run_chapter(
        args.chapter, parameters=params, profile=args.profile, output=args.output, progress_bar=not args.quiet
    )
    passed = sum(c["status"] == "pass" for c in res.claims)
    print(f"nlcl run: {res.chapter}: {'ok' if res.ok else 'FAILED'} in {res.seconds:.1f} s; "
          f"claims {passed}/{len(res.claims)} pass; notebook: {res.output}")
    for c in res.claims:
        print(f"  {c['status']:<15} {c['id']}: measured {c['measured']!r}, check {c['tolerance']}"
              + ("" if c["required"] else " (not required)"))
    if not res.ok:
        where = f"code cell {res.cell}" if res.cell else "outside a cell"
        print(f"nlcl run: {res.chapter} failed in {where}:\n{res.error}", file=sys.stderr)
        return 1
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    from .pipeline import chapter_parameters, chapters, resolve_chapter, to_notebook

    if args.chapter is None:
        for name, path in chapters().items():
            print(f"{name:<34} {path}")
        return 0
    path = resolve_chapter(args.chapter)
    for name, p in chapter_parameters(to_notebook(path), path.stem).items():
        help_ = f"  # {p['help']}" if p["help"] else ""
        print(f"{name} ({p['type']}) = {p['default']}{help_}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``nlcl`` console script."""
    args = _parser().parse_args(argv)
    try:
        if args.command == "run":
            return _cmd_run(args)
        if args.command == "list":
            return _cmd_list(args)
        from .pipeline import build_book

        return build_book(profile=args.profile, jobs=args.jobs, only=args.only, site=not args.no_site)
    except (ParameterError, FileNotFoundError) as exc:
        print(f"nlcl: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # pragma: no cover
        print("nlcl: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
