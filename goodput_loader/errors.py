"""Exceptions with messages a user can act on.

Every error the CLI reports is a ``LoaderError``: click prints its message and
exits with its ``exit_code``; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations


class LoaderError(Exception):
    """A failure the user can fix (bad arguments, unreachable service, ...)."""

    exit_code = 1


class SourceError(LoaderError):
    """A source (file, Cloud Logging) could not be read at all."""


class SinkError(LoaderError):
    """The warehouse could not be written."""


class TransientError(LoaderError):
    """A retryable failure that outlived its retries."""
