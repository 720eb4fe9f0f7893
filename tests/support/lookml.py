"""Just enough LookML reading to check looker/ against the marts: which table each view reads,
which columns its SQL uses, which fields it defines, and which fields the model references."""

from __future__ import annotations

import re
from pathlib import Path

VIEW = re.compile(r"^view:\s*(\w+)\s*{", re.M)
TABLE = re.compile(r"sql_table_name:\s*`[\w-]+\.(\w+)`")
FIELD = re.compile(r"^\s*(dimension|dimension_group|measure):\s*(\w+)\s*{", re.M)
COLUMN = re.compile(r"\$\{TABLE\}\.(\w+)")
REFERENCE = re.compile(r"\$\{(\w+)\.(\w+)\}")
FILTER = re.compile(r"filters:\s*\[(\w+)\.(\w+):")
GROUP_SUFFIXES = ("raw", "time", "minute", "hour", "date", "week", "month")


def read_views(folder: Path) -> dict[str, dict]:
    views = {}
    for path in sorted(folder.glob("*.view.lkml")):
        text = path.read_text()
        name = VIEW.search(text).group(1)
        fields = set()
        for kind, field in FIELD.findall(text):
            fields |= {f"{field}_{s}" for s in GROUP_SUFFIXES} if kind == "dimension_group" else {field}
        views[name] = {"table": TABLE.search(text).group(1), "columns": set(COLUMN.findall(text)),
                       "fields": fields, "references": set(REFERENCE.findall(text)), "path": path}
    return views


def model_references(path: Path) -> set[tuple[str, str]]:
    text = path.read_text()
    return set(REFERENCE.findall(text)) | set(FILTER.findall(text))
