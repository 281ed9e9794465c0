"""Committed records: what a run produced and what it depended on, kept under ``results/``.

* :mod:`~nlcl.harness.records.provenance` — where things live (repository root, build directory)
  and what produced a result (commit, profile, parameters, device, versions, numerics, times);
* :mod:`~nlcl.harness.records.sources` — which ``nlcl`` source a chapter's numbers depend on, so
  that a record goes stale when it changes (the harness itself does not count);
* :mod:`~nlcl.harness.records.results` — results artifacts: a table plus its provenance
  (``results/<name>.csv`` and ``.json``), refused when its parameters differ;
* :mod:`~nlcl.harness.records.paper_scale` — paper-scale verdicts: a chapter's claims run with
  ``--profile full`` (``results/claims-full/``; ``python -m nlcl.harness.records.paper_scale``);
* :mod:`~nlcl.harness.records.seed_sweeps` — verdicts across base seeds 0–4, the development set
  (``results/seed-sweeps/``; ``python -m nlcl.harness.records.seed_sweeps``);
* :mod:`~nlcl.harness.records.held_out` — held-out verdicts, the verdicts of record
  accumulated over every held-out set at today's code (``results/held-out/``;
  ``python -m nlcl.harness.records.held_out run|check|replay|archive``);
* :mod:`~nlcl.harness.records.exercises` — what the book measured at each "Try it yourself"
  exercise, the record an answer's numbers are checked against (``results/exercises/``;
  ``python -m nlcl.harness.records.exercises run|check``);
* :mod:`~nlcl.harness.records.run_time` — a chapter's measured run time, from the whole-book
  benchmark records (``results/book-<profile>-bench-<cpu|gpu>.json``, written by :mod:`nlcl.bench.book`).
"""
