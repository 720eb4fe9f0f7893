"""The base install is enough for the base commands.

`make demo` installs the package without extras; the suite runs in a virtualenv
that also has the test, BigQuery and Monitoring extras, so an import that only
an extra satisfies (numpy once was one) passes every other test and breaks a
newcomer's first command. This test installs the package alone into a fresh
virtualenv, as `pip install .` would on a new machine, and runs it from there.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# Every module of the package, imported by name: a module that needs an extra must
# import it inside the function that uses it, so this list has to import cleanly.
IMPORT_ALL = """
import pkgutil, importlib, goodput_loader
names = sorted(m.name for m in pkgutil.walk_packages(goodput_loader.__path__, "goodput_loader.")
               if not m.name.endswith(".__main__"))  # __main__ runs the CLI
for name in names:
    importlib.import_module(name)
from goodput_loader.cli import main
from importlib import resources  # report --html inlines these: they must be installed with the package
assert all((resources.files("goodput_loader") / "assets" / name).is_file() for name in ("report.html", "chart.umd.min.js"))
print(" ".join(sorted(main.commands)))
print(len(names))
"""

# Packages that only the extras bring: finding one would mean the venv is not a base install.
EXTRAS_ONLY = ["google.cloud.bigquery", "google.cloud.monitoring_v3", "dbt.adapters.bigquery", "tensorboardX",
               "pytest"]


def _run(*args: str | Path, cwd: Path | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if k not in {"PYTHONPATH", "VIRTUAL_ENV"}}
    result = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True)
    assert result.returncode == 0, f"{' '.join(map(str, args))} exited {result.returncode}\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.mark.slow
def test_base_install_imports_every_module_and_every_command_helps(tmp_path: Path) -> None:
    # Install from a copy: a build in the checkout would leave build/ and *.egg-info behind.
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    shutil.copytree(ROOT / "goodput_loader", source / "goodput_loader",
                    ignore=shutil.ignore_patterns("__pycache__"))

    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv)
    python = venv / "bin" / "python"
    _run(python, "-m", "pip", "install", "--quiet", source)

    # Run outside the checkout, so that `import goodput_loader` finds the installed copy.
    out = _run(python, "-c", IMPORT_ALL, cwd=tmp_path).split("\n")
    commands, module_count = out[0].split(), int(out[1])
    assert module_count >= 15, out
    assert {"load", "simulate", "build", "report", "rejects", "interval", "push", "tensorboard"} <= set(commands)

    for module in EXTRAS_ONLY:
        probe = f"import importlib.util as u; print(u.find_spec({module.split('.')[0]!r}) and u.find_spec({module!r}))"
        found = _run(python, "-c", probe, cwd=tmp_path).strip()
        assert found in {"None", ""}, f"{module} is installed: this venv is not a base install"

    cli = venv / "bin" / "goodput-loader"
    assert "Usage:" in _run(cli, "--help", cwd=tmp_path)
    for command in commands:
        assert f"Usage: goodput-loader {command}" in _run(cli, command, "--help", cwd=tmp_path), command

    # A command that needs an extra says which one to install, in one line, without a traceback.
    export = tmp_path / "goodput_r.ndjson"
    export.write_text("")
    for args, extra in [(["load", "--bigquery", "p.d", str(export)], "bigquery"),
                        (["push", "--project", "p", "--location", "l"], "monitoring"),
                        (["tensorboard", "--logdir", str(tmp_path / "tb")], "tensorboard")]:
        result = subprocess.run([str(cli), *args], cwd=tmp_path, capture_output=True, text=True)
        assert result.returncode == 1, (args, result.stderr)
        assert f"pip install 'goodput-warehouse[{extra}]'" in result.stderr, (args, result.stderr)
        assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
