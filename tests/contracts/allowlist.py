"""An import-linter contract type: the importers may reach a package only through a list of
allowed modules (issue 23).

import-linter's own contracts are forbid-lists: a module added to the core later is allowed
until somebody remembers to forbid it. This one is an allowlist. Every direct import from a
module of `source_modules` (and their descendants) into `target_package` must land in one of
`allowed_modules` (each counted with its descendants when `as_packages` is true). A module
added to the target package later is forbidden until it is named here.

Loaded by `lint-imports` through pyproject.toml's `contract_types`; tests/test_code_health.py
puts this folder on the path.
"""

from __future__ import annotations

from typing import Any

import grimp
from importlinter import Contract, ContractCheck, fields, output


class AllowlistContract(Contract):
    type_name = "allowlist"

    source_modules = fields.ListField(subfield=fields.ModuleField())
    target_package = fields.ModuleField()
    allowed_modules = fields.ListField(subfield=fields.ModuleField())
    # the allowed modules' submodules are allowed too (a package listed whole)
    allowed_packages = fields.ListField(subfield=fields.ModuleField(), required=False)

    def check(self, graph: grimp.ImportGraph, verbose: bool) -> ContractCheck:
        target: str = self.target_package.name  # type: ignore[attr-defined]
        allowed = {m.name for m in self.allowed_modules}  # type: ignore[attr-defined]
        packages = {m.name for m in (self.allowed_packages or [])}  # type: ignore[attr-defined]

        def is_allowed(module: str) -> bool:
            return module in allowed or any(module == p or module.startswith(p + ".") for p in packages)

        importers: set[str] = set()
        for source in self.source_modules:  # type: ignore[attr-defined]
            importers.add(source.name)
            importers |= graph.find_descendants(source.name)
        broken: list[dict[str, Any]] = []
        for importer in sorted(importers):
            for imported in sorted(graph.find_modules_directly_imported_by(importer)):
                if not (imported == target or imported.startswith(target + ".")) or is_allowed(imported):
                    continue
                if imported == target:
                    continue  # the package itself (`from ..core import overview` names a module)
                details = graph.get_import_details(importer=importer, imported=imported)
                broken.append(
                    {
                        "importer": importer,
                        "imported": imported,
                        "lines": [d["line_number"] for d in details],
                    }
                )
        return ContractCheck(kept=not broken, metadata={"broken": broken})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for link in check.metadata["broken"]:
            lines = ", ".join(map(str, link["lines"])) or "?"
            output.print_error(
                f"{link['importer']} -> {link['imported']} (l.{lines}): not on the allowlist; "
                "export the name from the allowed module (e.g. core/library/__init__.py) and import it from there",
                bold=False,
            )
            output.new_line()
