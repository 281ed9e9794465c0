"""Running a chapter: from ``nlcl run`` (or papermill) to a finished run in a run folder of its own.

* :mod:`~nlcl.harness.run.chapter` — the life of one chapter run: :func:`nlcl.start` and the
  :class:`~nlcl.harness.run.chapter.Run` a chapter holds (parameters, seed, device, claims, ledger,
  provenance, ``run.finish()``);
* :mod:`~nlcl.harness.run.spec` — chapter parameters, declared once (the papermill cell and the
  ``spec=`` literal) and checked before anything runs; the profiles (``PROFILES``);
* :mod:`~nlcl.harness.run.runs` — run folders: every run writes into a folder of its own;
* :mod:`~nlcl.harness.run.notebook` — executing one chapter: jupytext source, checked parameters,
  papermill, into a run folder;
* :mod:`~nlcl.harness.run.sweep` — ``nlcl sweep``: one chapter over a grid of parameters on Dask;
* :mod:`~nlcl.harness.run.cli` — the ``nlcl`` command line;
* :mod:`~nlcl.harness.run.edges` — every chapter at the ends of its declared parameters, one at a
  time: it runs, or stops with a sentence naming the parameter (a gate test);
* :mod:`~nlcl.harness.run.chapter_shape` — the shape of a chapter that reads like a paper (enforced
  by a repository test).
"""
