"""Warehouse sinks: where landed entries, rejections and cursors are written."""

from goodput_loader.sinks.base import BatchResult, Cursor, Sink

__all__ = ["BatchResult", "Cursor", "Sink"]
