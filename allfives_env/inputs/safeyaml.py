"""Reading untrusted text: YAML without aliases and with bounded nesting, files read up to a
size cap, JSON with bounded nesting, and values cut short in messages.

Every YAML a user or a client hands the program goes through :func:`load_yaml` (rule
overrides, ``--set``, ``--rules`` files, configs and their ``extends:`` chain, agent-id option
values): ``yaml.safe_load`` runs no code, but chained aliases ("billion laughs") expand a
few hundred bytes into gigabytes and a deep nesting overflows the stack. So:

* aliases (``*name``) are refused (:data:`MAX_DEPTH` levels of nesting at most, and no
  anchors are ever expanded, so a document's size is its text's size);
* a file is read as text through :func:`read_text`: a regular file only (a FIFO, a device
  such as ``/dev/zero`` or a folder is refused before anything is read, without blocking),
  at most :data:`MAX_TEXT_BYTES` (+1 to tell a larger one);
* every problem is one ``ValueError`` line, with long values cut by :func:`shorten`.
"""

from __future__ import annotations

import json
import os
import re
import stat
import sys
from pathlib import Path
from typing import Any

import numpy as np
import yaml

#: The largest text file read (configs, rules files, model cards): 1 MiB. Shipped ones are
#: under 40 KiB.
MAX_TEXT_BYTES = 1 << 20
#: The deepest nesting of lists and mappings in a YAML or JSON document.
MAX_DEPTH = 64
#: How many characters of a value a message shows.
SHOWN = 80


def cut(text: str, limit: int = SHOWN) -> str:
    """``text`` on one line, cut to ``limit`` characters with ``...``."""
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def shorten(value: Any, limit: int = SHOWN) -> str:
    """``repr(value)`` on one line, cut to ``limit`` characters with ``...``."""
    if isinstance(value, (str, bytes)) and len(value) > 4 * limit:
        value = value[:4 * limit]  # repr of the part shown only, not of 17 MB
    return cut(repr(value), limit)


class _Loader(yaml.SafeLoader):
    """``SafeLoader`` that refuses aliases and nesting deeper than :data:`MAX_DEPTH`."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            mark = self.peek_event().start_mark
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed "
                                              "in this YAML: write the value out", mark)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"nested more than {MAX_DEPTH} levels deep",
                    self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def _one_line(exc: BaseException) -> str:
    """A YAML error's problem and its place, in one short line (no echoed input)."""
    problem = getattr(exc, "problem", None) or str(exc)
    mark = getattr(exc, "problem_mark", None)
    where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark is not None else ""
    return cut(str(problem), 120) + where


def load_yaml(text: str, where: str) -> Any:
    """The YAML document in ``text`` (``None`` when empty); ``where`` names it in the one-line
    ``ValueError`` for invalid YAML, an alias, nesting over :data:`MAX_DEPTH` or text over
    :data:`MAX_TEXT_BYTES`."""
    if len(text) > MAX_TEXT_BYTES:
        raise ValueError(f"{where}: {len(text)} characters of YAML: at most {MAX_TEXT_BYTES}")
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 (a SafeLoader subclass)
    except yaml.YAMLError as exc:
        raise ValueError(f"{where}: not valid YAML: {_one_line(exc)}") from None
    except (RecursionError, MemoryError, OverflowError, ValueError) as exc:
        if isinstance(exc, ValueError) and "digits" in str(exc):  # Python's int size limit
            limit = getattr(sys, "get_int_max_str_digits", lambda: 4300)()
            raise ValueError(f"{where}: a number of more than {limit} digits") from None
        raise ValueError(f"{where}: not valid YAML ({type(exc).__name__})") from None


