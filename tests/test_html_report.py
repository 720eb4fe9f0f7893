"""`report --html` opened in a real browser: headless Chromium renders the page, and what its charts
hold is compared with the marts.

The warehouse: simulated runs (one elastic, one still running, restarts), a long run of 40,000 steps
(its series must be thinned: the page stays small and opens fast, the slowest steps kept), a run the
library raises on (no Goodput: named, not charted), and a custom Badput type that is markup
(`</script><img ...>`: user text must stay text). Chromium loads the file with no network, the page
reports every chart it drew and every error; the numbers must be the marts'. A screenshot is kept in
test-artifacts/report.png.
"""

from __future__ import annotations

import datetime as dt
import html
import json
import math
import re
import shutil
import subprocess
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, cli_subprocess, dbt_build, land_runs
from support.scenarios import T0, record
from test_interval import timed_envelope
from test_rolling import rows

from goodput_loader.html_report import MAX_POINTS, MAX_STEP_POINTS, OUTLIER_FACTOR
from goodput_loader.simulate import RunSpec, fleet, simulate_entries

START = dt.datetime(2026, 11, 20, tzinfo=dt.timezone.utc)
HOSTILE = "</script><img src=x onerror=alert(1)>"


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    assert found, "headless Chromium is needed: make install-test installs the Debian package chromium"
    return found


def open_in_browser(page: Path, screenshot: Path | None = None) -> dict[str, Any]:
    """The page's own account of what it rendered (body data-report), after Chromium ran its scripts."""
    flags = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--window-size=1280,1400"]
    dom = subprocess.run([*flags, "--dump-dom", page.as_uri()], capture_output=True, text=True, timeout=120)
    assert dom.returncode == 0, dom.stderr[-2000:]
    found = re.search(r'<body[^>]*data-report="([^"]*)"', dom.stdout)
    assert found, "the page's script did not finish (no data-report on <body>)"
    if screenshot:
        screenshot.parent.mkdir(parents=True, exist_ok=True)
        shot = subprocess.run([*flags, f"--screenshot={screenshot}", page.as_uri()], capture_output=True, text=True,
                              timeout=120)
        assert shot.returncode == 0 and screenshot.stat().st_size > 10_000, shot.stderr[-2000:]
    return json.loads(html.unescape(found.group(1)))


def close(a: float | None, b: float | None) -> bool:
    return a is None and b is None or (a is not None and b is not None and math.isclose(a, b, abs_tol=1e-9))


@pytest.fixture(scope="module")
def warehouse(tmp_path_factory) -> Path:
    tmp_path = tmp_path_factory.mktemp("html")
    specs = fleet(3, seed=4, steps=2000, restarts=1, running=1, start=START, elastic=1,
                  base=RunSpec(name="", start=0.0, step_seconds=2.0, duplicate_rate=0.0))
    specs.append(RunSpec(name="long", start=START.timestamp(), steps=40_000, step_seconds=0.5, restarts=2,
                         eval_every=5000, seed=9))
    # LogEntries stamped at their payload times, as a job writes them (a run's last entry decides if it stalled)
    runs = {spec.name: timed_envelope([e.payload for e in simulate_entries(spec)], spec.name) for spec in specs}
    invalid = ([("job_start", T0)] + [("step", T0 + 10 + 3 * i, i) for i in range(6)] + [("job_end", T0 + 30)]
               + [("job_start", T0 + 100)] + [("step", T0 + 120 + 3 * i, i) for i in range(3, 30)])
    hostile = ([("job_start", T0)] + [("step", T0 + 10 + 3 * i, i) for i in range(20)]
               + [("custom_start", T0 + 31, HOSTILE), ("custom_end", T0 + 32, HOSTILE), ("job_end", T0 + 80)])
    for name, ops in (("invalid", invalid), ("hostile", hostile)):
        runs[name] = timed_envelope(record(name, ops), name)
    db = land_runs(tmp_path, runs)
    dbt_build(db, START + dt.timedelta(hours=8))
    return db


