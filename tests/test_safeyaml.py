"""The one loader of untrusted YAML and text (allfives_env/inputs/safeyaml.py), the npz checks
(allfives_env/inputs/safenpz.py) and the card checks (agents/trained/cardcheck.py), in process."""

from __future__ import annotations

import io
import os
import threading
import zipfile
from pathlib import Path

import numpy as np
import pytest

from allfives_agents.trained.cardcheck import check_card_fields, policy_path
from allfives_env.game.rules import RulesError, load_rules_yaml, make_rules, parse_overrides
from allfives_env.inputs.safenpz import MAX_NPZ_BYTES, check_npz, load_npz
from allfives_env.inputs.safeyaml import MAX_DEPTH, MAX_TEXT_BYTES, load_json, load_yaml, read_text
from allfives_train.configio import read_mapping


def test_plain_yaml_loads() -> None:
    assert load_yaml("a: [1, {b: x}]\nc: true\n", "t") == {"a": [1, {"b": "x"}], "c": True}
    assert load_yaml("", "t") is None


@pytest.mark.parametrize("text", ["a: &x 1\nb: *x\n", "[&a [1], *a]", "<<: *a"])
def test_an_alias_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="alias|not valid YAML"):
        load_yaml(text, "t")


def test_nesting_is_capped_at_max_depth() -> None:
    assert load_yaml("[" * MAX_DEPTH + "]" * MAX_DEPTH, "t") is not None
    with pytest.raises(ValueError, match=f"nested more than {MAX_DEPTH}"):
        load_yaml("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1), "t")
    with pytest.raises(ValueError, match="nested"):
        load_yaml("a:\n" + "".join("  " * i + "- \n" for i in range(1, 200)), "t")


def test_text_over_the_cap_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="characters of YAML"):
        load_yaml("#" * (MAX_TEXT_BYTES + 1), "t")
    path = tmp_path / "big.yaml"
    path.write_bytes(b"a: 1\n" + b" " * MAX_TEXT_BYTES)
    with pytest.raises(ValueError, match=f"larger than {MAX_TEXT_BYTES} bytes"):
        read_text(path, "rules file")
    path.write_bytes(b"\xff\xfe")
    with pytest.raises(ValueError, match="not UTF-8"):
        read_text(path, "rules file")


def test_dev_zero_a_fifo_and_a_folder_are_refused_without_reading(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="is a device, not a regular file"):
        read_text("/dev/zero", "rules file")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)  # no writer: opening it to read would block for ever
    with pytest.raises(ValueError, match="is a FIFO, not a regular file"):
        read_text(fifo, "rules file")

    def endless() -> None:
        try:
            with open(fifo, "wb") as f:
                while True:
                    f.write(b"a" * 65536)
        except (BrokenPipeError, OSError):
            pass

    writer = threading.Thread(target=endless, daemon=True)  # with one: refused the same
    writer.start()
    with pytest.raises(ValueError, match="is a FIFO, not a regular file"):
        read_text(fifo, "rules file")
    # Release the writer whichever way it went: blocked in its open (no reader yet) or in a
    # write to a full pipe. A non-blocking reader never waits; closing it ends the write.
    for _ in range(100):
        if not writer.is_alive():
            break
        fd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
        writer.join(0.1)
        os.close(fd)
        writer.join(0.1)
    assert not writer.is_alive()
    with pytest.raises(ValueError, match="is a folder, not a regular file"):
        read_text(tmp_path, "rules file")


def test_messages_cut_long_values(tmp_path: Path) -> None:
    with pytest.raises(RulesError) as caught:
        make_rules("all_fives", target="x" * 1_000_000)
    assert len(str(caught.value)) < 300 and "..." in str(caught.value)
    with pytest.raises(RulesError) as caught:
        make_rules("all_fives", **parse_overrides(["win_check=" + "y" * 100_000]))
    assert len(str(caught.value)) < 300
    path = tmp_path / "bad.yaml"
    path.write_text("a: [" + "1, " * 5_000)  # invalid: no ]
    with pytest.raises(RulesError) as caught:
        load_rules_yaml(path)
    assert "\n" not in str(caught.value) and len(str(caught.value)) < 400


def test_set_configs_and_extends_use_the_loader(tmp_path: Path) -> None:
    with pytest.raises(RulesError, match="alias"):
        parse_overrides(["target=[&a 1, *a]"])
    (tmp_path / "base.yaml").write_text("x: &a 1\ny: *a\n")
    (tmp_path / "top.yaml").write_text("extends: base.yaml\n")
    with pytest.raises(ValueError, match="alias"):
        read_mapping(tmp_path / "top.yaml")


def test_json_nesting_is_capped() -> None:
    assert load_json('{"a": "[[[[[[", "b": [[1]]}', "t") == {"a": "[[[[[[", "b": [[1]]}
    with pytest.raises(ValueError, match="nested 100000 levels deep"):
        load_json("[" * 100_000 + "]" * 100_000, "t")


