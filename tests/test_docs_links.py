"""Every relative link and image of the README and docs/ points at a file that exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page: Path) -> None:
    text = page.read_text()
    targets = re.findall(r"\]\(([^)#\s]+)", text) + re.findall(r'src="([^"]+)"', text)
    missing = [t for t in targets if "://" not in t and not (page.parent / t).exists()]
    assert not missing, f"{page.name} links to missing files: {missing}"


#: Markdown files the programs write into run directories (named in docs, not in the repo).
RUN_OUTPUTS = {"card.md", "eval.md", "table.md"}
#: The documentation site's home page, made from README.md at build time (docs_build/hooks.py).
SITE_PAGES = {"index.md"}


def test_cited_markdown_files_exist() -> None:
    """A ``*.md`` named in a page, docstring or comment (``docs/rules.md``, ``README.md``) is
    a file of the repository: relative to the citing file, the root or docs/."""
    sources = [*PAGES, *sorted(p for d in ("allfives_env", "agents", "train", "examples", "tests")
                              for p in (ROOT / d).rglob("*.py"))]
    cite = re.compile(r"(?<![\w/.-])((?:[\w.-]+/)*[\w-]+\.md)\b")
    missing = [f"{src.relative_to(ROOT)}: {name}" for src in sources
               for name in cite.findall(src.read_text())
               if name not in RUN_OUTPUTS | SITE_PAGES
               and not any((base / name).exists() for base in (src.parent, ROOT, ROOT / "docs"))]
    assert not missing, f"citations of files that are not in the repository: {missing}"