def file_kind(mode: int) -> str | None:
    """What a ``st_mode`` names when it is not a regular file (``"a FIFO"``, ``"a
    device"``, ``"a folder"``, ``"a socket"``), else None."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "a socket" if stat.S_ISSOCK(mode) else "a special file"


def missing_or_not_a_file(path: str | Path) -> str | None:
    """``"no such file"``, or ``"is a FIFO, not a regular file"`` and the like, or None when
    ``path`` is a regular file (stat only: nothing is opened, nothing blocks)."""
    try:
        kind = file_kind(os.stat(path).st_mode)
    except OSError:
        return "no such file"
    return None if kind is None else f"is {kind}, not a regular file"


def read_text(path: str | Path, what: str, cap: int = MAX_TEXT_BYTES) -> str:
    """The UTF-8 text of the regular file at ``path``, reading at most ``cap`` + 1 bytes;
    ``what`` names it in the one-line ``ValueError`` for a missing, unreadable, larger or
    non-UTF-8 file, and for one that is not a regular file (a FIFO, a device such as
    ``/dev/zero``, a folder: refused before anything is read, without blocking)."""
    try:  # opened without blocking (a FIFO with no writer), then refused unless a file
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise ValueError(f"{what} {shorten(str(path))}: cannot read it "
                         f"({exc.strerror or type(exc).__name__})") from None
    kind = file_kind(os.fstat(fd).st_mode)
    if kind is not None:
        os.close(fd)
        raise ValueError(f"{what} {shorten(str(path))}: is {kind}, not a regular file: "
                         f"give a {what} (a YAML file)")
    with open(fd, "rb") as f:
        try:
            data = f.read(cap + 1)
        except OSError as exc:
            raise ValueError(f"{what} {shorten(str(path))}: cannot read it "
                             f"({exc.strerror or type(exc).__name__})") from None
    if len(data) > cap:
        raise ValueError(f"{what} {shorten(str(path))}: larger than {cap} bytes: a {what} "
                         f"holds at most {cap} bytes")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{what} {shorten(str(path))}: not UTF-8 text (byte {exc.start})") \
            from None


def load_yaml_file(path: str | Path, what: str) -> Any:
    """:func:`load_yaml` of :func:`read_text`: the YAML document in the file at ``path``."""
    return load_yaml(read_text(path, what), f"{what} {shorten(str(path))}")


def json_depth(text: str) -> int:
    """How deeply the lists and objects of the JSON ``text`` nest, brackets inside strings
    skipped, counted before anything is parsed: one vectorized pass (linear in the text,
    a few int32 arrays of its length), so no crafted text makes it slow."""
    codes = np.frombuffer(text.encode("utf-8", "replace"), np.uint8)
    if not len(codes):
        return 0
    pos = np.arange(len(codes), dtype=np.int32)
    run = pos - np.maximum.accumulate(np.where(codes == ord("\\"), np.int32(-1), pos))
    del pos  # run[i]: the backslashes ending at i; a quote after an odd run is escaped
    quote = codes == ord('"')
    quote[1:] &= run[:-1] % 2 == 0
    del run
    outside = np.cumsum(quote, dtype=np.int32) % 2 == 0  # not inside a string literal
    step = np.zeros(len(codes), np.int32)
    step[((codes == ord("[")) | (codes == ord("{"))) & outside] = 1
    step[((codes == ord("]")) | (codes == ord("}"))) & outside] = -1
    return int(np.cumsum(step, dtype=np.int32).max(initial=0))


def loads(text: str) -> Any:
    """``json.loads``, with a number of more digits than Python converts
    (``sys.get_int_max_str_digits()``, 4300 by default) refused as invalid JSON: a
    ``json.JSONDecodeError`` saying so at its place, not Python's message about its limit."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError:
        limit = getattr(sys, "get_int_max_str_digits", lambda: 4300)()
        found = re.search(r"\d{" + str(limit + 1) + ",}", text)
        if found is None:
            raise
        raise json.JSONDecodeError(f"a number of more than {limit} digits", text,
                                   found.start()) from None


def load_json(text: str, where: str, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON document in ``text``, or a one-line ``ValueError`` for invalid JSON or nesting
    deeper than ``max_depth``."""
    depth = json_depth(text)
    if depth > max_depth:
        raise ValueError(f"{where}: JSON nested {depth} levels deep: at most {max_depth}")
    try:
        return loads(text)
    except (ValueError, RecursionError) as exc:
        raise ValueError(f"{where}: not valid JSON ({shorten(str(exc), 120)})") from None
