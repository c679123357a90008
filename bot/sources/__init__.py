"""Snapshot sources: the edge where patches, git and PR JSON become a snapshot."""

from __future__ import annotations


class SourceError(Exception):
    """Input that cannot be turned into a snapshot at all (the CLI exits with 2)."""
