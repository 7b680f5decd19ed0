"""MkDocs hooks for the documentation site (mkdocs.yml: ``hooks``).

- The home page is README.md itself (one source: the README is the entry point on GitHub and
  on the site), its links to ``docs/...`` rewritten to the site's pages.
- A link from a page to a file of the repository outside docs/ (the lab's ``experiments/``,
  a config) is not a page of the site: it becomes its text and the repository path in code,
  when that file exists. A link to a file that does not exist is left alone, so that
  ``mkdocs build --strict`` fails on it.
- ``<!-- api: every public name not listed above -->`` on the API page expands into one
  mkdocstrings block per name of ``allfives.__all__`` (the top package) that the page does not
  document yet, so a name added to the package appears on the site without breaking the build
  (tests/test_docs_site.py says which names are documented only this way).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
API_MARKER = "<!-- api: every public name not listed above -->"
LINK = re.compile(r"(!?)\[([^\]]*)\]\(([^)\s]+)\)")


def _page_source(src_uri: str) -> Path:
    """The repository file a page of the site comes from (index.md: the README)."""
    return ROOT / "README.md" if src_uri == "index.md" else DOCS / src_uri


def rewrite_links(markdown: str, source: Path) -> str:
    """Links of ``source`` (README.md or a page of docs/) as links between pages of the site;
    a link to an existing file outside docs/ as its text and repository path."""

    def one(match: re.Match[str]) -> str:
        bang, text, target = match.groups()
        path, _, anchor = target.partition("#")
        if "://" in target or target.startswith(("#", "mailto:")) or not path:
            return match.group(0)
        resolved = (source.parent / path).resolve()
        suffix = f"#{anchor}" if anchor else ""
        if resolved == ROOT / "README.md":
            return f"{bang}[{text}]({_relative('index.md', source)}{suffix})"
        if resolved.is_relative_to(DOCS):
            rel = _relative(resolved.relative_to(DOCS).as_posix(), source)
            return f"{bang}[{text}]({rel}{suffix})"
        if resolved.exists() and not bang:
            return f"{text} (`{resolved.relative_to(ROOT).as_posix()}` in the repository)"
        return match.group(0)

    markdown = LINK.sub(one, markdown)
    if source.name == "README.md":
        markdown = markdown.replace('src="docs/', 'src="')
    return markdown


def _relative(site_path: str, source: Path) -> str:
    """``site_path`` (relative to docs/) as a link from the page of ``source``."""
    if source.parent == DOCS or source == ROOT / "README.md":
        return site_path
    depth = len(source.parent.relative_to(DOCS).parts)
    return "../" * depth + site_path


def documented_names(markdown: str) -> set[str]:
    """The public names an API page documents: the last part of each ``::: path`` and each
    name in backticks in a heading."""
    names = {m.rsplit(".", 1)[-1] for m in re.findall(r"(?m)^::: ([\w.]+)", markdown)}
    for heading in re.findall(r"(?m)^#+ (.*)$", markdown):
        names.update(re.findall(r"`([\w.]+)`", heading))
    return names


def api_path(name: str) -> str:
    """The import path mkdocstrings documents for the public name ``name`` of allfives (the
    defining module for a function or class re-exported from a floor below)."""
    import allfives

    obj = getattr(allfives, name)
    module, qualname = getattr(obj, "__module__", None), getattr(obj, "__qualname__", None)
    if isinstance(module, str) and isinstance(qualname, str) and "<" not in qualname:
        return f"{module}.{qualname}"
    return f"allfives.{name}"


def expand_api(markdown: str) -> str:
    """The API page with its marker replaced by a block for each undocumented public name."""
    import allfives

    if API_MARKER not in markdown:
        return markdown
    missing = [n for n in allfives.__all__ if n not in documented_names(markdown)]
    blocks = "".join(f"### `{name}`\n\n::: {api_path(name)}\n\n" for name in missing)
    return markdown.replace(API_MARKER, blocks or "Every public name is documented above.")


def on_files(files: Any, config: Any) -> Any:
    """Add the README as the site's home page (index.md)."""
    from mkdocs.structure.files import File

    if files.get_file_from_path("index.md") is None:
        files.append(File.generated(config, "index.md",
                                    content=(ROOT / "README.md").read_text()))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """Rewrite the page's links for the site, and expand the API page's marker."""
    return expand_api(rewrite_links(markdown, _page_source(page.file.src_uri)))
