"""Claims and ledgers: what a chapter states about a paper, declared before it measures, and the verdicts.

* :mod:`~nlcl.harness.claims.registry` — the claims registry: a claim with its source, statement
  and check, measured once, recorded as JSON (``Claim``, ``ClaimRegistry``; re-exports the checks);
* :mod:`~nlcl.harness.claims.checks` — checks: the tolerance or predicate of a claim
  (``at_least``, ``between``, ``approx``, ...);
* :mod:`~nlcl.harness.claims.verdicts` — how a measurement becomes a verdict: kinds, scoped
  not-reproduced explanations, revisions, seed rules, invalid values;
* :mod:`~nlcl.harness.claims.predictions` — what a not-reproduced explanation predicts, and the
  rule that it predicts something (``python -m nlcl.harness.claims.predictions check DIR``);
* :mod:`~nlcl.harness.claims.ledger` — a chapter's claims ledger, ``book/claims/<chapter>.yaml``:
  reading and validating it, and turning its entries into declarations
  (``python -m nlcl.harness.claims.ledger`` lists the chapters with timing claims);
* :mod:`~nlcl.harness.claims.ledger_schema` — the JSON schema of a ledger;
* :mod:`~nlcl.harness.claims.ledger_view` — how a ledger is shown (a table) and how its use is
  checked (the claim calls of a chapter's source);
* :mod:`~nlcl.harness.claims.display` — how a claim record is shown: its verdict under the
  measuring cell and its row in a chapter table.
"""
