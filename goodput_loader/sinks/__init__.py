"""Warehouse sinks: where landed entries, rejections and cursors are written."""

from goodput_loader.sinks.base import Batch, BatchResult, Cursor, Sink

__all__ = ["Batch", "BatchResult", "Cursor", "Sink"]
