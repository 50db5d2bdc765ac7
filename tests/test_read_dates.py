"""When a paper was read (issue 20): the command line records the day a paper became Reading
and Read, `show` prints it, `list --sort read` orders by it; the statistics count by it."""

from __future__ import annotations

import datetime as dt
import json

from conftest import run_cli
from papershelf.core.library import Library
from papershelf.core.paper import Paper, Status

NOON = "T12:00:00+00:00"  # noon UTC is the same day in every time zone a test machine uses


def local_date(stamp: str) -> dt.date | None:
    """The reader's day of a stored UTC time stamp, as the window and `show` give it."""
    return dt.datetime.fromisoformat(stamp).astimezone().date() if stamp else None


def show_lines(data_dir, pid: str) -> list[str]:
    res = run_cli("show", pid, data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    return res.stdout.splitlines()


def shown(data_dir, pid: str) -> dict:
    res = run_cli("show", pid, "--json", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def test_marking_a_paper_read_records_the_day_and_show_prints_it(data_dir, seeds):
    assert run_cli("import", str(seeds[0]), data_dir=data_dir).returncode == 0
    a, b, c = [p["id"] for p in json.loads(run_cli("list", "--json", data_dir=data_dir).stdout)[:3]]
    before = dt.date.today()
    assert run_cli("status", a, b, "reading", data_dir=data_dir).returncode == 0
    assert run_cli("status", a, "read", data_dir=data_dir).returncode == 0
    after = dt.date.today()

    paper = shown(data_dir, a)
    assert "read_at" in paper, "list --json and show --json hold when the paper was read"
    read, started = local_date(paper["read_at"]), local_date(paper["reading_at"])
    assert read is not None and started is not None and before <= started <= read <= after
    assert f"read:     {read} (started {started})" in show_lines(data_dir, a)
    since = local_date(shown(data_dir, b)["reading_at"])
    assert since is not None and before <= since <= after
    assert f"reading:  since {since}" in show_lines(data_dir, b)
    assert not [line for line in show_lines(data_dir, c) if line.startswith(("read:", "reading:"))]
    listed = {p["id"]: p for p in json.loads(run_cli("list", "--json", data_dir=data_dir).stdout)}
    assert listed[a]["read_at"] == paper["read_at"] and listed[c]["read_at"] == listed[c]["reading_at"] == ""

    # marking it read again changes nothing; back to unread, it has no reading dates left to show
    assert run_cli("status", a, "read", data_dir=data_dir).stdout.startswith("0 of 1 paper")
    assert shown(data_dir, a)["read_at"] == paper["read_at"]
    assert run_cli("status", a, "unread", data_dir=data_dir).returncode == 0
    again = shown(data_dir, a)
    assert again["read_at"] == again["reading_at"] == ""
    assert not [line for line in show_lines(data_dir, a) if line.startswith(("read:", "reading:"))]


def read_on(lib: Library, days: dict[str, str]) -> None:
    """Papers marked Read on these days (as weeks of use would have left them): through
    undo's own door, which puts back a status with its dates."""
    lib.restore_fields({pid: {"status": Status.READ, "read_at": day + NOON} for pid, day in days.items()})


def test_list_sorts_by_the_day_read_with_papers_not_read_last(data_dir, seeds):
    with Library.open(data_dir) as lib:
        lib.import_files(seeds[:1])
        ids = lib.ids()
        read_on(lib, {ids[5]: "2026-11-20", ids[2]: "2026-10-01", ids[9]: "2026-11-30"})
        lib.set_status([ids[1]], "reading")
    res = run_cli("list", "--sort", "read", data_dir=data_dir)
    assert res.returncode == 0, res.stderr
    order = [line.split()[0] for line in res.stdout.splitlines() if line[:1].isalnum() and "  " in line]
    rest = [pid for pid in ids if pid not in (ids[2], ids[5], ids[9])]
    assert order == [ids[2], ids[5], ids[9], *rest]
    lines = res.stdout.splitlines()
    assert lines[0].startswith(f"{ids[2]}  read     2026-10-01 ") and lines[2].startswith(
        f"{ids[9]}  read     2026-11-30 "
    )
    res = run_cli("list", "--sort", "read", "--reverse", "--json", data_dir=data_dir)
    assert [p["id"] for p in json.loads(res.stdout)] == [ids[9], ids[5], ids[2], *rest]
    assert "read:     2026-11-20" in show_lines(data_dir, ids[5])

    bad = run_cli("list", "--sort", "when", data_dir=data_dir)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert "invalid choice: 'when'" in bad.stderr and "read" in bad.stderr


def test_a_paper_read_before_the_dates_were_kept_says_so(data_dir, seeds):
    with Library.open(data_dir) as lib:
        lib.import_files(seeds[:1])
        ids = lib.ids()
        pid = ids[0]
        lib.restore_fields({pid: {"status": Status.READ}})  # as an older Papershelf marked it: no date
        assert lib.get(pid).read_at == ""
        changed = local_date(lib.get(pid).updated)
        read_on(lib, {ids[4]: "2026-11-02"})
    assert f"read:     date not recorded (last changed {changed})" in show_lines(data_dir, pid)
    # no day to sort by: after the papers with one, in library order with the papers not read
    order = run_cli("list", "--sort", "read", "--reverse", "--json", data_dir=data_dir)
    assert [p["id"] for p in json.loads(order.stdout)] == [ids[4], *(i for i in ids if i != ids[4])]


def test_papers_read_are_counted_by_the_week_they_were_marked_read():
    from papershelf.gui.stats import reading_stats

    today = dt.date(2026, 12, 2)  # a Wednesday; its week starts on Monday 30 November

    def paper(n: int, read_at: str, updated: str, status: str = "read") -> Paper:
        return Paper(f"p{n}", title=f"Paper {n}", status=status, read_at=read_at, updated=updated)

    papers = [
        paper(1, "2026-10-05" + NOON, "2026-12-01" + NOON),  # read in October, tagged this week
        paper(2, "2026-11-30" + NOON, "2026-11-30" + NOON),
        paper(3, "", "2026-11-24" + NOON),  # read before the dates were kept: its last change stands in
        paper(4, "", "2026-12-01" + NOON, status="reading"),
    ]
    stats = reading_stats(papers, today)
    weeks = dict(stats.weeks)
    assert weeks[dt.date(2026, 10, 5)] == 1 and weeks[dt.date(2026, 11, 23)] == 1 and weeks[dt.date(2026, 11, 30)] == 1
    assert sum(weeks.values()) == 3 and stats.undated == 1


def test_merging_two_copies_keeps_the_days_of_the_status_kept(data_dir, seeds):
    with Library.open(data_dir) as lib:
        lib.import_files(seeds[:1])
        a, b, c, d = lib.ids()[:4]
        lib.restore_fields(
            {
                a: {"status": Status.READING, "reading_at": "2026-11-02" + NOON},
                b: {"status": Status.READ, "reading_at": "2026-10-01" + NOON, "read_at": "2026-10-09" + NOON},
                c: {"status": Status.READ, "read_at": "2026-11-15" + NOON},
            }
        )
    # B, read, goes into A, still being read: A is read now, with B's days
    assert run_cli("duplicates", "--merge", a, b, data_dir=data_dir).returncode == 0
    merged = shown(data_dir, a)
    assert (merged["status"], merged["reading_at"], merged["read_at"]) == (
        "read",
        "2026-10-01" + NOON,
        "2026-10-09" + NOON,
    )
    # D, unread, goes into C: C keeps its own status and day
    assert run_cli("duplicates", "--merge", c, d, data_dir=data_dir).returncode == 0
    kept = shown(data_dir, c)
    assert (kept["status"], kept["reading_at"], kept["read_at"]) == ("read", "", "2026-11-15" + NOON)
