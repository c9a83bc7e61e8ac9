"""Per-repetition parameters (a dataset's ``split_method_params``) and a method run on the
first repetitions only (``repeats``): what each run is given, its key, reuse, planning and
the config's errors."""

import pytest
import yaml

from mlkit._errors import ConfigError
from mlkit.config import load_spec
from mlkit.experiment import run
from mlkit.runner.keys import planned_runs

from .conftest import CONFIGS


def _fig4(tmp_path, dataset_extra=None, method_extra=None, repeats=3):
    """fig4.yaml (stumps on the synthetic set), ``repeats`` repetitions, 3 base models, with
    ``dataset_extra`` merged into its dataset and ``method_extra`` into RSBag."""
    spec = yaml.safe_load((CONFIGS / "mssboost" / "fig4.yaml").read_text())
    spec.pop("quick", None)
    spec["protocol"]["repeats"] = repeats
    for m in spec["methods"]:
        m["params"]["n_estimators"] = 3
    spec["methods"] = spec["methods"][:3]                     # RSBag, NSBoost, MSSBoost
    spec["dataset"].update(dataset_extra or {})
    spec["methods"][0].update(method_extra or {})
    path = tmp_path / "fig4.yaml"
    path.write_text(yaml.safe_dump(spec))
    return path


def test_a_repetitions_parameters_are_laid_over_the_datasets_on_that_repetition_only(tmp_path):
    """Repetition 1 runs at its own rd (its "*": every method that takes rd and does not set
    it itself) and RSBag at its own rf (its label); repetitions 0 and 2 at the dataset's."""
    path = _fig4(tmp_path, {"method_params": {"*": {"rd": 0.2}},
                            "split_method_params": {1: {"*": {"rd": 0.3},
                                                        "RSBag": {"rf": 1.0}}}})
    spec = load_spec(path)
    for m in spec.methods:                  # fig4's methods set rd themselves: "*" fills none
        m.params.pop("rd")
    ds, (rsbag, nsboost, _) = spec.dataset, spec.methods
    assert ds.params_for(rsbag)["rd"] == ds.params_for(rsbag, 0)["rd"] == 0.2
    assert ds.params_for(rsbag, 1)["rd"] == ds.params_for(nsboost, 1)["rd"] == 0.3
    assert ds.params_for(rsbag, 1)["rf"] == 1.0 and ds.params_for(nsboost, 1)["rf"] == 0.5
    assert ds.params_for(rsbag, 2) == ds.params_for(rsbag)
    # a method's own value wins over a repetition's "*", as over the dataset's
    own = load_spec(path).methods[0]
    assert ds.params_for(own, 1)["rd"] == 0.1 and ds.params_for(own, 1)["rf"] == 1.0


def test_the_runner_gives_each_repetition_its_parameters_and_reuses_the_others(tmp_path):
    """The records carry the parameters of their own repetition; changing one repetition's
    parameters recomputes that repetition's runs only (a run's key holds its parameters)."""
    out = tmp_path / "out"
    path = _fig4(tmp_path, {"split_method_params": {1: {"RSBag": {"rf": 1.0}}}})
    first = run(load_spec(path), out)
    assert first.computed == 9
    rf = {(r["method"], r["repeat"]): r["params"]["rf"] for r in first.records}
    assert rf[("RSBag", 1)] == 1.0
    assert rf[("RSBag", 0)] == rf[("RSBag", 2)] == rf[("NSBoost", 1)] == 0.5
    # the key is that of the run as configured, so the plan (no data) agrees with the run
    planned = {k for k, _ in planned_runs(load_spec(path), out)}
    assert planned == {r["key"] for r in first.records}
    path = _fig4(tmp_path, {"split_method_params": {1: {"RSBag": {"rf": 1.0}},
                                                    2: {"RSBag": {"rf": 1.0}}}})
    second = run(load_spec(path), out)
    assert (second.computed, second.reused) == (1, 8)
    again = {(r["method"], r["repeat"]): r["metrics"] for r in second.records}
    assert again[("RSBag", 1)] == {(r["method"], r["repeat"]): r["metrics"]
                                   for r in first.records}[("RSBag", 1)]
    # without split_method_params every run is the dataset's: RSBag's repetitions 1 and 2
    # (whose records hold rf = 1.0) are recomputed, the others keep their records and keys
    plain = run(load_spec(_fig4(tmp_path)), out)
    assert (plain.computed, plain.reused) == (2, 7)


def test_a_method_can_run_on_the_first_repetitions_only(tmp_path):
    path = _fig4(tmp_path, method_extra={"repeats": 1})
    result = run(load_spec(path), tmp_path / "out")
    assert sorted(r["repeat"] for r in result.records if r["method"] == "RSBag") == [0]
    assert sorted(r["repeat"] for r in result.records if r["method"] == "NSBoost") == [0, 1, 2]
    assert len(planned_runs(load_spec(path), tmp_path / "out")) == result.computed == 7
    # it changes no key (not the numbers, only which runs are made): unset, the same
    # records are reused and only RSBag's repetitions 1 and 2 are computed
    again = run(load_spec(_fig4(tmp_path)), tmp_path / "out")
    assert again.reused == 7 and again.computed == 2


@pytest.mark.parametrize("extra, message", [
    ({1: {"RSBAG": {"rf": 1.0}}}, "split_method_params names no method 'RSBAG'"),
    ({3: {"RSBag": {"rf": 1.0}}}, "names repetition 3; the protocol has repetitions 0-2"),
    ({1: {"*": {"rff": 1.0}}}, "no method takes the parameter 'rff'"),
    ({1: {"RSBag": {"rff": 1.0}}}, "unknown parameter 'rff'"),
])
def test_bad_split_method_params_are_one_config_error(tmp_path, extra, message):
    path = _fig4(tmp_path, {"split_method_params": extra})
    with pytest.raises(ConfigError, match=message):
        load_spec(path)
