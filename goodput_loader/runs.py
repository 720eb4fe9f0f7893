"""Which runs a command means: `--run` values against the marts' (project, run) identity.

A run is identified by its project and its name (`run_id` = `<project_id>/<run_name>` in every
model): the same name logged in two projects is two runs. People mostly know the name, so a
`--run` value matches a run by its run_id or by its name; a name shared by several projects
matches each of them, and a command that needs exactly one run says so instead of guessing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from goodput_loader.errors import LoaderError


def select_runs(runs: Iterable[dict[str, Any]], wanted: Sequence[str], what: str = "such run in the marts"
                ) -> list[dict[str, Any]]:
    """The rows of `runs` (with run_id and run_name) that `wanted` names; all of them when `wanted`
    is empty. A value that is some run's run_id means that run alone (even if another run is named
    so); otherwise it means every run of that name. A value that matches nothing is an error."""
    runs = list(runs)
    if not wanted:
        return runs
    chosen: dict[str, dict[str, Any]] = {}
    missing = []
    for value in wanted:
        by_id = [run for run in runs if run["run_id"] == value]
        matches = by_id or [run for run in runs if run["run_name"] == value]
        if not matches:
            missing.append(value)
        chosen.update((run["run_id"], run) for run in matches)
    if missing:
        raise LoaderError(f"no {what}: {', '.join(sorted(set(missing)))}")
    return [run for run in runs if run["run_id"] in chosen]


def shared_names(runs: Iterable[dict[str, Any]]) -> dict[str, list[str]]:
    """Run names held by more than one run (several projects), with their run_ids."""
    ids: dict[str, list[str]] = {}
    for run in runs:
        ids.setdefault(run["run_name"], []).append(run["run_id"])
    return {name: sorted(run_ids) for name, run_ids in ids.items() if len(run_ids) > 1}


def labels(runs: Iterable[dict[str, Any]]) -> dict[str, str]:
    """What to call each run on screen: its name, or its run_id where the name alone is ambiguous
    (another project's run has that name, or it is another run's run_id)."""
    runs = list(runs)
    shared = shared_names(runs)
    ids = {run["run_id"] for run in runs}
    return {run["run_id"]: run["run_id"] if run["run_name"] in shared or run["run_name"] in ids else run["run_name"]
            for run in runs}
