"""Files written atomically get ordinary permissions, not mkstemp's 0600."""

import os
import stat

from mlkit._io import write_json, write_text


def _mode(path):
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_file_gets_the_umask_mode(tmp_path):
    old = os.umask(0o022)
    try:
        write_text(tmp_path / "table.md", "x\n")
        write_json(tmp_path / "summary.json", {"a": 1})
    finally:
        os.umask(old)
    assert _mode(tmp_path / "table.md") == 0o644
    assert _mode(tmp_path / "summary.json") == 0o644


def test_a_replaced_file_keeps_its_mode(tmp_path):
    path = tmp_path / "table.md"
    path.write_text("old\n")
    path.chmod(0o640)
    write_text(path, "new\n")
    assert path.read_text() == "new\n"
    assert _mode(path) == 0o640
