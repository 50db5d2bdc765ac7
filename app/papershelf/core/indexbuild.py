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


def build(index_folder: str, job_file: str) -> None:
    from whoosh import index as windex
    from whoosh.writing import SegmentWriter

    with open(job_file, "rb") as f:
        docs = pickle.load(f)
    progress = Path(job_file + ".progress")
    ix = windex.open_dir(index_folder)
    writer = SegmentWriter(ix, _lk=False, limitmb=256)
    for n, doc in enumerate(docs, 1):
        writer.add_document(**doc)
        if n % PROGRESS_EVERY == 0:
            progress.write_text(str(n))
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
