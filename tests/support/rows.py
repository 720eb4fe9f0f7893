"""Comparing the rows of two warehouses that hold the same entries.

Float sums are not associative, and DuckDB's parallel aggregates (with
`preserve_insertion_order=false`) add in whatever order its threads finish: the same
build on the same entries can differ in the last bit. Two warehouses are the same when
their rows pair up in a stable order and every float agrees within 1e-9 relative.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any


def in_stable_order(rows: Iterable[Sequence[Any]]) -> list[tuple]:
    """Rows sorted on every value (floats rounded for sorting only, so last-bit noise cannot reorder them)."""
    return sorted((tuple(r) for r in rows),
                  key=lambda r: tuple((0, "") if v is None else (1, round(v, 4)) if isinstance(v, float)
                                      else (1, str(v)) for v in r))


def same_value(a: Any, b: Any) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float)
                      and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-6))


def same_row(a: Sequence[Any], b: Sequence[Any]) -> bool:
    return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))


def first_difference(got: Sequence[Sequence[Any]], want: Sequence[Sequence[Any]]) -> str | None:
    """None when both lists of rows pair up value for value, else what differs first."""
    if len(got) != len(want):
        return f"{len(got)} rows, expected {len(want)}"
    for index, (a, b) in enumerate(zip(got, want)):
        if not same_row(a, b):
            return f"row {index}: {tuple(a)} != {tuple(b)}"
    return None
