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


def _fig4(tmp_path, old, new):
    path = tmp_path / "c.yaml"
    text = (CONFIGS / "mssboost" / "fig4.yaml").read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return path


def test_labels_are_case_sensitive_and_get_distinct_record_folders(tmp_path):
    from mlkit._errors import ConfigError
    from mlkit.config import slug

    path = _fig4(tmp_path, "label: NSBoost", "label: rsbag")      # RSBag vs rsbag: two methods
    spec = load_spec(path)
    labels = [m.display for m in spec.methods]
    assert "rsbag" in labels and "RSBag" in labels
    folders = {slug(x).casefold() for x in labels}                # case-insensitive file systems
    assert len(folders) == len(labels)
    path = _fig4(tmp_path, "label: NSBoost", "label: RSBag")      # the same label twice
    with pytest.raises(ConfigError, match="unique; repeated: RSBag"):
        load_spec(path)


def test_an_ambiguous_method_reference_is_refused(tmp_path):
    from mlkit._errors import ConfigError

    path = _fig4(tmp_path, "  - name: nsboost\n    label: NSBoost",
                 "  - name: mssboost\n    label: MSSBoost-b")
    # fig4 has MSSBoost and MSSBoost (intercept); the edit adds MSSBoost-b
    with pytest.raises(ConfigError, match="names 3 entries"):
        load_spec(path, overrides=["methods.mssboost.params.rd=0.3"])
    spec = load_spec(path, overrides=["methods.MSSBoost-b.params.rd=0.3"])
    assert [m.params["rd"] for m in spec.methods] == [0.1, 0.3, 0.1, 0.1]


def test_method_params_star_never_overrides_an_explicit_or_set_parameter():
    spec = load_spec(CONFIGS / "mssboost" / "table2.yaml",
                     overrides=["methods.MSSBoost.params.rd=0.3"])
    mss = next(m for m in spec.methods if m.display == "MSSBoost")
    for ds in spec.datasets:
        assert ds.params_for(mss)["rd"] == 0.3
        assert ds.params_for(mss)["gamma"] == ds.method_params["*"]["gamma"]


def test_label_ap_with_undefined_labels():
    import numpy as np

    from mlkit.papers.mssboost.renderers.real import _label_ap

    ap = _label_ap([{"label_ap": [0.5, None]}, {"label_ap": [0.7, 0.2]}])
    np.testing.assert_allclose(ap, [0.6, 0.2])


@pytest.mark.parametrize("grids,match", [
    ("{'*': {rdd: [0.1]}}", r"c\.yaml:11: no method's grid searches 'rdd'.*'rd'"),
    ("{MSBoost: {rd: [0.1]}}", r"method_grids names no method 'MSBoost'.*MSSBoost"),
    ("{MSSBoost: {rff: [0.1]}}", r"rff"),
])
def test_bad_method_grids_are_refused_with_the_key(tmp_path, grids, match):
    from mlkit._errors import ConfigError

    path = _fig4(tmp_path, "params: {n_samples: 1000, random_state: 0}",
                 f"params: {{n_samples: 1000, random_state: 0}}\n  method_grids: {grids}")
    with pytest.raises(ConfigError, match=match):
        load_spec(path, overrides=["methods.MSSBoost.grid={rd: [0.05, 0.3]}"])


def test_the_cached_parameter_names_are_each_methods_own():
    """load_spec reads an estimator's constructor arguments once per class."""
    from mlkit import config
    from mlkit.registry import METHODS

    for entry in METHODS.entries():
        assert config._param_names(entry.obj) == tuple(entry.obj._get_param_names())
