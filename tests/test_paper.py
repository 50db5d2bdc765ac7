"""The paper record: its declared fields, the status names people type, the tag rule."""

from __future__ import annotations

import copy

import pytest

from papershelf.core.errors import InvalidValueError
from papershelf.core.importers.bibfile import parse_bib
from papershelf.core.paper import FIELDS, Paper, Source, Status, join_tags, split_tags


def test_paper_declares_every_field_of_the_record_with_its_type():
    declared = {name for name in vars(Paper) if isinstance(vars(Paper)[name], property)}
    assert declared == set(FIELDS)
    hints = Paper.__annotations__
    assert hints["title"] == "Field[str, str]"
    assert hints["year"] == "Field[int | None, int | None]"
    assert hints["tags"] == "Field[list[str], StrList]"


def test_fields_read_their_defaults_and_write_their_json_form():
    paper = Paper("p1")
    assert paper.to_dict() == {"id": "p1", **{k: v for k, v in FIELDS.items() if k != "id"}}
    assert paper.raw() == {"id": "p1"}  # defaults are left out of the stored dict
    paper.tags = ("b", "a")
    paper.status = "to-read"
    paper.sources = [Source("/x.txt", "daily-papers", 3)]
    paper.year = 2024
    assert paper.raw() == {
        "id": "p1",
        "tags": ["b", "a"],
        "status": "to-read",
        "year": 2024,
        "sources": [{"file": "/x.txt", "format": "daily-papers", "line": 3}],
    }
    assert paper.status is Status.TO_READ and paper.sources == [Source("/x.txt", "daily-papers", 3)]
    paper.tags.append("c")  # a list read is a copy
    assert paper.tags == ["b", "a"]
    paper.year = None
    assert "year" not in paper.raw() and paper.year is None
    assert copy.copy(paper) == paper and copy.copy(paper) is not paper


def test_unknown_fields_are_refused():
    with pytest.raises(TypeError, match="unknown paper fields"):
        Paper("p1", colour="red")


@pytest.mark.parametrize(
    "typed, status",
    [
        ("read", Status.READ),
        ("To Read", Status.TO_READ),
        ("todo", Status.TO_READ),
        ("to_read", Status.TO_READ),
        (" skip ", Status.SKIPPED),
        ("READING", Status.READING),
    ],
)
def test_status_parse_accepts_what_people_type(typed, status):
    assert Status.parse(typed) is status


def test_status_parse_raises_the_typed_error_which_is_also_a_value_error():
    with pytest.raises(InvalidValueError, match="unknown status 'later'; use one of: unread, to-read"):
        Status.parse("later")
    with pytest.raises(ValueError):
        Status.parse("later")


def test_the_tag_rule():
    assert split_tags("LLM,  To   Cite, llm,,") == ["llm", "to cite"]
    assert split_tags(["a, b", "C"]) == ["a", "b", "c"]
    assert join_tags(["a", "to cite"]) == "a, to cite"
    assert split_tags(join_tags(["a", "to cite"])) == ["a", "to cite"]


def test_bib_keywords_split_at_commas_and_semicolons_and_are_no_tags():
    from papershelf.core.citation import record_keywords

    text = "@misc{k1,\n  title = {A title},\n  keywords = {Deep  Learning; RL, {\\'e}t{\\'e};; rl}\n}\n"
    [cand] = parse_bib(text, "x.bib").papers
    assert cand.tags == []
    assert record_keywords(cand.bibfields) == ["Deep Learning", "RL", "été"]
