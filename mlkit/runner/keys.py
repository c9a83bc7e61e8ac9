"""Run keys and record paths: what determines a run's numbers, hashed; where its record and
its grid search checkpoint go; and the runs a spec plans, without loading any data.

A run's key hashes its method's numerics revision (:func:`mlkit.runner.contract.
numerics_revision`), the dataset and method as configured, the protocol fields that shape its
split, the metrics and the split's numbers, so a record is reused exactly when it would come
out the same."""

import hashlib
import json
from pathlib import Path

from ..config import slug
from .contract import numerics_revision
from .grid import CHECKPOINT_SUFFIX
from .splits import Split

__all__ = ["numerics_revision", "planned_runs", "record_path", "checkpoint_path"]


def _run_key(spec, dataset, method, split, payload=None):
    """The key of one run (``payload``: :func:`_key_payload` of its dataset and method,
    when the caller has it already)."""
    payload = dict(payload or _key_payload(spec, dataset, method), split=[split.repeat,
                                                                           split.fold])
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def _key_payload(spec, dataset, method):
    """What determines the numbers of a method's runs on a dataset, but the split."""
    return {
        # a change of the method's numbers never reuses the records made before it
        "numerics_revision": numerics_revision(method.name, method.params),
        # (the method's parameters, split_method_params' included, are in "method")
        "dataset": dataset.model_dump(mode="json", exclude={"method_params", "method_grids",
                                                            "split_method_params", "label",
                                                            "role", "when_present",
                                                            "protocol"}),
        # the grid-search options added later count only when set, so the records made
        # before them keep their keys; ``repeats`` (which runs are made) never changes a
        # run's numbers
        "method": method.model_dump(mode="json", exclude={"label", "repeats"} | {
            k for k in ("grid_stratified", "grid_n_xv_cap", "grid_rule", "grid_also",
                        "grid_staged", "grid_borrow", "seed_from")
            if getattr(method, k)
            == type(method).model_fields[k].get_default(call_default_factory=True)}),
        # split r does not depend on how many repeats there are: adding repeats later
        # reuses the runs already done
        "protocol": _protocol_key(dataset.protocol_over(spec.protocol)),
        "metrics": sorted(spec.metrics),
        "curves": spec.curves,
    }


def _protocol_key(protocol):
    """The protocol fields that determine a run's numbers (the labelled protocol's own
    fields only for it, and ``n_test`` only when given, so the records of the other
    protocols and of the labelled runs without it keep their keys)."""
    exclude = {"repeats"}
    if protocol.split != "labelled":
        exclude |= {"n_labelled", "validation_size", "n_test"}
    elif protocol.n_test is None:       # the labelled runs made before n_test existed
        exclude.add("n_test")
    return protocol.model_dump(mode="json", exclude=exclude)


def record_path(out_dir, dataset, method, split):
    """The file a run's record is written to when it finishes (``runs/<dataset>/<method>/
    <split>.json`` below ``out_dir``; :class:`mlkit.store.RunStore` reads it there, or from
    the folder's table once folded)."""
    return (Path(out_dir) / "runs" / slug(dataset.display) / slug(method.display)
            / f"{split.name}.json")


def checkpoint_path(record):
    """The grid search checkpoint of the run whose record goes to ``record`` (beside it;
    removed once the record is written)."""
    return Path(record).with_suffix(CHECKPOINT_SUFFIX)


def _plan(spec, out_dir, datasets=None, methods=None):
    """(dataset, method, split, run key, record path) of every run ``spec`` makes (of these
    datasets and methods, by display name, when given)."""
    for ds in spec.datasets:
        if datasets is not None and ds.display not in datasets:
            continue
        protocol = ds.protocol_over(spec.protocol)
        folds = protocol.n_folds if protocol.split == "cv" else 1
        chosen = [sm for sm in spec.methods if methods is None or sm.display in methods]
        # the methods as run on this dataset, and what their keys share, once (once per
        # repetition where split_method_params gives that repetition its own parameters)
        as_run = {}
        for r in range(protocol.repeats):
            at = r if r in ds.split_method_params else None
            if at not in as_run:
                as_run[at] = [(m, _key_payload(spec, ds, m)) for m in
                              (ds.method_as_run(sm, at) for sm in chosen)]
            for f in range(folds):
                split = Split(r, f, None, None, 0)
                for method, payload in as_run[at]:
                    if method.repeats is not None and r >= method.repeats:
                        continue
                    yield (ds, method, split, _run_key(spec, ds, method, split, payload),
                           record_path(out_dir, ds, method, split))


def planned_runs(spec, out_dir, datasets=None):
    """(run key, record path) of every run ``spec`` makes, without loading any data (the
    split numbers follow from the protocol alone: ``n_folds`` folds per repeat for ``cv``,
    one per repeat otherwise); e.g. how much of a long run its records hold. ``datasets``:
    only the datasets with these display names."""
    return [(key, path) for *_, key, path in _plan(spec, out_dir, datasets)]
