"""Adding a paper touches only its own folder: a toy paper from a temporary package.

This is the README's "Extending mlkit" walk-through, executed: a package with a method
module (registers itself), a paper module (registers a renderer and a claim) and a configs
folder (every YAML in it is a target). Nothing of mlkit is edited.
"""

import importlib
import re
import sys
import textwrap

import pytest
from click.testing import CliRunner

from mlkit.cli import cli

METHOD = '''
import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from mlkit.methods._record import RecordedModel
from mlkit.registry import METHODS


class NearestMean(RecordedModel, ClassifierMixin, BaseEstimator):
    """Nearest class mean on the views concatenated (a toy multi-view method)."""

    numerics_revision = 1
    _recorded_attributes = ("n_views_",)

    def __init__(self, shrink=0.0):
        self.shrink = shrink

    def fit(self, views, y):
        from mlkit.methods._validation import check_views

        Xs, _ = check_views(views, self)
        X = np.hstack(Xs)
        self.classes_ = np.unique(y)
        self.means_ = np.array([X[y == c].mean(axis=0) for c in self.classes_])
        self.means_ *= 1.0 - self.shrink
        self.n_views_ = len(Xs)
        return self

    def decision_function(self, views):
        from mlkit.methods._validation import check_views

        X = np.hstack(check_views(views, self)[0])
        return -((X[:, None, :] - self.means_[None]) ** 2).sum(axis=2)

    def predict(self, views):
        return self.classes_[self.decision_function(views).argmax(axis=1)]


METHODS.register("toy-nearest-mean", NearestMean, family="multi-view", paper="toy")
'''

PAPER = '''
from pathlib import Path

from mlkit.targets import Rendered, register_config_folder, register_renderer, saved_results
from mlkit.targets import resolve_target
from mlkit.verify import ClaimResult, register_claim

from . import method  # noqa: F401  (registers the method)


@register_renderer("toy/count")
def render_count(result, out_dir, spec):
    """How many runs there are."""
    n = len(result.records)
    return Rendered(f"toy runs: {n}", {"runs": n}, [])


@register_claim("toy", 1, "the toy method beats chance")
def claim_1():
    records, out_dir, quick = saved_results(resolve_target("toy/table1"))
    if records is None:
        return ClaimResult(None, "not run")
    acc = sum(r["metrics"]["accuracy"] for r in records) / len(records)
    return ClaimResult(acc > 0.5, f"accuracy {acc:.3f}")


register_config_folder(Path(__file__).parent / "configs")
'''

TABLE1 = '''
paper: toy
artifact: table1
title: "Toy Table 1"
dataset: {name: multiview-synthetic, params: {n_samples: 120, random_state: 0}}
methods:
  - {name: toy-nearest-mean, label: NM, grid: {shrink: [0.0, 0.1]}}
protocol: {split: holdout, test_size: 0.5, repeats: 3, seed: 0}
metrics: [accuracy]
reported:
  multiview-synthetic: {NM: {accuracy: 0.9}}
'''

FIG1 = '''
paper: toy
artifact: fig1
title: "Toy Fig. 1, drawn from Table 1's runs"
render: toy/count
runs_of: table1
'''


@pytest.fixture(scope="module")
def toy_package(tmp_path_factory):
    root = tmp_path_factory.mktemp("plugin")
    pkg = root / "mlkit_toy_paper"
    (pkg / "configs" / "toy").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import paper  # noqa: F401\n")
    (pkg / "method.py").write_text(textwrap.dedent(METHOD))
    (pkg / "paper.py").write_text(textwrap.dedent(PAPER))
    (pkg / "configs" / "toy" / "table1.yaml").write_text(TABLE1)
    (pkg / "configs" / "toy" / "fig1.yaml").write_text(FIG1)
    sys.path.insert(0, str(root))
    importlib.import_module("mlkit_toy_paper")      # what the mlkit.plugins entry point does
    yield pkg
    sys.path.remove(str(root))


def _invoke(*args):
    return CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)


def test_a_new_paper_is_one_folder_of_code_plus_yaml(toy_package, results):
    listed = _invoke("list").stdout
    assert "toy-nearest-mean" in listed and "toy/table1" in listed and "toy/fig1" in listed
    # one job: loky workers started by earlier tests do not see this temporary sys.path
    # entry (an installed plugin is importable in every worker)
    res = _invoke("reproduce", "toy/table1")
    assert res.exit_code == 0, res.output
    assert "accuracy (paper)" in res.stdout and "0.900" in res.stdout    # paper vs ours
    assert "3 runs computed" in res.stdout
    # a figure drawn from table1's runs trains nothing; --force recomputes shared runs once
    forced = _invoke("reproduce", "toy/table1", "toy/fig1", "--force")
    assert forced.exit_code == 0, forced.output
    counts = re.findall(r"(\d+) runs computed, (\d+) reused", forced.stdout)
    assert counts == [("3", "0"), ("0", "3")]
    assert "toy runs: 3" in forced.stdout
    verdict = _invoke("verify", "toy")
    assert "claim 1: the toy method beats chance" in verdict.stdout
    assert re.search(r"(PASS|FAIL) +claim 1", verdict.stdout)
    import json

    from mlkit.experiment import load_records

    record = json.dumps(load_records(results / "toy" / "table1")[0])
    assert '"n_views": ' in record and '"numerics_revision": 1' in record
