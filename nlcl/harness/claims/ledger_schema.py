"""The JSON schema of a chapter's claims ledger, ``book/claims/<chapter>.yaml`` (:mod:`nlcl.harness.claims.ledger`).

A ledger is the static part of every claim of a chapter, declared before anything is measured:
id, source, statement, the paper's value, kind, a reproduction's basis (``exact``, ``dynamical`` or
``statistical``: :data:`~nlcl.harness.claims.verdicts.BASES`), whether it is required, the check, the seed rule,
revisions and not-reproduced explanations with their predictions, all as data. Numbers in a check
or a seed rule may be ``{ref: NAME}``, a value the chapter computes before declaring (listed under
``values:``); a not-reproduced prediction may test a diagnostic the chapter provides (listed under
``diagnostics:``). Validated with ``jsonschema`` (Draft 2020-12).
"""

from __future__ import annotations

from typing import Any

from nlcl.harness.claims.predictions import SOURCES
from nlcl.harness.claims.verdicts import BASES
from nlcl.harness.run.spec import PROFILES

__all__ = ["CHECK_KINDS", "SEED_RULES", "SCHEMA"]

#: The check constructors of :mod:`nlcl.harness.claims.checks`, as the keys of a ``check:`` mapping.
CHECK_KINDS = ("at_least", "at_most", "greater_than", "less_than", "exactly", "between", "approx", "is_true")
#: The seed rules of :mod:`nlcl.harness.claims.verdicts`: those without an argument, then those with one.
SEED_RULES = (
    "check_on_mean",
    "check_on_pooled",
    "holds_on_fraction",
    "mean_minus_2se_above",
    "mean_plus_2se_below",
)

_NAME = {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$"}
_TEXT = {"type": "string", "minLength": 1, "pattern": r"\S"}
_REF = {
    "type": "object",
    "properties": {"ref": _NAME},
    "required": ["ref"],
    "additionalProperties": False,
}
_NUMBER = {"anyOf": [{"type": "number"}, {"$ref": "#/$defs/ref"}]}
# A diagnostic: its description (measured in the run), or the description and where it comes from
# (nlcl.harness.claims.predictions.SOURCES: run, artifact, derived).
_DIAGNOSTIC = {
    "anyOf": [
        _TEXT,
        {
            "type": "object",
            "properties": {"text": _TEXT, "source": {"enum": list(SOURCES)}},
            "required": ["text", "source"],
            "additionalProperties": False,
        },
    ]
}
# [lo, hi] of a claim's measured quantity (null: unbounded on that side), e.g. [0, 1] for a |cos|.
_RANGE = {
    "type": "array",
    "items": {"type": ["number", "null"]},
    "minItems": 2,
    "maxItems": 2,
}

_CHECK_PROPERTIES: dict[str, Any] = {
    "at_least": _NUMBER,
    "at_most": _NUMBER,
    "greater_than": _NUMBER,
    "less_than": _NUMBER,
    "exactly": {},  # any value (a number, string, boolean, list), or {ref: NAME}
    "between": {"type": "array", "items": _NUMBER, "minItems": 2, "maxItems": 2},
    "approx": {
        "type": "object",
        "properties": {"value": _NUMBER, "rtol": _NUMBER, "atol": _NUMBER},
        "required": ["value"],
        "anyOf": [{"required": ["rtol"]}, {"required": ["atol"]}],
        "additionalProperties": False,
    },
    "is_true": {"const": True},
}

_CHECK = {
    "type": "object",
    "properties": _CHECK_PROPERTIES,
    "additionalProperties": False,
    "minProperties": 1,
    "maxProperties": 1,
}

# A prediction of a not-reproduced explanation: one check on the measured value, or on the
# diagnostic it names.
_CONDITION = {
    "type": "object",
    "properties": {"diagnostic": _NAME, **_CHECK_PROPERTIES},
    "additionalProperties": False,
    "minProperties": 1,
}

_DECIDE = {
    "anyOf": [
        {"enum": ["check_on_mean", "check_on_pooled"]},
        {
            "type": "object",
            "properties": {
                "holds_on_fraction": {
                    "anyOf": [{"type": "number", "exclusiveMinimum": 0, "maximum": 1}, _REF]
                },
                "mean_minus_2se_above": _NUMBER,
                "mean_plus_2se_below": _NUMBER,
            },
            "additionalProperties": False,
            "minProperties": 1,
            "maxProperties": 1,
        },
    ]
}

_REQUIRED = {
    "anyOf": [
        {"type": "boolean"},
        {"const": "paper_setting"},
        {
            "type": "object",
            "properties": {"at_paper": {"type": "array", "items": _NAME, "minItems": 1}},
            "required": ["at_paper"],
            "additionalProperties": False,
        },
        {"$ref": "#/$defs/ref"},
    ]
}

_PROFILES = {"type": "array", "items": {"enum": list(PROFILES)}, "uniqueItems": True, "minItems": 1}

_REVISION = {
    "type": "object",
    "properties": {
        "from": {"type": ["string", "number"]},
        "to": {"type": ["string", "number"]},
        "reason": _TEXT,
        "date": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}$"},
    },
    "required": ["from", "to", "reason", "date"],
    "additionalProperties": False,
}