# ------------------------------------------------------------------ npz
def npz_of(tmp_path: Path, members: dict[str, bytes]) -> Path:
    path = tmp_path / "p.npz"
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


def npy(array: np.ndarray) -> bytes:
    buf = io.BytesIO()
    np.save(buf, array, allow_pickle=True)
    return buf.getvalue()


def test_a_sound_npz_loads(tmp_path: Path) -> None:
    path = npz_of(tmp_path, {"w.npy": npy(np.ones((3, 4), np.float32)),
                             "activation.npy": npy(np.array("relu"))})
    arrays = load_npz(path)
    assert arrays["w"].shape == (3, 4) and str(arrays["activation"]) == "relu"


@pytest.mark.parametrize("members,words", [
    ({"w.npy": npy(np.array([{"a": 1}], dtype=object))}, "dtype object"),
    ({"w.npy": npy(np.zeros(2, dtype=[("a", "<f4")]))}, "only numbers"),
    ({"w.txt": b"hello"}, "not a .npy array"),
    ({f"w{i}.npy": npy(np.zeros(1)) for i in range(300)}, "300 members"),
])
def test_npz_members_are_checked(tmp_path: Path, members: dict[str, bytes],
                                 words: str) -> None:
    with pytest.raises(ValueError, match=words):
        check_npz(npz_of(tmp_path, members), "policy file")


def test_declared_sizes_are_capped_before_loading(tmp_path: Path) -> None:
    header = io.BytesIO()
    half = (MAX_NPZ_BYTES // 2 + 8) // 4
    np.lib.format.write_array_header_1_0(
        header, {"descr": "<f4", "fortran_order": False, "shape": (half,)})
    one = header.getvalue()
    check_npz(npz_of(tmp_path, {"a.npy": one}))  # one half alone passes the header check
    with pytest.raises(ValueError, match="declare"):
        check_npz(npz_of(tmp_path, {"a.npy": one, "b.npy": one}))  # together over the cap


# ------------------------------------------------------------------ cards
SOUND = {"players": 2, "teams": False, "rules": {"target": 250}, "policy": {"hidden": [64]},
         "policy_file": "policy.npz"}


@pytest.mark.parametrize("change,field", [
    ({"players": True}, "players"), ({"players": 5}, "players"), ({"teams": "no"}, "teams"),
    ({"rules": "x"}, "rules"), ({"policy": {"hidden": "64"}}, "policy"),
    ({"policy_file": ["a"]}, "policy_file"),
])
def test_card_fields_are_type_checked(change: dict, field: str) -> None:
    check_card_fields(dict(SOUND), "'d'")
    with pytest.raises(ValueError, match=f"field '{field}' is .*: it must be"):
        check_card_fields({**SOUND, **change}, "'d'")


@pytest.mark.parametrize("name", ["../x", "/etc/passwd", "a/b.npz", "..", "", "a\\b",
                                  "link.npz"])
def test_policy_file_stays_in_the_folder(tmp_path: Path, name: str) -> None:
    (tmp_path / "link.npz").symlink_to("/etc/passwd")
    assert policy_path(tmp_path, {}) == tmp_path / "policy.npz"
    assert policy_path(tmp_path, {"policy_file": "other.npz"}) == tmp_path / "other.npz"
    with pytest.raises(ValueError, match="plain file name inside the checkpoint folder"):
        policy_path(tmp_path, {"policy_file": name})


def _depth_by_hand(text: str) -> int:
    depth = most = 0
    inside = escaped = False
    for ch in text:
        if inside:
            escaped, inside = (False, True) if escaped else (ch == "\\", ch != '"')
        elif ch == '"':
            inside = True
        elif ch in "[{":
            depth += 1
            most = max(most, depth)
        elif ch in "]}":
            depth -= 1
    return most


def test_json_depth_skips_brackets_in_strings_as_a_parser_does() -> None:
    import json
    import random

    from allfives_env.inputs.safeyaml import json_depth

    rng = random.Random(0)

    def value(level: int) -> object:
        if level > 5 or rng.random() < 0.3:
            return "".join(rng.choice('[]{}"\\a\n') for _ in range(rng.randint(0, 6)))
        if rng.random() < 0.5:
            return [value(level + 1) for _ in range(rng.randint(0, 3))]
        return {str(k): value(level + 1) for k in range(rng.randint(0, 3))}

    for _ in range(500):
        text = json.dumps(value(0), ensure_ascii=rng.random() < 0.5)
        assert json_depth(text) == _depth_by_hand(text), text


def test_json_depth_of_a_crafted_text_is_not_quadratic() -> None:
    """2 MB of ``"\\`` pairs (each a string that never closes) took a regex hours; the count
    is one pass. Bounded generously in a child process, as the server's upload path."""
    import subprocess
    import sys

    code = ("from allfives_env.inputs.safeyaml import json_depth; "
            "print(json_depth('\"\\\\' * 1_000_000))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "0", out.stderr[-500:]
