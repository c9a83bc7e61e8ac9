"""A method's numbers never change without its numerics revision changing (run records
are keyed by it, so a stale record is never reused)."""

import importlib.util
import json

import pytest

from .conftest import ROOT

spec = importlib.util.spec_from_file_location("numerics_revisions",
                                              ROOT / "scripts" / "numerics_revisions.py")
revisions = importlib.util.module_from_spec(spec)
spec.loader.exec_module(revisions)

KNOWN = json.loads(revisions.FILE.read_text())
CURRENT = revisions.current()


@pytest.mark.parametrize("name", sorted(CURRENT))
def test_source_change_bumps_the_numerics_revision(name):
    rev, digest = CURRENT[name]
    assert name in KNOWN, (f"{name} has no recorded numerics revision: run "
                           "`python scripts/numerics_revisions.py`")
    if KNOWN[name]["source"] != digest:
        assert rev != KNOWN[name]["revision"], (
            f"the source of {name} changed but its numerics_revision is still {rev}: bump it "
            "(or, if no number can change, `python scripts/numerics_revisions.py "
            f"--same-numbers {name}`)")
        pytest.fail(f"{name}: numerics_revision bumped to {rev}; record the new source with "
                    "`python scripts/numerics_revisions.py`")


def test_the_revision_is_part_of_the_run_key():
    from mlkit.config import load_spec
    from mlkit.experiment import _run_key, make_splits
    from mlkit.datasets import load_dataset
    from mlkit.methods import MSSBoost

    cfg = load_spec(ROOT / "configs" / "mssboost" / "fig4.yaml")
    ds, method = cfg.datasets[0], cfg.methods[2]
    split = make_splits(load_dataset(ds.name, params=ds.params), cfg.protocol)[0]
    before = _run_key(cfg, ds, method, split)
    old = MSSBoost.numerics_revision
    try:
        MSSBoost.numerics_revision = old + 1
        assert _run_key(cfg, ds, method, split) != before
    finally:
        MSSBoost.numerics_revision = old
    assert _run_key(cfg, ds, method, split) == before


def test_the_source_covers_the_helpers_a_method_computes_with():
    from mlkit.methods.mi import RS, SparseMI

    sparsemi = revisions.source_modules(SparseMI)
    assert {"mlkit.kernels", "mlkit.methods.mi._label_mean", "mlkit.methods.mi.sparsemi",
            "mlkit.methods.mi._base"} <= set(sparsemi)
    assert "mlkit.methods.mi.mikernel" in revisions.source_modules(RS)   # its dense SVM
    assert not any(m in sparsemi for m in ("mlkit.registry", "mlkit._errors", "mlkit.config"))
