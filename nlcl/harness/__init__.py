"""The book machinery: it runs a chapter, judges its claims, keeps the committed records and builds
the site. Paper code never imports it (a repository test and each paper's ``ruff.toml`` say so).

One subpackage per concern; each ``__init__`` says what its modules hold:

* :mod:`nlcl.harness.run` — running a chapter: :func:`nlcl.start` and the ``Run`` a chapter holds,
  parameters and profiles, run folders, executing a chapter with papermill, sweeps, the ``nlcl``
  command line, and the shape a chapter must have;
* :mod:`nlcl.harness.claims` — claims and ledgers: the registry a chapter declares and measures
  claims in, checks, verdicts, what an explanation predicts, the YAML ledgers and how claims show;
* :mod:`nlcl.harness.records` — committed records: provenance and where things live, the ``nlcl``
  modules a chapter's numbers depend on, results artifacts, paper-scale, seed-sweep and held-out
  records, and the measured run times;
* :mod:`nlcl.harness.site` — the site: building the book, the reproducibility report and dashboard,
  what staging adds to each published chapter, and the Sphinx extension.

The whole-book benchmark is not book machinery: it is :mod:`nlcl.bench`.

Two old module paths stay importable, because a chapter imports them and a chapter's code cells
are hashed into its committed records (changing the import would make the records stale):
``nlcl.harness.results`` is :mod:`nlcl.harness.records.results` and ``nlcl.harness.ledger`` is
:mod:`nlcl.harness.claims.ledger` (:data:`CHAPTER_PATHS`; the same module objects, not copies).
Everything else imports the new paths.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys

#: Old module paths that chapters import, and the modules they name now.
CHAPTER_PATHS = {
    "nlcl.harness.results": "nlcl.harness.records.results",
    "nlcl.harness.ledger": "nlcl.harness.claims.ledger",
}


class _ChapterPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Imports an old path of :data:`CHAPTER_PATHS` as the module it names now (one module object)."""

    def find_spec(self, name, path=None, target=None):
        return importlib.util.spec_from_loader(name, self) if name in CHAPTER_PATHS else None

    def create_module(self, spec):
        return None

    def exec_module(self, module):
        # The import system returns what sys.modules holds after this: the module itself.
        sys.modules[module.__name__] = importlib.import_module(CHAPTER_PATHS[module.__name__])


if not any(isinstance(f, _ChapterPaths) for f in sys.meta_path):
    sys.meta_path.append(_ChapterPaths())
