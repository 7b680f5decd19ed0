"""Crafted files through every loader that takes them: one line, exit 2, bounded memory.

Each crafted file (a YAML alias bomb, YAML nested 50,000 deep, ``/dev/zero``, a
``policy.npz`` declaring 4 TB or a zip bomb, hostile ``card.json`` files) is made in
``tmp_path`` and handed to the real ``allfives`` command in a fresh child process, whose peak
memory is measured (``getrusage(RUSAGE_CHILDREN)`` in a wrapper that starts only it). The
fast set runs each file through ``eval`` (``ckpt:``, ``--rules``, ``--set``); the rest of the
file x loader table (``search:net=``, ``train --init-from``, ``train --config``, ``serve
--model``) is marked slow. The limits themselves: docs/faults.md, "Crafted files".
"""

from __future__ import annotations

import io
import json
import shutil
import socket
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from allfives_env.inputs.shipped import shipped_dir

ROOT = Path(__file__).resolve().parents[1]
GOOD = shipped_dir("checkpoints") / "all_fives_2p"
PEAK_MB = 256
WRAPPER = ("import resource, subprocess, sys\n"
           "r = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=240)\n"
           "sys.stdout.write(r.stderr)\n"
           "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)\n"
           "sys.exit(r.returncode)\n")


def run_cli(*args: str, cwd: Path) -> tuple[int, list[str], int]:
    """``allfives *args`` in a fresh child: (exit code, stderr lines, peak RSS in MB)."""
    cmd = [sys.executable, "-c", WRAPPER, sys.executable, "-m", "allfives.cli", *args]
    out = subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=300)
    *lines, peak = out.stdout.splitlines()
    return out.returncode, [ln for ln in lines if ln.strip()], int(peak)


def assert_refused(result: tuple[int, list[str], int], *words: str) -> None:
    code, lines, peak = result
    assert code == 2, lines
    assert len(lines) == 1, lines  # one line, no traceback
    assert len(lines[0]) < 600, lines[0][:300]
    for word in words:
        assert word in lines[0], lines[0]
    assert peak < PEAK_MB, f"peak memory {peak} MB"


# ------------------------------------------------------------------ crafted YAML
def alias_bomb(levels: int = 9) -> str:
    """Chained aliases: a few hundred bytes that expand to 9**levels strings."""
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, levels):
        lines.append(f"a{i}: &a{i} [{','.join([f'*a{i - 1}'] * 9)}]")
    return "\n".join(lines) + f"\ntarget: *a{levels - 1}\n"


def flow_alias_bomb(levels: int = 9) -> str:
    """The same as one flow-style YAML value (for ``--set target=...``)."""
    items = ["&a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]"]
    items += [f"&a{i} [{','.join([f'*a{i - 1}'] * 9)}]" for i in range(1, levels)]
    return "[" + ",".join(items) + "]"


DEEP = "[" * 50_000 + "]" * 50_000
YAML_FILES: dict[str, tuple[str, str]] = {  # name -> (text, a word of the refusal)
    "alias_bomb": (alias_bomb(), "alias"),
    "deep": (DEEP, "nested"),
}


def rules_file(tmp_path: Path, name: str) -> Path:
    path = tmp_path / f"{name}.yaml"
    path.write_text(YAML_FILES[name][0])
    return path


@pytest.mark.parametrize("name", sorted(YAML_FILES))
def test_a_crafted_rules_file(tmp_path: Path, name: str) -> None:
    path = rules_file(tmp_path, name)
    assert_refused(run_cli("eval", "--agents", "heuristic", "greedy", "--games", "2",
                           "--rules", str(path), cwd=tmp_path), YAML_FILES[name][1])


@pytest.mark.parametrize("value,word", [(flow_alias_bomb(), "alias"), (DEEP, "nested")])
def test_a_crafted_set_value(tmp_path: Path, value: str, word: str) -> None:
    assert_refused(run_cli("eval", "--agents", "heuristic", "greedy", "--games", "2",
                           "--set", f"target={value}", cwd=tmp_path), word)


def test_rules_from_dev_zero(tmp_path: Path) -> None:
    assert_refused(run_cli("eval", "--agents", "heuristic", "greedy", "--games", "2",
                           "--rules", "/dev/zero", cwd=tmp_path), "is a device, not a regular file")


@pytest.mark.slow
@pytest.mark.parametrize("name", [*sorted(YAML_FILES), "extends_alias_bomb",
                                  "extends_dev_zero"])
def test_a_crafted_train_config(tmp_path: Path, name: str) -> None:
    if name.startswith("extends_"):
        target = "/dev/zero" if name == "extends_dev_zero" else str(rules_file(tmp_path,
                                                                             "alias_bomb"))
        path = tmp_path / "config.yaml"
        path.write_text(f"extends: {target}\n")
    else:
        path = rules_file(tmp_path, name)
    assert_refused(run_cli("train", "--config", str(path), "--run-dir", str(tmp_path / "run"),
                           cwd=tmp_path))
    assert not (tmp_path / "run").exists()


# ------------------------------------------------------------------ crafted checkpoints
def npy_header(shape: tuple[int, ...], descr: str = "<f4") -> bytes:
    """An ``.npy`` header (magic string included) declaring ``shape`` of ``descr``."""
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": descr, "fortran_order": False, "shape": shape})
    return buf.getvalue()  # the magic string, then the header


