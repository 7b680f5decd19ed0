"""The batched engine's state layout is read through allfives_env.batched_engine.layout only."""

from __future__ import annotations

import ast
import pathlib

from allfives_env.batched_engine import layout as batched_layout

ROOT = pathlib.Path(__file__).resolve().parents[1]
LAYOUT = {name for name in dir(batched_layout) if name.isupper()}
ENGINE = {"allfives_env/batched_engine/kernels.py", "allfives_env/batched_engine/layout.py"}


def _layout_imports(path: pathlib.Path) -> list[str]:
    tree = ast.parse(path.read_text())
    return [alias.name for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom)
            and node.module == "allfives_env.batched_engine.kernels"
            for alias in node.names if alias.name in LAYOUT]


def test_no_code_outside_the_engine_imports_layout_names_from_the_kernels() -> None:
    offenders = {}
    for folder in ("allfives_env", "agents", "train"):
        for path in (ROOT / folder).rglob("*.py"):
            rel = path.relative_to(ROOT).as_posix()
            if rel not in ENGINE and (names := _layout_imports(path)):
                offenders[rel] = names
    assert offenders == {}, f"import these from allfives_env.batched_engine.layout: {offenders}"


def test_the_check_sees_such_an_import(tmp_path: pathlib.Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("from allfives_env.batched_engine.kernels import F_CUR, legal_list\n")
    assert _layout_imports(probe) == ["F_CUR"]


def test_the_layout_fields_are_distinct_and_documented() -> None:
    doc = batched_layout.__doc__ or ""
    for prefix, size in (("F_", batched_layout.NG), ("R_", batched_layout.NA),
                         ("T_", batched_layout.NT), ("K_", batched_layout.NK)):
        fields = {n: getattr(batched_layout, n) for n in LAYOUT if n.startswith(prefix)}
        assert sorted(fields.values()) == list(range(size)), prefix
        if prefix != "K_":
            assert [n for n in fields if n not in doc] == [], prefix
