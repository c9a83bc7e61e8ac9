"""Registry look-ups, suggestions, and third-party plugins through entry points."""

import sys
import types

import pytest

from mlkit import registry
from mlkit._errors import UnknownNameError, closest


def test_unknown_names_list_the_closest():
    with pytest.raises(UnknownNameError, match=r"did you mean 'mssboost'"):
        registry.METHODS.get("mssbost")
    with pytest.raises(UnknownNameError, match=r"known methods: ") as err:
        registry.METHODS.get("zzz")
    known = str(err.value).split("known methods: ")[1].split(", ")
    assert known == sorted(known) and {"rsbag", "miles", "mssboost"} <= set(known)
    assert closest("fig44", ["mssboost/fig4", "fig4", "table2"])[0] == "fig4"


def test_entry_point_plugin_adds_a_method(monkeypatch):
    module = types.ModuleType("mlkit_test_plugin")

    def _load():
        from mlkit.methods import RSBag

        class MyBag(RSBag):
            """A third-party variant."""

        registry.METHODS.register("my-bag", MyBag, family="multilabel")
        sys.modules["mlkit_test_plugin"] = module

    class FakeEntryPoint:
        name, value = "mine", "mlkit_test_plugin"

        def load(self):
            _load()

    monkeypatch.setattr(registry, "_loaded", False)
    monkeypatch.setattr(registry, "entry_points",
                        lambda group: [FakeEntryPoint()] if group == "mlkit.plugins" else [])
    monkeypatch.setattr(registry.METHODS, "_entries", dict(registry.METHODS._entries))
    assert "my-bag" in registry.METHODS.names()
    assert registry.METHODS.get("my-bag").__name__ == "MyBag"


def test_broken_plugin_is_reported_not_fatal(monkeypatch, caplog):
    class Broken:
        name, value = "broken", "nowhere.module"

        def load(self):
            raise ImportError("No module named 'nowhere'")

    monkeypatch.setattr(registry, "_loaded", False)
    monkeypatch.setattr(registry, "entry_points", lambda group: [Broken()])
    assert "mssboost" in registry.METHODS.names()
    assert "failed to load" in caplog.text


def test_duplicate_registration_is_refused():
    with pytest.raises(ValueError, match="already registered"):
        registry.METRICS.register("mean_ap", lambda y, s: 0.0)
