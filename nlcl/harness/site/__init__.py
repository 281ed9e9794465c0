"""The site: ``nlcl book`` runs every chapter, stages what the reader gets, and builds the book.

* :mod:`~nlcl.harness.site.build` — the book: every chapter of ``_toc.yml`` executed into a staging
  tree, the report written, the site built with jupyter-book (``build_book``);
* :mod:`~nlcl.harness.site.schedule` — which chapter ``nlcl book`` starts when, and how many cores
  a chapter with a parallel loop gets;
* :mod:`~nlcl.harness.site.report` — the reproducibility report: every claim and every chapter's
  run time on one page;
* :mod:`~nlcl.harness.site.dashboard` — the claims dashboard of the reproducibility page: a summary
  figure and a filterable table;
* :mod:`~nlcl.harness.site.extras` — what the staged book gets before jupyter-book builds it (static
  files, the per-chapter additions below, the dashboard);
* :mod:`~nlcl.harness.site.rerun` — the "Re-run this chapter" box and the launch set-up of a
  published chapter notebook;
* :mod:`~nlcl.harness.site.outputs` — readable outputs: progress residue removed, warnings and long
  printed output collapsed;
* :mod:`~nlcl.harness.site.sphinx_ext` — the Sphinx extension of the site (MathJax served from the
  site, identical page scripts once, the book's directives; ``_config.yml``);
* :mod:`~nlcl.harness.site.directives` — the book's own MyST directives: ``nlcl-source`` (the
  package's code on the page) and ``nlcl-claims`` (a claim's declaration from the ledger);
* :mod:`~nlcl.harness.site.page` — what a reader reads on a chapter's page: every ``nlcl`` function
  a chapter calls is shown by ``nlcl-source``, and no project history in the prose.
"""
