"""Kept for indexes written before the search package: nothing imports it.

A Whoosh index stores its schema pickled in its table of contents, and the
schema names its analyzer's class by module path. Until issue 12 that class
lived here (`papershelf.core.index.PaperAnalyzer`), so every index written
until then names this module: without it, opening such an index fails and
it is rebuilt as damaged (minutes at 100,000 papers). The first commit to an
index rewrites its table of contents with the analyzer's new path.
"""

from __future__ import annotations

from .search.schema import PaperAnalyzer

__all__ = ["PaperAnalyzer"]