def huge_shape_npz(path: Path) -> None:
    """A ``policy.npz`` whose one member declares shape (10**12,) float32 (4 TB), no data."""
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("wout.npy", npy_header((10**12,)))


def zip_bomb_npz(path: Path, gib: int = 1) -> None:
    """A ``policy.npz`` of about 1 MB that unpacks to ``gib`` GiB of float32 zeros."""
    chunk = bytes(64 << 20)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as z, \
            z.open("w0.npy", "w", force_zip64=True) as f:
        f.write(npy_header(((gib << 30) // 4,)))
        for _ in range((gib << 30) // len(chunk)):
            f.write(chunk)


def object_npz(path: Path) -> None:
    """A ``policy.npz`` holding an object array (a pickle)."""
    buf = io.BytesIO()
    np.save(buf, np.array([{"x": 1}], dtype=object), allow_pickle=True)
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("wout.npy", buf.getvalue())


def edit_card(change: Callable[[dict], None]) -> Callable[[Path], None]:
    def write(directory: Path) -> None:
        card = json.loads((directory / "card.json").read_text())
        change(card)
        (directory / "card.json").write_text(json.dumps(card))
    return write


def big_card(directory: Path) -> None:
    with open(directory / "card.json", "r+b") as f:
        f.truncate(200 << 20)  # 200 MB (sparse)


def deep_card(directory: Path) -> None:
    (directory / "card.json").write_text("[" * 100_000 + "]" * 100_000)


CHECKPOINTS: dict[str, tuple[Callable[[Path], None], str]] = {  # name -> (craft, a word)
    "npz_huge_shape": (lambda d: huge_shape_npz(d / "policy.npz"), "declare"),
    "npz_object": (lambda d: object_npz(d / "policy.npz"), "dtype"),
    "card_deep": (deep_card, "nested"),
    "card_big": (big_card, "larger than"),
    "card_rules_string": (edit_card(lambda c: c.update(rules="all_fives")), "'rules'"),
    "card_rules_list": (edit_card(lambda c: c.update(rules=[1, 2])), "'rules'"),
    "card_policy_file_int": (edit_card(lambda c: c.update(policy_file=123)), "policy_file"),
    "card_no_players": (edit_card(lambda c: c.pop("players")), "'players'"),
    "card_players_string": (edit_card(lambda c: c.update(players="2")), "'players'"),
    "card_policy_file_up": (edit_card(lambda c: c.update(policy_file="../../x")),
                            "policy_file"),
    "card_policy_file_absolute": (edit_card(lambda c: c.update(policy_file="/etc/passwd")),
                                  "policy_file"),
}


def checkpoint(tmp_path: Path, name: str) -> Path:
    directory = tmp_path / name
    shutil.copytree(GOOD, directory)
    CHECKPOINTS[name][0](directory)
    return directory


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def loader_args(loader: str, directory: Path, tmp_path: Path) -> list[str]:
    if loader == "eval_ckpt":
        return ["eval", "--agents", f"ckpt:{directory}", "greedy", "--games", "2"]
    if loader == "search_net":
        return ["eval", "--agents", f"search:net={directory},sims=8", "greedy", "--games", "2"]
    if loader == "train_init_from":
        return ["train", "--algo", "dmc", "--policy", "action_features", "--init-from",
                str(directory), "--run-dir", str(tmp_path / "run")]
    return ["serve", "--model", f"mine={directory}", "--port", str(free_port()),
            "--records-dir", str(tmp_path / "games")]


@pytest.mark.parametrize("name", sorted(CHECKPOINTS))
def test_a_crafted_checkpoint_through_ckpt(tmp_path: Path, name: str) -> None:
    directory = checkpoint(tmp_path, name)
    assert_refused(run_cli(*loader_args("eval_ckpt", directory, tmp_path), cwd=tmp_path),
                   CHECKPOINTS[name][1])


@pytest.mark.slow
@pytest.mark.parametrize("loader", ["search_net", "train_init_from", "serve_model"])
@pytest.mark.parametrize("name", sorted(CHECKPOINTS))
def test_a_crafted_checkpoint_through_every_loader(tmp_path: Path, name: str,
                                                   loader: str) -> None:
    directory = checkpoint(tmp_path, name)
    assert_refused(run_cli(*loader_args(loader, directory, tmp_path), cwd=tmp_path),
                   CHECKPOINTS[name][1])
    assert not (tmp_path / "run").exists()


@pytest.fixture(scope="module")
def bomb(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("bomb") / "ckpt"
    shutil.copytree(GOOD, directory)
    zip_bomb_npz(directory / "policy.npz")
    assert (directory / "policy.npz").stat().st_size < 8 << 20
    return directory


@pytest.mark.slow
@pytest.mark.parametrize("loader", ["eval_ckpt", "search_net", "train_init_from",
                                    "serve_model"])
def test_a_zip_bomb_policy(tmp_path: Path, bomb: Path, loader: str) -> None:
    assert_refused(run_cli(*loader_args(loader, bomb, tmp_path), cwd=tmp_path), "unpacks to")


def test_a_sound_checkpoint_still_plays(tmp_path: Path) -> None:
    """The checks refuse only what is crafted: a copy of a shipped model plays."""
    directory = tmp_path / "good"
    shutil.copytree(GOOD, directory)
    code, lines, _ = run_cli(*loader_args("eval_ckpt", directory, tmp_path), cwd=tmp_path)
    assert code == 0, lines
