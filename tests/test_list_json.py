"""`papershelf list --json` at speed (issue 25 item 4): the papers are read through the read view
a run of lines at a time and printed a batch at a time, and the bytes are still those of the
whole array printed at once; a damaged line in a run is still said in the load's words."""

from __future__ import annotations

import io
import json
import sys

import orjson
import pytest

from conftest import store_dir
from papershelf.cli import output
from papershelf.core.errors import StoreCorruptError
from test_read_view import _full_then_lazy, _written, edited  # noqa: F401  (edited: the fixture)


def printed(monkeypatch, write, data) -> bytes:
    """What `write(data)` prints on standard output."""
    buffer = io.BytesIO()
    monkeypatch.setattr(sys, "stdout", io.TextIOWrapper(buffer, encoding="utf-8"))
    write(data)
    return buffer.getvalue()


@pytest.mark.parametrize("count", [0, 1, output.ARRAY_BATCH, output.ARRAY_BATCH + 1, 3 * output.ARRAY_BATCH + 7])
def test_the_array_printed_in_batches_is_the_array_printed_whole(monkeypatch, count):
    """Batches of papers and the array's indentation, controls a terminal would act on (DEL, C1)
    escaped as the whole array's are, wherever they fall."""
    items = [
        {"id": f"p{i}", "title": "T\x7fitle \u009b31m" if i % 97 == 5 else f"Title {i} °±", "tags": [], "fields": {}}
        for i in range(count)
    ]
    streamed = printed(monkeypatch, output.write_json_array, iter(items))
    whole = printed(monkeypatch, output.write_json, items)
    assert streamed == whole
    assert json.loads(streamed) == items
    if count > 5:
        assert b"\x7f" not in streamed and b"\\u007f" in streamed and b"\\u009b" in streamed


def test_list_json_of_the_view_is_the_whole_loads(edited):  # noqa: F811
    folder, _ = edited
    full, lazy = _full_then_lazy(folder, "list", "--json")
    assert lazy == full
    assert full.encode() == orjson.dumps(json.loads(full), option=orjson.OPT_INDENT_2) + b"\n"


def test_a_damaged_line_read_in_a_run_is_named(edited):  # noqa: F811
    """A line changed in place behind the view's back, in the middle of the lines read at once:
    the listing stops at it with the load's words."""
    folder, ids = edited
    lib = _written(folder)
    path = store_dir(folder) / "library.jsonl"
    with lib, open(path, "r+b") as f:
        data = f.read()
        at = data.index(ids[6].encode())
        line = data[:at].count(b"\n") + 1
        f.seek(at + 30)
        f.write(b"#")
        f.flush()
        with pytest.raises(StoreCorruptError, match=f"line {line} is damaged"):
            for _ in lib.matching():
                pass
