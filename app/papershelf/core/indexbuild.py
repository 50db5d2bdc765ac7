"""One segment of a search-index rebuild, written by a separate process.

Whoosh indexes in pure Python, so a rebuild of a large library is split into
segments that run in parallel, one process each (see
`SearchIndex.rebuild`). A plain child process (`python -m
papershelf.core.indexbuild`) rather than `multiprocessing`: nothing of the
parent (its threads, its main script) is re-run or forked.

    python -m papershelf.core.indexbuild INDEX_FOLDER JOB_FILE

JOB_FILE holds the pickled list of documents; the segment is pickled to
JOB_FILE + ".segment" when done, and the number of documents written so far
to JOB_FILE + ".progress" as it goes. Exit status 0 on success.
"""

from __future__ import annotations

import os
import pickle
import sys
from pathlib import Path

PROGRESS_EVERY = 250
PARENT_ENV = "PAPERSHELF_INDEX_PARENT"


def segment_writer(ix, **kwargs):
    """A Whoosh SegmentWriter that writes plain (not compound) segments and
    looks up field lengths in memory while it writes postings (stock Whoosh
    reads each one from the column file: a fifth of the time of a commit)."""
    from whoosh.codec.whoosh3 import LENGTHS_COLUMN, _lenfield
    from whoosh.util.numeric import byte_to_length
    from whoosh.writing import SegmentWriter

    table = [None] + [byte_to_length(b) for b in range(1, 256)]

    class _Lengths:
        def __init__(self, pdr):
            self._pdr = pdr
            self._fields: dict[str, bytes] = {}

        def doc_field_length(self, docnum, fieldname, default=0):
            raw = self._fields.get(fieldname)
            if raw is None:
                col = self._pdr._cached_reader(_lenfield(fieldname), LENGTHS_COLUMN)
                raw = b"" if col is None else col._dbfile.get(col._basepos, col._count * col._fixedlen)
                self._fields[fieldname] = raw
            return table[raw[docnum]] if docnum < len(raw) else None

        def close(self):
            self._pdr.close()

    class Writer(SegmentWriter):
        def per_document_reader(self):
            return _Lengths(super().per_document_reader())

    # Separate files, not one compound file: Whoosh reads a compound segment's
    # postings whole into memory (210 MB of a 100,000-paper index), while
    # separate files are memory-mapped and read as needed.
    kwargs.setdefault("compound", False)
    return Writer(ix, **kwargs)


def build(index_folder: str, job_file: str) -> None:
    from whoosh import index as windex

    with open(job_file, "rb") as f:
        docs = pickle.load(f)
    progress = Path(job_file + ".progress")
    ix = windex.open_dir(index_folder)
    writer = segment_writer(ix, _lk=False, limitmb=256)
    parent = int(os.environ.get(PARENT_ENV, "0") or 0)
    for n, doc in enumerate(docs, 1):
        writer.add_document(**doc)
        if n % PROGRESS_EVERY == 0:
            progress.write_text(str(n))
            if parent and os.getppid() != parent:   # the rebuild that started us is gone
                writer.cancel()
                sys.exit(3)
    segment = writer._finalize_segment()
    ix.close()
    tmp = job_file + ".segment.tmp"
    with open(tmp, "wb") as f:
        pickle.dump(segment, f)
    os.replace(tmp, job_file + ".segment")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    build(*args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
