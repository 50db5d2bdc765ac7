"""`papershelf import` on files in the wrong or a damaged encoding: a few
bad bytes in a UTF-8 file are replaced and named by line, a whole
Windows-1252 file is read as one."""

from __future__ import annotations

import codecs
import json
from pathlib import Path

import pytest

from conftest import FIXTURES, run_cli

REPLACED = "\ufffd"


def import_cli(data_dir: Path, path: Path) -> list[str]:
    res = run_cli("import", str(path), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    return res.stdout.splitlines()


def papers(data_dir: Path) -> list[dict]:
    """The library's papers in the order of their file."""
    res = run_cli("list", "--json", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    return sorted(json.loads(res.stdout), key=lambda p: p["sources"][0]["line"])


def damage(data: bytes, line_no: int, at: int = 40) -> bytes:
    """The same bytes with one byte of line `line_no` (1-based) set to 0xFF."""
    lines = data.split(b"\n")
    line = bytearray(lines[line_no - 1])
    line[at] = 0xFF
    lines[line_no - 1] = bytes(line)
    return b"\n".join(lines)


def notes(out: list[str]) -> list[str]:
    return [line.strip() for line in out if line.startswith("  note:")]


@pytest.mark.parametrize("bom", [b"", codecs.BOM_UTF8], ids=["plain", "bom"])
def test_one_bad_byte_in_a_utf8_listing_is_replaced_and_named(seeds, tmp_path, bom):
    seed = seeds[0]
    data = seed.read_bytes()
    assert data.decode("utf-8").startswith("论文检索\n")
    lines = data.split(b"\n")
    bad_line = next(n for n, line in enumerate(lines, 1) if len(line) > 300)  # an abstract
    damaged = tmp_path / seed.name
    damaged.write_bytes(bom + damage(data, bad_line))

    out = import_cli(tmp_path / "clean", seed)
    clean = papers(tmp_path / "clean")
    out = import_cli(tmp_path / "damaged", damaged)
    got = papers(tmp_path / "damaged")

    assert "(paper-search)" in out[0] and f"{len(clean)} added" in out[0]  # the 论文检索 header was read
    assert notes(out) == [
        f"note: {damaged}:{bad_line}: invalid UTF-8 bytes were replaced with {REPLACED}; the rest of the file is UTF-8"
    ]
    assert len(got) == len(clean) > 10
    changed = []
    for before, after in zip(clean, got, strict=True):
        assert (after["area"], after["subarea"], after["authors"]) == (
            before["area"],
            before["subarea"],
            before["authors"],
        )
        if after["abstract"] != before["abstract"]:
            changed.append((before["abstract"], after["abstract"]))
    [(before, after)] = changed  # the one damaged byte, and only there
    assert after == before[:40] + REPLACED + before[41:]
    assert any(p["area"] == "Theory" and p["subarea"] == "Optimization" for p in got)
    assert not any("Â" in p["abstract"] or "Ã" in p["abstract"] for p in got)


def test_a_windows_1252_listing_still_reads_as_one(tmp_path):
    path = FIXTURES / "listings" / "latin1.txt"
    out = import_cli(tmp_path / "lib", path)
    assert "2 added" in out[0]
    [note] = notes(out)
    assert f"{path}:1:" in note and "not UTF-8" in note and "Windows-1252" in note
    authors = [a for p in papers(tmp_path / "lib") for a in p["authors"]]
    assert "François Gatine" in authors and "Pedro Larrañaga" in authors


def test_a_windows_1252_file_with_a_chance_utf8_sequence_is_still_windows_1252(tmp_path):
    # "Ã»" is C3 BB in Windows-1252, and C3 BB is also valid UTF-8 ("û"): the other accents outweigh it
    text = (FIXTURES / "listings" / "latin1.txt").read_bytes().decode("cp1252")
    path = tmp_path / "quoted.txt"
    path.write_bytes(text.replace("Fran\u00e7ois", "\u00ab\u00c3\u00bbFran\u00e7ois").encode("cp1252"))
    out = import_cli(tmp_path / "lib", path)
    assert any("Windows-1252" in n for n in notes(out))
    authors = [a for p in papers(tmp_path / "lib") for a in p["authors"]]
    assert "Pedro Larrañaga" in authors


def test_one_bad_byte_in_a_utf8_bib_file(tmp_path):
    source = FIXTURES / "bib" / "zotero.bib"
    data = source.read_bytes()
    bad_line = 22
    assert data.split(b"\n")[bad_line - 1].lstrip().startswith(b"abstract")
    path = tmp_path / "zotero.bib"
    path.write_bytes(damage(data, bad_line, at=80))
    out = import_cli(tmp_path / "lib", path)
    assert "(bibtex)" in out[0] and "2 added" in out[0]
    assert notes(out) == [
        f"note: {path}:{bad_line}: invalid UTF-8 bytes were replaced with {REPLACED}; the rest of the file is UTF-8"
    ]
    got = papers(tmp_path / "lib")
    authors = [a for p in got for a in p["authors"]]
    assert "Łukasz Kaiser" in authors and "Jürgen Müller" in authors
    assert any(p["title"].startswith("Schrödinger bridges") and REPLACED in p["abstract"] for p in got)


def test_many_damaged_lines_are_named_up_to_a_limit_and_a_real_replacement_character_is_not(seeds, tmp_path):
    # two listings with a 论文检索 header in one: 57 valid non-ASCII characters, 40 abstracts
    data = seeds[0].read_bytes() + b"\n" + seeds[1].read_bytes().split(b"\n", 1)[1]
    abstracts = [n for n, line in enumerate(data.split(b"\n"), 1) if len(line) > 300]
    assert len(abstracts) > 30
    for n in abstracts[1:26]:
        data = damage(data, n)
    lines = data.split(b"\n")
    lines[abstracts[0] - 1] = lines[abstracts[0] - 1].replace(b" ", REPLACED.encode() + b" ", 1)  # valid UTF-8
    path = tmp_path / "damaged.txt"
    path.write_bytes(b"\n".join(lines))
    out = notes(import_cli(tmp_path / "lib", path))
    assert [n.split(":")[2] for n in out] == [str(n) for n in abstracts[1:22]]
    assert out[-1].endswith(f"replaced with {REPLACED} here and on 4 more line(s)")


@pytest.mark.parametrize("text", ["Der „Spaß“-Faktor beim Lernen", "THE “CAFÉ” EFFECT OF CAFFEINE"])
def test_short_windows_1252_text_whose_bytes_make_a_utf8_pair_by_chance(tmp_path, data_dir, text):
    """ß“ and É” are valid UTF-8 pairs (NKo, IPA letters) by accident: still Windows-1252."""
    bib = tmp_path / "one.bib"
    bib.write_bytes(("@article{a, title = {" + text + "}, author = {Doe, Jane}, year = {2020}}\n").encode("cp1252"))
    res = run_cli("import", str(bib), data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    [paper] = json.loads(run_cli("list", "--json", data_dir=data_dir).stdout)
    assert paper["title"] == text