_NOT_REPRODUCED = {
    "anyOf": [
        _TEXT,  # an explanation observed in the ci profile, in any setting
        {
            "type": "object",
            "properties": {
                "why": _TEXT,
                "evidence": {"type": "string"},
                "profiles": _PROFILES,
                "setting": {"type": "object"},
                "expected": {
                    "anyOf": [
                        {"$ref": "#/$defs/condition"},
                        {"type": "array", "items": {"$ref": "#/$defs/condition"}, "minItems": 1},
                    ]
                },
            },
            "required": ["why"],
            "additionalProperties": False,
        },
    ]
}

_COMMON = {  # fields a claim may take from the ledger's defaults
    "required": _REQUIRED,
    "profiles": _PROFILES,
    "kind": {"enum": ["reproduction", "check"]},
    "decide": {"$ref": "#/$defs/decide"},
    "timing": {"type": "boolean"},
    # false: nothing random in the claim's computation, so its held-out verdict is no evidence
    # (nlcl.harness.records.held_out); true by default
    "seeded": {"type": "boolean"},
}

_CLAIM = {
    "type": "object",
    "properties": {
        "id": {"type": "string", "pattern": r"^\S+$"},
        "source": _TEXT,
        "statement": _TEXT,
        "check": {"$ref": "#/$defs/check"},
        "paper": {},
        **_COMMON,
        "basis": {"enum": list(BASES)},  # a reproduction's; read_ledger requires it there
        "range": _RANGE,  # the values the measured quantity can take: where its failure region is sampled
        "revised": {"type": "array", "items": _REVISION},
        "not_reproduced": _NOT_REPRODUCED,
        # a declared failure: a required reproduction that fails and that no prediction explains
        "fails": {
            "type": "object",
            "properties": {"why": _TEXT},
            "required": ["why"],
            "additionalProperties": False,
        },
    },
    "required": ["id", "source", "statement", "check"],
    "additionalProperties": False,
}

#: The schema of ``book/claims/<chapter>.yaml``.
SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "nlcl claims ledger",
    "type": "object",
    "properties": {
        "chapter": {"type": "string", "pattern": r"^[A-Za-z0-9_-]+$"},
        "values": {"type": "object", "propertyNames": _NAME, "additionalProperties": _TEXT},
        "diagnostics": {"type": "object", "propertyNames": _NAME, "additionalProperties": _DIAGNOSTIC},
        "defaults": {"type": "object", "properties": _COMMON, "additionalProperties": False},
        "claims": {"type": "array", "items": {"$ref": "#/$defs/claim"}, "minItems": 1},
    },
    "required": ["chapter", "claims"],
    "additionalProperties": False,
    "$defs": {
        "ref": _REF,
        "check": _CHECK,
        "condition": _CONDITION,
        "decide": _DECIDE,
        "claim": _CLAIM,
    },
}
