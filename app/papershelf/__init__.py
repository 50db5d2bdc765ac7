"""Papershelf: a desktop reading-list manager for research papers."""

__version__ = "0.1.0"