def test_the_page_renders_in_a_browser_and_its_charts_hold_the_marts(warehouse: Path, tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    written = json.loads(cli_subprocess("report", "--duckdb", warehouse, "--html", page, "--json").stdout)
    assert written["runs"] == 6 and written["run_sections"] == 5  # the invalid run is named, not charted
    # thinned: 40,000 steps and weeks of windows make a page that opens fast
    assert page.stat().st_size < 2_000_000, page.stat().st_size
    report = open_in_browser(page, ROOT / "test-artifacts" / "report.png")
    assert report["errors"] == []
    charts = {chart["id"]: chart for chart in report["charts"]}
    # the fleet's three charts, and four per charted run (the invalid run has none: no rolling rows)
    assert len(charts) == 3 + 4 * 5, sorted(charts)
    assert all(chart["width"] > 100 and chart["height"] > 100 for chart in charts.values())

    cumulative = rows(warehouse, "select * from fct_goodput_cumulative")
    valid = sorted((r for r in cumulative if r["goodput_pct"] is not None), key=lambda r: (r["goodput_pct"], r["run_id"]))
    assert charts["fleet-goodput"]["labels"] == [r["run_name"] for r in valid]
    assert all(close(a, r["goodput_pct"]) for a, r in zip(charts["fleet-goodput"]["datasets"][0]["data"], valid))
    daily = rows(warehouse, "select * from fct_goodput_fleet_daily order by day")
    assert charts["fleet-daily"]["labels"] == [d["day"].isoformat() for d in daily]
    assert all(close(a, d["goodput_pct"]) for a, d in zip(charts["fleet-daily"]["datasets"][0]["data"], daily))
    shares: dict[str, float] = defaultdict(float)
    for r in rows(warehouse, "select * from fct_badput_fleet_daily where counts_against_goodput"):
        shares[r["gcm_badput_source"]] += r["badput_seconds"]
    elapsed = sum(d["elapsed_seconds"] for d in daily)
    got = dict(zip(charts["fleet-badput"]["labels"], charts["fleet-badput"]["datasets"][0]["data"]))
    assert set(got) == set(shares) and all(math.isclose(got[k], v / elapsed * 100, abs_tol=1e-9) for k, v in shares.items())

    # per run, in the page's order (lowest Goodput first, invalid first and not charted)
    order = [r for r in sorted(cumulative, key=lambda r: (r["goodput_pct"] is not None, r["goodput_pct"] or 0, r["run_id"]))
             if r["goodput_pct"] is not None]
    for index, run in enumerate(order):
        run_id, name = run["run_id"], run["run_name"]
        breakdown = rows(warehouse, f"select * from fct_badput_breakdown where run_id = '{run_id}' "
                                    "order by badput_type_id, custom_badput_event_type")
        chart = charts[f"breakdown-{index}"]
        assert chart["labels"] == [b["gcm_badput_source"] for b in breakdown], name
        assert all(close(a, b["badput_pct"]) for a, b in zip(chart["datasets"][0]["data"], breakdown)), name
        rolling = {(r["window_seconds"], r["window_end_epoch"]): r["goodput_pct"]
                   for r in rows(warehouse, f"select * from fct_goodput_rolling where run_id = '{run_id}'")}
        lines = charts[f"rolling-{index}"]["datasets"]
        assert len(lines) == 5 and all(line["data"] for line in lines[:-1]), name  # 4 window sizes, disruptions
        for line in lines[:-1]:
            size = {"1h": 3600, "1d": 86400, "3d": 259200, "5d": 432000}[line["label"]]
            ends = sorted(end for s, end in rolling if s == size)
            assert len(line["data"]) <= MAX_POINTS + 2 and line["data"][-1]["x"] == ends[-1] * 1000, (name, size)
            assert all(close(p["y"], rolling[(size, p["x"] / 1000)]) for p in line["data"]), (name, size)
        disruptions = rows(warehouse, f"select * from fct_disruptions where run_id = '{run_id}'")
        assert lines[-1]["label"] == "disruption" and len(lines[-1]["data"]) == len(disruptions), name
        steps = rows(warehouse, f"select * from fct_steps where run_id = '{run_id}' and interval_class = 'productive'")
        plotted, outliers, ideal = charts[f"steps-{index}"]["datasets"]
        slow = {(s["step_count"], s["duration_seconds"]) for s in steps
                if s["duration_seconds"] >= OUTLIER_FACTOR * run["ideal_step_seconds"]}
        assert {(p["x"], p["y"]) for p in outliers["data"]} == slow, name
        assert len(plotted["data"]) <= MAX_STEP_POINTS + 1, (name, len(plotted["data"]))
        assert all(close(p["y"], run["ideal_step_seconds"]) for p in ideal["data"]), name
        if name == "long":
            assert len(steps) > 35_000 and len(plotted["data"]) < len(steps) / 20
    # the markup in a custom event type is a label like any other, drawn as text
    hostile = next(i for i, r in enumerate(order) if r["run_name"] == "hostile")
    assert f"CUSTOM_BADPUT_EVENTS.{HOSTILE.upper()}" in charts[f"breakdown-{hostile}"]["labels"]


def test_one_run_and_no_network(warehouse: Path, tmp_path: Path) -> None:
    """--run RUN: that run's page; the page loads nothing from the network (no http(s) URL in it but
    Chart.js's own comments and the user's data)."""
    page = tmp_path / "one.html"
    cli_subprocess("report", "--duckdb", warehouse, "--html", page, "--run", "long")
    text = page.read_text()
    assert not re.search(r"""<(script|link|img)[^>]+(src|href)=["']?https?:""", text)
    report = open_in_browser(page)
    assert report["errors"] == [] and len(report["charts"]) == 3 + 4
    assert report["charts"][0]["labels"] == ["long"]
