"""Optional dependencies, imported with a message that says what to install.

BigQuery and Cloud Monitoring live in extras (``[bigquery]``, ``[monitoring]``):
they pull hundreds of MB a DuckDB user never needs. A command that needs one
imports it through ``require`` first, so a base install answers with the pip
command to run instead of an ImportError traceback.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from goodput_loader.errors import LoaderError


class MissingExtraError(LoaderError):
    """A command needs an optional dependency that is not installed."""


def require(module: str, extra: str, purpose: str) -> ModuleType:
    """Import ``module`` or say which extra brings it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(
            f"{purpose} needs the [{extra}] extra, which is not installed ({exc.name or module} is missing): "
            f"pip install 'goodput-warehouse[{extra}]'"
        ) from exc
