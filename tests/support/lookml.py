"""looker/ read with the `lkml` parser (views, model) and YAML (LookML dashboards), to check it against
the marts: which table each view reads, which columns its SQL uses, which fields it defines and which
fields the explores and dashboard tiles use."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import lkml
import yaml

# LookML SQL is SQL with ${...} substitutions: these find the substitutions, not LookML structure
COLUMN = re.compile(r"\$\{TABLE\}\.(\w+)")
REFERENCE = re.compile(r"\$\{(\w+)\.(\w+)\}")
TABLE = re.compile(r"^\s*`[\w-]+\.(\w+)`\s*$")
FIELD_KINDS = ("dimensions", "dimension_groups", "measures")


def _fields(view: dict[str, Any]) -> set[str]:
    """Every field a view defines; a dimension group's fields are <name>_<timeframe>."""
    fields: set[str] = set()
    for kind in FIELD_KINDS:
        for field in view.get(kind, []):
            if kind == "dimension_groups":
                fields |= {f"{field['name']}_{timeframe}" for timeframe in field.get("timeframes", [])}
            else:
                fields.add(field["name"])
    return fields


def _sql_texts(node: Any) -> list[str]:
    """Every SQL string under a parsed node (sql, sql_on, sql_trigger, sql_distinct_key, ...)."""
    if isinstance(node, dict):
        return [text for key, value in node.items()
                for text in ([value] if key.startswith("sql") and isinstance(value, str) else _sql_texts(value))]
    if isinstance(node, list):
        return [text for item in node for text in _sql_texts(item)]
    return []


def read_views(folder: Path) -> dict[str, dict[str, Any]]:
    """view name -> table (the mart it reads), columns (${TABLE}.x), fields, references (${view.field}),
    drill_fields, path."""
    views = {}
    for path in sorted(folder.glob("*.view.lkml")):
        for view in lkml.load(path.read_text())["views"]:
            table = TABLE.match(view["sql_table_name"])
            assert table, f"{path.name}: sql_table_name {view['sql_table_name']!r} is not `dataset.table`"
            sql = " ".join(_sql_texts(view))
            drills = {field for kind in FIELD_KINDS for f in view.get(kind, []) for field in f.get("drill_fields", [])}
            views[view["name"]] = {"table": table.group(1), "columns": set(COLUMN.findall(sql)),
                                   "fields": _fields(view), "references": set(REFERENCE.findall(sql)),
                                   "drill_fields": drills, "path": path}
    return views


def read_model(path: Path) -> dict[str, Any]:
    """The parsed model: includes, datagroups, persist_with, and each explore's views (its own and its
    joins') with the fields its SQL and filters use as (view, field)."""
    model = lkml.load(path.read_text())
    explores = {}
    for explore in model.get("explores", []):
        base = explore.get("view_name") or explore.get("from") or explore["name"]
        views = {base} | {join.get("from") or join["name"] for join in explore.get("joins", [])}
        used = set(REFERENCE.findall(" ".join(_sql_texts(explore))))
        for group in explore.get("always_filter", {}).get("filters__all", []):
            for item in group:
                used |= {tuple(field.split(".", 1)) for field in item}
        explores[explore["name"]] = {"views": views, "base": base, "used": used}
    return {"includes": model.get("includes", []), "datagroups": model.get("datagroups", []),
            "persist_with": model.get("persist_with"), "explores": explores}


def read_dashboards(folder: Path) -> list[dict[str, Any]]:
    """Every LookML dashboard (YAML: a list with one dashboard each)."""
    return [dashboard for path in sorted(folder.glob("*.dashboard.lookml"))
            for dashboard in yaml.safe_load(path.read_text())]
