"""nlcl.core.commands and the command line's discovery of paper commands (nlcl.harness.run.cli)."""

import argparse
import types

import pytest

from nlcl.core.commands import Command, Services
from nlcl.harness.run import cli


def test_a_command_is_data():
    cmd = Command("hello", "say hello", lambda p: p.add_argument("--name"), lambda a, s: 0)
    parser = argparse.ArgumentParser()
    cmd.add_arguments(parser)
    assert parser.parse_args(["--name", "x"]).name == "x"
    assert cmd.run(None, Services(save_artifact=print, git_commit=lambda: "c")) == 0


def test_the_command_line_finds_the_papers_commands():
    found = cli.paper_commands()
    assert {"train-grid", "bench"} <= set(found)
    assert not set(found) & set(cli.BOOK_COMMANDS)
    assert isinstance(cli.services(), Services)


def test_a_command_registered_twice_is_refused(monkeypatch):
    fake = types.SimpleNamespace(COMMANDS=(Command("run", "clash", lambda p: None, lambda a, s: 0),))
    real_import = cli.importlib.import_module
    monkeypatch.setattr(
        cli.importlib,
        "import_module",
        lambda name: fake if name == "nlcl.esser.commands" else real_import(name),
    )
    monkeypatch.setattr(cli.importlib.util, "find_spec", lambda name: object())
    with pytest.raises(RuntimeError, match="'run' a second time"):
        cli.paper_commands()
