"""Paper-specific subcommands of ``nlcl``, registered by the paper's subpackage.

A paper subpackage that offers commands (``nlcl train-grid`` and ``nlcl bench`` in
:mod:`nlcl.tian.commands`) lists them as ``COMMANDS``, a tuple of :class:`Command`; the command
line (:mod:`nlcl.harness.run.cli`) finds them by the subpackage's name and adds each as a subcommand,
so the generic command line imports no paper code. Paper code never imports the harness: what a
command needs from it (saving a results artifact, the code's commit) comes in :class:`Services`.
A ``commands`` module stays light (no torch, numpy or pandas at import time): ``nlcl --help``
imports it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["Command", "Services"]


@dataclass(frozen=True)
class Services:
    """What the harness lends a paper command: ``save_artifact(name, table, **meta)`` writes
    ``results/<name>.csv/.json`` (:func:`nlcl.harness.records.results.save`), ``git_commit()`` names the code."""

    save_artifact: Callable[..., Any]
    git_commit: Callable[[], str]


@dataclass(frozen=True)
class Command:
    """One subcommand: its name, one line of help, a function that adds its arguments to an
    ``argparse`` parser, and ``run(args, services) -> exit status``."""

    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace, Services], int]
