"""Online look-ups: identifiers, the services (arXiv, Crossref, OpenAlex, Semantic Scholar, doi.org), matching."""
