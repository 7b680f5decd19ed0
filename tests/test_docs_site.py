"""The README is an entry point (at most 150 lines) and docs/ is a site: mkdocs.yml, the API
page against the package's public names, the hooks that make the README the home page and
keep links honest, and (slow) the strict build itself, which .ci/run also runs."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

import allfives

ROOT = Path(__file__).resolve().parents[1]
API = (ROOT / "docs" / "api.md").read_text()


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"docs_build_{name}",
                                                  ROOT / "docs_build" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


hooks = _load("hooks")


def test_the_readme_is_at_most_150_lines() -> None:
    lines = (ROOT / "README.md").read_text().splitlines()
    assert len(lines) <= 150, f"README.md has {len(lines)} lines; the limit is 150 (issue 64)"


# ------------------------------------------------------------------------------ the API page
def test_the_api_page_documents_every_public_name() -> None:
    """Every name of ``allfives.__all__`` (the public API, the top package) has its entry:
    written on the page, or added by the hook's marker (which the page must keep); the names
    only the hook adds are printed, for the page to place them."""
    written = hooks.documented_names(API)
    assert hooks.API_MARKER in API
    expanded = hooks.documented_names(hooks.expand_api(API))
    missing = sorted(set(allfives.__all__) - expanded)
    assert not missing, f"public names the API page lacks: {missing}"
    only_hook = sorted(set(allfives.__all__) - written)
    print("documented only by the hook's marker:", only_hook)


def test_every_object_the_api_page_names_exists() -> None:
    """A ``::: path`` of the page names an importable object (a renamed or removed one fails
    here, before the site's build does)."""
    import importlib

    paths = re.findall(r"(?m)^::: ([\w.]+)", API)
    assert len(paths) >= 15
    missing = []
    for path in paths:
        module, _, attribute = path.rpartition(".")
        try:
            found = hasattr(importlib.import_module(path), "__name__")
        except ImportError:
            found = hasattr(importlib.import_module(module), attribute)
        if not found:
            missing.append(path)
    assert not missing, missing


def test_a_public_name_added_later_appears_with_its_docstring(monkeypatch) -> None:
    """A name added to ``__all__`` without an entry on the page gets one from the hook, under
    its defining module (so the build does not break and the site still covers it)."""
    from allfives_env.game import tiles

    monkeypatch.setattr(allfives, "round5", tiles.round5, raising=False)
    monkeypatch.setattr(allfives, "__all__", [*allfives.__all__, "round5"])
    page = hooks.expand_api(API)
    assert "### `round5`\n\n::: allfives_env.game.tiles.round5" in page
    assert tiles.round5.__doc__  # what the entry will show


def test_every_function_and_class_of_the_api_has_a_docstring() -> None:
    import inspect

    bare = [name for name in allfives.__all__
            if callable(obj := getattr(allfives, name)) and not inspect.getdoc(obj)]
    assert not bare, f"public names without a docstring (the API page would be empty): {bare}"


# ---------------------------------------------------------------------------------- hooks
def test_links_are_rewritten_for_the_site_and_broken_ones_left_to_fail() -> None:
    readme = ROOT / "README.md"
    page = ROOT / "docs" / "strength.md"
    assert hooks.rewrite_links("[r](docs/rules.md#presets)", readme) == "[r](rules.md#presets)"
    img = '<img src="docs/images/x.png">'
    assert hooks.rewrite_links(img, readme) == '<img src="images/x.png">'
    assert hooks.rewrite_links("[lab](../experiments/README.md)", page) == (
        "lab (`experiments/README.md` in the repository)")
    assert hooks.rewrite_links("[home](../README.md#set-up)", page) == "[home](index.md#set-up)"
    broken = "[gone](../experiments/no_such_file.txt)"
    assert hooks.rewrite_links(broken, page) == broken  # mkdocs --strict reports it
    assert hooks.rewrite_links("[w](https://example.org/a.md)", page) == (
        "[w](https://example.org/a.md)")


def test_sphinx_roles_become_code_spans() -> None:
    pytest.importorskip("griffe")
    roles = _load("griffe_rst")
    text = ("An :class:`~allfives_env.game.view.SeatView` or :func:`make_rules`. "
            "Made by::\n\n    x\n")
    assert roles.markdown_of(text) == "An `SeatView` or `make_rules`. Made by:\n\n    x\n"


# --------------------------------------------------------------------- config and CI
def test_ci_builds_the_site_strictly_and_its_output_is_ignored() -> None:
    assert "mkdocs build --strict" in (ROOT / ".ci" / "run").read_text()
    config = (ROOT / "mkdocs.yml").read_text()
    assert "site_dir: site" in config and "strict: true" in config
    ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", "site/index.html"],
                             cwd=ROOT)
    assert ignored.returncode == 0, "site/ is not git-ignored"


def test_every_page_is_in_the_navigation() -> None:
    config = (ROOT / "mkdocs.yml").read_text()
    nav = set(re.findall(r":\s*([\w-]+\.md)\s*$", config, re.M))
    pages = {p.name for p in (ROOT / "docs").glob("*.md")} | {"index.md"}
    assert pages == nav, f"pages not in the nav: {pages - nav}; nav entries without a page: "\
        f"{nav - pages}"


def test_the_docs_extra_is_declared_and_part_of_all() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert re.search(r"(?m)^docs = \[", pyproject)
    all_line = re.search(r"(?m)^all = \[(.*)\]", pyproject)
    assert all_line and "docs" in all_line.group(1)


@pytest.mark.slow
def test_the_site_builds_strictly_and_its_api_page_covers_every_public_name(
        tmp_path: Path) -> None:
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings")
    pytest.importorskip("material")
    site = tmp_path / "site"
    build = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir",
                            str(site)], cwd=ROOT, capture_output=True, text=True,
                           env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert build.returncode == 0, build.stderr[-3000:]
    html = (site / "api.html").read_text()
    ids = {i.rsplit(".", 1)[-1].lower() for i in re.findall(r'id="([\w.]+)"', html)}
    missing = [name for name in allfives.__all__ if name.lower() not in ids]
    assert not missing, f"the built API page has no entry for {missing}"
    assert (site / "index.html").exists() and (site / "search" / "search_index.json").exists()
