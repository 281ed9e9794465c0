"""Tian 2023, Sec. 5 and App. E.2: the synthetic token task, as one subpackage.

- :mod:`~nlcl.tian.tokens.world`: the token generator (K tokens, M classes, P positions) and its views;
- :mod:`~nlcl.tian.tokens.tables`: the exact loss and gradients in per-RF table space (the fast engine);
- :mod:`~nlcl.tian.tokens.fused`: the same step as one ``torch.compile`` graph per stack shape (opt-in);
- :mod:`~nlcl.tian.tokens.stacks`: stacks of configurations trained together (build, cost, workers, results);
- :mod:`~nlcl.tian.tokens.training`: the batched trainer and the paper's grid of runs;
- :mod:`~nlcl.tian.tokens.grid`: the grid on Dask workers, saved as results artifacts;
- :mod:`~nlcl.tian.tokens.metrics`: matching scores, the claims' predicates and Table 1;
- :mod:`~nlcl.tian.tokens.bench`: the benchmark behind ``nlcl bench``.

Import the module you need (``from nlcl.tian.tokens.world import make_token_worlds``); this
package imports nothing itself, so ``import nlcl`` stays light.
"""
