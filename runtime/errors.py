"""The runtime's errors: each one is a user-facing problem with a clean message (the CLI
prints it without a traceback); ``UsageError`` is a mistake in how the run was asked for."""

from __future__ import annotations


class RunError(Exception):
    """A run cannot go on; the message says why and, where possible, what to do."""


class UsageError(RunError):
    """The run was asked for wrongly (unknown relation, bad option)."""


class UnsupportedExpression(RunError):
    """The runtime has no rule for a node or function of the plan."""


class QueryError(RunError):
    """A row made the query fail, as it would fail Spark's (ANSI errors, e.g. DIVIDE_BY_ZERO)."""

    def __init__(self, error_class: str, message: str) -> None:
        self.error_class = error_class
        super().__init__(f"[{error_class}] {message}")


class CheckpointError(RunError):
    """A checkpoint directory cannot be used for this run."""


class UnsafeFileError(RunError):
    """A file or folder the run would write, delete or read back is not what it must be: a
    symbolic link inside a folder sjoin owns, or something other than a regular file where
    sjoin keeps one (``runtime/io/files.py``)."""


class WriteError(RunError):
    """A file or folder could not be written (a full disk, no permission, a read-only file
    system): the message names it and the reason (``runtime/io/files.py``)."""
