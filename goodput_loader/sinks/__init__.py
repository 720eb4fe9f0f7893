"""The contract between sources and warehouse sinks: batches, cursors, results.

The sinks themselves live with their warehouse: ``warehouses/duckdb.py`` and
``warehouses/bigquery.py``.
"""

from goodput_loader.sinks.base import Batch, BatchResult, Cursor, Sink

__all__ = ["Batch", "BatchResult", "Cursor", "Sink"]
