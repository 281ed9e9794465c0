"""The oracle record in the chapter ``book/tian-tokens.py`` (issue 18; Tian 2023, Eqs. 16, 181).

``tests/oracle/`` re-implements the released trainer (``bn_gen.py``) and compares it with nlcl on
issue 18's grid, scoring χ̄± (Eqs. 16, 181) with the book's cosine and with the released
``check_result`` normaliser; the committed records ``results/tian-tokens-oracle.json`` and
``results/tian-tokens-oracle-replication.json`` hold the cells. This module names the cells and
tabulates them (mean ± s.e. per trainer and scoring, the verdicts, and the differing cells again
at fresh seeds).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "ACT_SHORT",
    "cell_name",
    "oracle_cells",
    "oracle_table",
    "replication_rows",
]

#: Short activation names of the oracle tables.
ACT_SHORT = {
    "quadratic": "x²",
    "relu": "ReLU",
    "leaky_relu": "LeakyReLU",
    "linear": "linear",
    "sigmoid": "sigmoid",
}


def cell_name(loss: str, bn: str, activation: str) -> str:
    """A cell of issue 18's grid as the tables show it, e.g. "quadratic, BN mean, x²"."""
    return (
        f"{'InfoNCE' if loss == 'infonce' else 'quadratic'}, "
        f"{'BN mean' if bn == 'mean' else 'no BN'}, {ACT_SHORT[activation]}"
    )


def oracle_cells(record: Mapping[str, Any]) -> pd.DataFrame:
    """The cells of the oracle record, with their names and oracle seed counts."""
    oc = pd.DataFrame(record["cells"])
    oc["cell"] = [cell_name(lo, b, a) for lo, b, a in zip(oc.loss, oc.bn, oc.activation)]
    oc["n_oracle"] = oc.oracle_seeds.map(len)
    return oc


def _pm(rows: pd.DataFrame, col: str) -> list[str]:
    return [
        f"{m:.3f} ± {s:.3f}" if s == s else f"{m:.3f}"
        for m, s in zip(rows[col], rows[col + "_se"].fillna(np.nan))
    ]


def oracle_table(oc: pd.DataFrame, record: Mapping[str, Any]) -> pd.DataFrame:
    """The oracle record cell by cell: oracle and nlcl χ̄± (mean ± s.e.) and the verdicts."""
    return pd.DataFrame(
        {
            "oracle seeds": oc.n_oracle.values,
            "oracle χ̄+": _pm(oc, "oracle_chi_plus"),
            "oracle χ̄−": _pm(oc, "oracle_chi_minus"),
            "nlcl χ̄+ (released)": _pm(oc, "nlcl_released_chi_plus"),
            "nlcl χ̄− (released)": _pm(oc, "nlcl_released_chi_minus"),
            "verdict (released)": oc.verdict_released.values,
            "nlcl χ̄− (cosine)": _pm(oc, "nlcl_cosine_chi_minus"),
            "verdict (cosine)": oc.verdict_cosine.values,
        },
        index=pd.Index(oc.cell, name=f"{len(record['config']['seeds'])} nlcl seeds per cell"),
    )


def replication_rows(replication: Mapping[str, Any]) -> tuple[list[dict], list[str]]:
    """The differing cells at the record's seeds and at the fresh seeds 5-9, and those whose
    difference keeps its sign."""
    rep_rows, same_sign = [], []
    for c in replication["cells"]:
        name = cell_name(c["loss"], c["bn"], c["activation"])
        for sc in c["differed_in"]:
            label = "χ̄+" if sc == "chi_plus" else "χ̄−"
            before, after = c["record"][f"diff_released_{sc}"], c["fresh"][f"diff_released_{sc}"]
            tol_before = c["record"][f"tol_released_{sc}"]
            tol_after = c["fresh"][f"tol_released_{sc}"]
            rep_rows.append(
                {
                    "cell": name,
                    "score": label,
                    "seeds 0-4: nlcl − oracle (tol)": f"{before:+.3f} ({tol_before:.3f})",
                    "seeds 5-9: nlcl − oracle (tol)": f"{after:+.3f} ({tol_after:.3f})",
                    "replicates": sc in c["differs_again_in"],
                }
            )
            if (before > 0) == (after > 0):
                same_sign.append(f"{name} {label}")
    return rep_rows, same_sign
