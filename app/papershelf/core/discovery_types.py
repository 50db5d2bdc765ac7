"""What a suggestion is, apart from the model that makes it (core/discovery.py).

A module of its own so that the facade, the command line and the window can
name `Suggestion` without loading NumPy: opening a library must not pay for
it (tests/test_launcher.py), only asking for suggestions does.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Suggestion:
    """A paper suggested for a tag or list: its score (the model's decision
    value, higher is better) and the terms that weighed most in it (the
    words of the paper with the largest weight × tf-idf in the model)."""

    paper_id: str
    score: float
    terms: list[str] = field(default_factory=list)
