"""Bibliographic text: the one home of each rule about names, LaTeX, entry types,
identifiers and sort keys (issue 23).

Every other module imports the rule from here; there are no copies.

    names.py        a person's name, structured (family, given, von, jr, literal): BibTeX's
                    parsing, the display form, the family name every comparison uses
    latex.py        the one LaTeX reader (LaTeX → Unicode text): BibTeX values, abstracts' macros
    latex_writer.py the one LaTeX writer (Unicode → LaTeX): export dialects, typed values
    types.py        the entry-type and field model (BibLaTeX's, with BibTeX's aliases)
    identifiers.py  DOIs and arXiv ids: recognising, cleaning, their links
    sorting.py      one sort key per column
"""
