"""One segment of a search-index rebuild, written by a separate process.

Whoosh indexes in pure Python, so a rebuild of a large library is split into
segments that run in parallel, one process each (see `rebuild.py`). A plain
child process (`python -m papershelf.core.search.worker`) rather than
`multiprocessing`: nothing of the parent (its threads, its main script) is
re-run or forked.

    python -m papershelf.core.search.worker INDEX_FOLDER JOB_FILE [TEXT_CACHE]

JOB_FILE holds the pickled list of documents (a paper with PDFs: their hashes under
FULLTEXT_KEY, whose texts the worker reads from the TEXT_CACHE folder); the segment is pickled to
JOB_FILE + ".segment" when done, and the number of documents written so far
to JOB_FILE + ".progress" as it goes. Exit status 0 on success.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

PROGRESS_EVERY = 250
PARENT_ENV = "PAPERSHELF_INDEX_PARENT"
WRITER_ENV = "PAPERSHELF_INDEX_WRITER"  # "fast" (fastwrite, if its probe passes here too) or "whoosh"
FULLTEXT_KEY = "_pdfs"  # a job document's PDF hashes, whose texts the worker adds as `fulltext`


def build(index_folder: str, job_file: str, text_cache: str = "") -> None:
    """Write the documents of `job_file` as one finished, uncommitted segment of the index."""
    from whoosh import index as windex

    from . import fastwrite, internals
    from .pdftext import PaperTexts

    texts = PaperTexts(Path(text_cache) if text_cache else None)
    with open(job_file, "rb") as f:
        docs = pickle.load(f)
    progress = Path(job_file + ".progress")
    parent = int(os.environ.get(PARENT_ENV, "0") or 0)

    def with_texts() -> Iterator[dict[str, Any]]:
        for doc in docs:
            shas = doc.pop(FULLTEXT_KEY, None)
            if shas:
                doc["fulltext"] = texts.joined(shas)
            yield doc
            doc.pop("fulltext", None)  # one paper's PDF text in memory at a time

    def going(n: int) -> bool:
        progress.write_text(str(n))
        return not (parent and os.getppid() != parent)  # the rebuild that started us is gone

    ix = windex.open_dir(index_folder)
    # the parent starts workers only once the probe found Whoosh's internals as expected
    if os.environ.get(WRITER_ENV, "fast") == "fast" and internals.fast_writing():  # as the parent decided
        try:
            segment = fastwrite.write_segment(ix, with_texts(), going)
        except fastwrite.Cancelled:
            sys.exit(3)
    else:
        writer = internals.segment_writer(ix, tuned=True, _lk=False, limitmb=256)
        for n, doc in enumerate(with_texts(), 1):
            writer.add_document(**doc)
            if n % PROGRESS_EVERY == 0 and not going(n):
                writer.cancel()
                sys.exit(3)
        segment = internals.finish_segment(writer)
    ix.close()
    tmp = job_file + ".segment.tmp"
    with open(tmp, "wb") as out:
        pickle.dump(segment, out)
    os.replace(tmp, job_file + ".segment")


def main(argv: list[str] | None = None) -> int:
    """The worker's command line: INDEX_FOLDER JOB_FILE."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) not in (2, 3):
        print(__doc__, file=sys.stderr)
        return 2
    build(*args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
