"""The Papershelf window (PySide6). Reaches data only through `core.library.Library`."""
