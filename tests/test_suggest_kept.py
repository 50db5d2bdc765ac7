"""Issue 25 item 7: the suggestion features are kept on disk, in this machine's folder for the
library (never in the synced folder), so the first suggestion after a start reads no text: a
library opened again counts nothing, an edit elsewhere counts the edited paper alone, and the
suggestions are those of features made from scratch."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import local_dir, run_cli
from papershelf.core import discovery
from papershelf.core.library import Library, discovering

TAG = "diffusion"


@pytest.fixture
def tagged(data_dir, seeds):
    with Library.open(data_dir) as lib:
        lib.import_files(seeds)
        topic = sorted(p.id for p in lib.papers() if "diffusion model" in p.abstract.lower())
        lib.add_tags(topic[:5], [TAG])
    return data_dir


class Counted:
    """The papers whose text the feature cache reads (term counts made)."""

    def __init__(self, monkeypatch) -> None:
        self.papers: list[str] = []
        real = discovery.FeatureCache._count

        def count(cache, papers):
            self.papers += [p.id for p in papers]
            return real(cache, papers)

        monkeypatch.setattr(discovery.FeatureCache, "_count", count)


def fresh(lib: Library) -> list[discovery.Suggestion]:
    """The suggestions of features made from scratch, in memory only (as before issue 25)."""
    x = discovery.FeatureCache().features(lib.generation, list(lib.papers()))
    assert x is not None
    positives = [p.id for p in lib.papers() if TAG in p.tags]
    found = discovery.rank(x, positives, limit=10, model=discovering.MODEL)
    assert found is not None
    return found


def same(found: list[discovery.Suggestion], expected: list[discovery.Suggestion]) -> bool:
    return [s.paper_id for s in found] == [s.paper_id for s in expected] and np.allclose(
        [s.score for s in found], [round(s.score, 4) for s in expected], atol=1e-4
    )


def test_a_library_opened_again_reads_no_text_for_its_first_suggestion(tagged, monkeypatch):
    counted = Counted(monkeypatch)
    with Library.open(tagged) as lib:
        first = lib.suggest(tag=TAG, limit=10)
        assert len(counted.papers) == len(lib)
        expected = fresh(lib)
    assert (local_dir(tagged) / discovering.FEATURES_NAME).is_file()
    assert not list(tagged.rglob("*.npz"))  # nothing in the (synced) library folder
    counted.papers.clear()
    with Library.open(tagged) as lib:
        again = lib.suggest(tag=TAG, limit=10)
        assert counted.papers == []  # the counts and the matrix came from disk
    assert again == first and same(again, expected)


def test_an_edit_made_elsewhere_counts_the_edited_paper_alone(tagged, monkeypatch):
    with Library.open(tagged) as lib:
        lib.suggest(tag=TAG, limit=10)
        edited, tagged_more = lib.ids()[7], lib.ids()[9]
    # another run edits a title and tags a paper: the library's generation moves on
    with Library.open(tagged) as lib:
        discovering._caches.clear()  # as a new process: nothing in memory
        lib.set_title(edited, "Score-based diffusion models for protein design")
        lib.add_tags([tagged_more], [TAG])
    counted = Counted(monkeypatch)
    with Library.open(tagged) as lib:
        found = lib.suggest(tag=TAG, limit=10)
        assert counted.papers == [edited]  # the tag changed no text: only the new title is read
        assert same(found, fresh(lib))
        counted.papers.clear()
        assert lib.suggest(tag=TAG, limit=10) == found and counted.papers == []


@pytest.mark.parametrize("damage", ["garbage", "empty", "other-version"])
def test_a_damaged_or_older_features_file_is_made_again(tagged, monkeypatch, damage):
    with Library.open(tagged) as lib:
        expected = lib.suggest(tag=TAG, limit=10)
    path = local_dir(tagged) / discovering.FEATURES_NAME
    if damage == "garbage":
        path.write_bytes(b"PK\x03\x04 not really a zip" * 50)
    elif damage == "empty":
        path.write_bytes(b"")
    else:
        monkeypatch.setattr(discovery, "FEATURES_VERSION", discovery.FEATURES_VERSION + 1)
    counted = Counted(monkeypatch)
    with Library.open(tagged) as lib:
        assert lib.suggest(tag=TAG, limit=10) == expected
        assert len(counted.papers) == len(lib)  # made again from the text
    counted.papers.clear()
    with Library.open(tagged) as lib:  # and kept again
        assert lib.suggest(tag=TAG, limit=10) == expected and counted.papers == []


def test_the_command_line_suggests_the_same_from_the_kept_features(tagged):
    first = run_cli("suggest", "--tag", TAG, data_dir=tagged)
    assert first.returncode == 0, first.stderr
    assert (local_dir(tagged) / discovering.FEATURES_NAME).is_file()
    again = run_cli("suggest", "--tag", TAG, data_dir=tagged)
    assert again.returncode == 0 and again.stdout == first.stdout and first.stdout.strip()


def test_a_tag_added_keeps_the_counts_file_and_moves_its_generation_on(tagged, monkeypatch):
    with Library.open(tagged) as lib:
        expected = lib.suggest(tag=TAG, limit=10)
    path = local_dir(tagged) / discovering.FEATURES_NAME
    before = path.stat().st_ino
    with Library.open(tagged) as lib:
        discovering._caches.clear()
        lib.add_tags([lib.ids()[-1]], ["unrelated"])  # no text changed
    counted = Counted(monkeypatch)
    with Library.open(tagged) as lib:
        assert lib.suggest(tag=TAG, limit=10) == expected and counted.papers == []
    assert path.stat().st_ino == before  # the counts were not written again: only the generation
    discovering._caches.clear()
    with Library.open(tagged) as lib:  # that generation's matrix now comes straight from disk
        monkeypatch.setattr(discovery.FeatureCache, "_build", lambda *a: pytest.fail("built again"))
        assert lib.suggest(tag=TAG, limit=10) == expected
