"""Every shipped config validates, in its full and its --quick form, and every target has one."""

import pytest

from mlkit.config import load_spec
from mlkit.registry import TARGETS

from .conftest import CONFIGS

ALL = sorted(CONFIGS.glob("*/*.yaml"))


@pytest.mark.parametrize("path", ALL, ids=[f"{p.parent.name}/{p.stem}" for p in ALL])
@pytest.mark.parametrize("quick", [False, True])
def test_config_validates(path, quick):
    spec = load_spec(path, quick=quick)
    assert spec.paper == path.parent.name and spec.artifact == path.stem
    assert spec.title, "every config says what it reproduces"


def test_every_target_has_its_config():
    for name in TARGETS.names():
        assert TARGETS.get(name).config_path.is_file(), name
