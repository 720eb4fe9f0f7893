"""dbt build (models, data tests, unit tests) on a temporary DuckDB of simulated runs."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from conftest import dbt_build, query, run_cli

from goodput_loader.simulate import RunSpec, fleet, write_run


def test_build_tests_and_report_on_simulated_runs(tmp_path, warehouse):
    start = dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc)
    specs = fleet(4, seed=3, steps=800, restarts=1, running=1, start=start,
                  base=RunSpec(name="", start=0.0, duplicate_rate=0.01))
    for spec in specs:
        write_run(spec, tmp_path / "data", "proj", compress=True)
    run_cli("load", "--duckdb", warehouse, tmp_path / "data")
    result = dbt_build(warehouse, start + dt.timedelta(days=1))
    assert "ERROR=0" in result.stdout or result.returncode == 0

    rows = query(warehouse, "select run_name, is_running, goodput_pct, disruptions from fct_goodput_cumulative "
                            "order by run_name")
    assert [r[0] for r in rows] == [s.name for s in specs]
    assert [r[1] for r in rows] == [not s.finished for s in specs]
    assert all(0 < r[2] < 100 for r in rows)
    assert [r[3] for r in rows] == [s.restarts for s in specs]
    assert query(warehouse, "select count(*) from fct_disruptions") == [(sum(s.restarts for s in specs),)]

    report = run_cli("report", "--duckdb", warehouse)
    assert "Goodput per run" in report.stdout and specs[0].name in report.stdout
    assert "Rolling Goodput" in report.stdout and "1h" in report.stdout and "5d" in report.stdout
    as_json = run_cli("report", "--json", "--duckdb", warehouse, "--run", specs[0].name)
    assert '"badput_type": "CUSTOM_BADPUT_EVENTS"' in as_json.stdout
    windows = json.loads(as_json.stdout)["runs"][0]["windows"]
    assert [w["window_seconds"] for w in windows] == [3600, 86400, 259200, 432000]
    latest = query(warehouse, "select goodput_pct from fct_goodput_rolling_latest "
                              f"where run_name = '{specs[0].name}' order by window_seconds")
    assert [w["goodput_pct"] for w in windows] == [r[0] for r in latest]
    assert all(w["badput"] for w in windows)
    check_lookml_against(warehouse)
    missing = run_cli("report", "--duckdb", warehouse, "--run", "nope", expect=1)
    assert "no such run" in missing.stderr


def check_lookml_against(warehouse) -> None:
    """looker/ parsed (lkml for views and the model, YAML for the dashboard): every view reads a mart that
    exists and only its columns; every field a view, explore, drill, datagroup or dashboard tile uses is
    defined, in a view the tile's explore holds."""
    import re

    from conftest import ROOT
    from support.lookml import read_dashboards, read_model, read_views

    def tables() -> set[str]:
        return {row[0] for row in query(warehouse, "select table_name from information_schema.tables "
                                                   "where table_schema = 'main'")}

    views = read_views(ROOT / "looker" / "views")
    assert {"fct_goodput_rolling", "fct_badput_rolling", "fct_goodput_cumulative", "fct_steps", "fct_disruptions",
            "fct_goodput_fleet_daily", "fct_badput_fleet_daily"} <= set(views)
    for name, view in views.items():
        columns = {row[0] for row in query(warehouse, f"describe main.{view['table']}")}
        assert view["columns"] <= columns, f"{view['path'].name}: no such columns {view['columns'] - columns}"
        for ref_view, field in view["references"]:
            assert ref_view in ("TABLE", name) or field in views[ref_view]["fields"], (name, ref_view, field)
        assert view["drill_fields"] <= view["fields"], (name, view["drill_fields"] - view["fields"])

    model = read_model(ROOT / "looker" / "goodput.model.lkml")
    datagroups = {d["name"]: d for d in model["datagroups"]}
    assert model["persist_with"] in datagroups
    for datagroup in datagroups.values():
        # the cache ends with a build: its trigger reads a table every build writes
        assert set(re.findall(r"`[\w-]+\.(\w+)`", datagroup["sql_trigger"])) <= tables(), datagroup
    for name, explore in model["explores"].items():
        assert explore["views"] <= set(views), (name, explore["views"] - set(views))
        for ref_view, field in explore["used"]:
            assert ref_view in explore["views"] and field in views[ref_view]["fields"], (name, ref_view, field)

    dashboards = read_dashboards(ROOT / "looker" / "dashboards")
    assert dashboards and "/dashboards/*.dashboard.lookml" in model["includes"]

    def defined(explore: str, field: str) -> bool:
        view, _, name = field.partition(".")
        return view in model["explores"][explore]["views"] and name in views[view]["fields"]

    for dashboard in dashboards:
        filters = {f["name"]: f for f in dashboard.get("filters", [])}
        for f in filters.values():
            assert f["model"] == "goodput" and defined(f["explore"], f["field"]), f
        assert len(dashboard["elements"]) >= 5
        for tile in dashboard["elements"]:
            assert tile["model"] == "goodput" and tile["explore"] in model["explores"], tile["name"]
            used = (tile["fields"] + [sort.split()[0] for sort in tile.get("sorts", [])]
                    + list(tile.get("filters", {})) + list(tile.get("listen", {}).values()))
            for field in used:
                assert defined(tile["explore"], field), (tile["name"], field)
            assert set(tile.get("listen", {})) <= set(filters), tile["name"]


def test_report_before_build_says_what_to_do(warehouse, tmp_path):
    spec = RunSpec(name="r", start=1_795_000_000.0, steps=20)
    path, _ = write_run(spec, tmp_path, "proj", compress=False)
    run_cli("load", "--duckdb", warehouse, path)
    result = run_cli("report", "--duckdb", warehouse, expect=1)
    assert "goodput-loader build" in result.stderr


def test_every_model_has_a_grain_test(tmp_path):
    """Each model says what one row is: a unique test on a column, or unique_combination_of_columns."""
    import subprocess
    import sys

    from conftest import ROOT

    target = tmp_path / "target"
    result = subprocess.run([str(Path(sys.executable).parent / "dbt"), "parse", "--target-path", str(target),
                             "--log-path", str(tmp_path / "logs")], cwd=ROOT, capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stdout[-4000:]
    manifest = json.loads((target / "manifest.json").read_text())
    models = {uid for uid, node in manifest["nodes"].items() if node["resource_type"] == "model"}
    grained = set()
    for node in manifest["nodes"].values():
        test = node.get("test_metadata") or {}
        if node["resource_type"] == "test" and test.get("name") in ("unique", "unique_combination_of_columns"):
            grained.update(dep for dep in node["depends_on"]["nodes"] if dep in models)
    assert models and not sorted(models - grained), sorted(models - grained)
