"""A griffe extension for the API pages: the docstrings of this project are written for Sphinx
(``:class:`X``` roles, ``text::`` before a literal block); mkdocstrings renders Markdown, so
this rewrites those few constructs into Markdown before rendering. Nothing else changes."""

from __future__ import annotations

import re
from typing import Any

import griffe

#: ``:func:`~a.b.c``` (the tilde shows only ``c``) or ``:class:`a.b```.
ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|exc|obj|const):`(~?)([^`]+)`")


def _role(match: re.Match[str]) -> str:
    tilde, target = match.groups()
    return f"`{target.rsplit('.', 1)[-1] if tilde else target}`"


def markdown_of(text: str) -> str:
    """The docstring ``text`` with Sphinx roles as code spans and ``::`` literal-block
    introductions as a plain colon (the indented block after it is already Markdown code)."""
    text = ROLE.sub(_role, text)
    text = re.sub(r"(?m)^\s*::\s*$", "", text)
    return re.sub(r"(?<=\S)::(?=\s*$)", ":", text, flags=re.M)


class SphinxRolesToMarkdown(griffe.Extension):
    """Rewrites every loaded object's docstring with :func:`markdown_of`."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = markdown_of(obj.docstring.value)
