"""Benchmarks of the book as a whole: tools that time the book, not part of building it.

* :mod:`~nlcl.bench.book` — the whole-book benchmark record: ``python -m nlcl.bench.book`` builds
  the book timed and writes ``results/book-<profile>-bench-<cpu|gpu>.json`` (the record the book's
  schedule and its "Expected run time" sentences read, :mod:`nlcl.harness.records.run_time`).

It drives the book (``nlcl book``) and reads the harness's records; the harness never imports it.
"""
