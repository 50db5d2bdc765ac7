"""Full-text search over a library: a Whoosh index kept beside it as a derived cache.

`SearchIndex` is the entry point; it reads the library through the
`PaperSource` protocol (which `Library` satisfies) and never imports the
facade. The modules, by job:

- `source`: the protocol for reading papers and following changes;
- `schema`: analysis (`PaperAnalyzer`), the Whoosh schema, a paper as a document;
- `state`: the index folder, its state file, damage checks, leftovers;
- `rebuild`: rebuilding from the library, in worker processes when large;
- `worker`: one rebuild worker (`python -m papershelf.core.search.worker`);
- `writer`: the writer thread, and catching up at open;
- `queries`: query text → Whoosh query tree;
- `evaluator`: evaluating the tree with numpy (BM25F, filters, top-k);
- `internals`: every use of Whoosh's internals, checked by a probe at open;
- `snippets`: highlighted fragments of abstracts;
- `index`: `SearchIndex` and its `Results`.
"""

from __future__ import annotations

from .index import Results, SearchIndex
from .schema import INDEX_VERSION, PaperAnalyzer, make_schema, paper_document
from .snippets import make_snippet
from .source import ChangeEvent, PaperSource
from .state import INDEX_DIR, STATE_FILE

__all__ = [
    "INDEX_DIR", "INDEX_VERSION", "STATE_FILE", "ChangeEvent", "PaperAnalyzer", "PaperSource", "Results",
    "SearchIndex", "make_schema", "make_snippet", "paper_document",
]
