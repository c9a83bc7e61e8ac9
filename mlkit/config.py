"""YAML experiment configs -> validated, typed :class:`ExperimentSpec`.

A config names a paper and an artifact, one dataset, the methods with their parameters, the
protocol (split, repeats, folds, seed), the metrics, the paper's reported numbers (``reported:``)
and a ``quick:`` block of smaller settings for ``--quick``. Files are read with
``yaml.safe_load`` semantics only. Every problem is a :class:`~mlkit._errors.ConfigError`
naming the file, the line, the key and what to do (the closest valid key, the allowed range).
"""

import copy
import functools
import inspect
import re
from pathlib import Path
from typing import Annotated, Any, Literal, Optional, Union

import yaml
from pydantic import (BaseModel, ConfigDict, Field, ValidationError, field_validator,
                      model_validator)

from ._errors import ConfigError, MlkitError, did_you_mean
from ._paths import configs_dir  # noqa: F401  (where the targets' configs are)
from .registry import DATASETS, FORMATS, METHODS, METRICS

__all__ = ["ExperimentSpec", "DatasetSpec", "MethodSpec", "ProtocolSpec", "PaperValue",
           "load_spec", "configs_dir", "apply_overrides", "read_target_header"]


def slug(text):
    """The file-name form of a dataset or method label: record folders are named by it.

    Labels are case-sensitive ("mi-SVM" and "MI-SVM" are two methods of one table), file
    systems may not be: a label that is not already its own safe lower-case form gets a
    short hash of the exact label, so two labels never share a folder.

    >>> slug("mi-SVM") != slug("MI-SVM"), slug("musk1")
    (True, 'musk1')
    """
    import zlib

    safe = re.sub(r"[^A-Za-z0-9_.+-]+", "_", text).strip("_") or "_"
    if safe == text and text == text.lower():
        return safe
    return f"{safe}-{zlib.crc32(text.encode()):08x}"[: len(safe) + 7]


def _folder_key(text):
    return slug(text).casefold()



#: the values a grid searches for one parameter: at least one
_Values = Annotated[list[Any], Field(min_length=1)]

class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


class PaperValue(_Strict):
    """One number of a paper: its value, or a string kept exactly as written (the paper's
    ``"> 20"``, or a marker such as "not public" / "not reported"), and its spread (the
    paper's ± figure, when it gives one)."""

    value: Union[float, str, None] = None
    spread: Optional[float] = None


def _paper_value(raw):
    if isinstance(raw, PaperValue):
        return raw
    if isinstance(raw, dict):
        return PaperValue.model_validate(raw)
    return PaperValue(value=raw)


#: ``reported:`` -- dataset (label or paper role) -> method label -> metric/quantity -> number,
#: where a whole dataset or method may instead be a marker ("not public", "not reported")
_Leaf = Union[float, str, PaperValue]
Reported = dict[str, Union[str, dict[str, Union[str, dict[str, _Leaf]]]]]


class ProtocolSpec(_Strict):
    """How runs are drawn: ``holdout`` (random train/test split redrawn every repeat), ``cv``
    (k folds per repeat), ``predefined`` (the dataset's own train/test split) or
    ``labelled`` (few labelled samples: every repeat splits the data at random into a
    training and a test part (``test_size``), draws ``n_labelled`` samples per class from
    the training part (multi-label targets: ``n_labelled`` positives and as many negatives
    per label, the labelled set being the union of these draws), and splits the test part
    into a validation part (``validation_size`` of it, stratified for single-label targets)
    on which a method's ``grid`` is chosen, and the rest, which is scored; the model is
    always fitted on the labelled samples only; see :func:`mlkit.runner.make_splits`).

    ``validation_size: 0`` (labelled only) gives no validation part: the whole test part is
    scored, and a method's ``grid`` is then chosen as in the other protocols, by
    ``grid_folds``-fold CV on its (labelled) training rows.

    ``n_test`` (labelled only; optional) fixes the scored rows instead of the test part's
    rest: every repeat draws ``n_test`` samples per class (multi-label targets: ``n_test``
    positives and as many negatives per label, united) at random from the rows neither in
    the labelled draw nor in the validation part. With ``validation_size > 0`` the test
    part, the labelled draw from its complement and the validation part are drawn as above;
    with ``validation_size: 0`` there is no test part at all: the ``n_labelled`` per class
    are drawn from the whole dataset and the ``n_test`` per class from the rest (the
    "training and test sets of fixed sizes, redrawn from the whole data every repetition"
    protocol, e.g. HFSS Table 3; ``test_size`` then plays no role). A class with fewer than
    ``n_labelled + n_test`` samples is an error. Without ``n_test`` the splits and the run
    keys are those of the protocol before the field existed."""

    split: Literal["holdout", "cv", "predefined", "labelled"] = "holdout"
    test_size: float = Field(0.25, gt=0, lt=1)
    n_folds: int = Field(10, ge=2)
    repeats: int = Field(1, ge=1)
    stratify: bool = False
    seed: int = Field(0, ge=0)
    # labelled only (a dataset's own `protocol:` may give n_labelled: 4, 6, 8 rows)
    n_labelled: Optional[int] = Field(None, ge=1)        # per class, or positives per label
    validation_size: float = Field(0.2, ge=0, lt=1)      # share of the test part (0: none)
    n_test: Optional[int] = Field(None, ge=1)            # scored rows per class (or label)


class DatasetSpec(_Strict):
    """``name`` of a registered dataset, or ``path`` + ``format`` of a user's own file.

    ``test_path`` (with ``path``) is the predefined test part of the user's data, in the
    same format: the runner then uses that split (``protocol.split: predefined``).
    ``label`` names its rows (default: the name or file name), ``role`` the paper collection
    it stands in for, and ``method_params`` per-dataset parameters of the methods, keyed by
    method label, or ``"*"`` for every method that takes the parameter and does not set it
    itself (e.g. the rd/rf chosen for that collection); ``split_method_params`` gives, per
    repetition number, parameters laid over ``method_params`` on that repetition's runs
    only, keyed alike (e.g. settings chosen on each split's own training part: repetition
    ``r`` runs at the values chosen on split ``r``'s training part, never on data that is
    in its test part); ``method_grids`` likewise replaces,
    per parameter, the values a method's ``grid`` searches on this dataset (e.g. wider kernel
    widths where the features keep their raw scale); ``protocol`` changes the fields it
    names of the config's protocol for this dataset (e.g. 10-fold CV for MUSK, 50/50 splits
    for the others), so ``--seed`` still reaches every dataset.
    """

    name: Optional[str] = None
    path: Optional[str] = None
    test_path: Optional[str] = None     # a user's predefined test part, in the same format
    format: Optional[str] = None
    label: Optional[str] = None
    role: Optional[str] = None
    params: dict[str, Any] = Field(default_factory=dict)
    method_params: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # {repetition: {method label or "*": params}}: over method_params on that repetition
    split_method_params: dict[int, dict[str, dict[str, Any]]] = Field(default_factory=dict)
    method_grids: dict[str, dict[str, _Values]] = Field(default_factory=dict)
    protocol: Optional[dict[str, Any]] = None   # fields of the config's protocol to change
    # run it only when its files are in the data home (a paper's own data that the user may
    # have); otherwise the runner skips it and says so (RunResult.absent), never substituting
    when_present: bool = False

    @field_validator("protocol")
    @classmethod
    def _protocol_fields(cls, value):
        if value:
            ProtocolSpec.model_validate(value)       # same keys and ranges as `protocol:`
        return value

    @property
    def display(self):
        return self.label or self.name or Path(self.path).name

    def params_for(self, method, repeat=None):
        """The method's parameters on this dataset: those of "*" it takes fill in what the
        method does not set itself; then those given for its label override. With
        ``repeat``, those ``split_method_params`` gives for that repetition are laid over
        them the same way (its "*" over the dataset's "*", its label's over the label's)."""
        valid = _param_names(METHODS.get(method.name))
        common = {k: v for k, v in self.method_params.get("*", {}).items() if k in valid}
        split = self.split_method_params.get(repeat, {}) if repeat is not None else {}
        common.update({k: v for k, v in split.get("*", {}).items() if k in valid})
        return {**common, **method.params, **self.method_params.get(method.display, {}),
                **split.get(method.display, {})}

    def grid_for(self, method):
        """The method's grid on this dataset: its own, with the values given under "*" (for
        the parameters it searches) and then under its label replacing those parameters'."""
        common = {k: v for k, v in self.method_grids.get("*", {}).items() if k in method.grid}
        return {**method.grid, **common, **self.method_grids.get(method.display, {})}

    def method_as_run(self, method, repeat=None):
        """``method`` with this dataset's parameters and grid (what a run on it uses; on
        repetition ``repeat``, with that repetition's ``split_method_params``)."""
        return method.model_copy(update={"params": self.params_for(method, repeat),
                                         "grid": self.grid_for(method)})

    def protocol_over(self, protocol):
        """The protocol of this dataset: the config's, with the fields this dataset names."""
        return protocol.model_copy(update=self.protocol) if self.protocol else protocol


class GridBorrow(_Strict):
    """Grid parameters borrowed from another method's CV choice (``grid_borrow``)."""

    method: str
    params: list[str] = Field(min_length=1)


class MethodSpec(_Strict):
    """A registered method, its constructor parameters, and the label its rows carry.

    ``grid`` ({param: [values]}) makes every run choose those parameters by ``grid_folds``-fold
    CV on its own training part (scikit-learn's ``GridSearchCV``, refit on all of it), scored
    by ``grid_metric`` (a registered metric).
    """

    name: str
    label: Optional[str] = None
    params: dict[str, Any] = Field(default_factory=dict)
    grid: dict[str, _Values] = Field(default_factory=dict)
    grid_folds: int = Field(3, ge=2)
    grid_metric: str = "accuracy"
    #: the inner folds stratified by class (``StratifiedKFold``); False: ``KFold``
    grid_stratified: bool = False
    #: "training_instances": the grid's ``n_xv`` values at or above the number of instances
    #: of the smallest inner training fold are left out (an expansion over every instance
    #: is the dense model, not a sparse one); the refit keeps the values below it. Nothing
    #: is capped in a grid without n_xv (e.g. a --set that fixes N_XV)
    grid_n_xv_cap: Optional[Literal["training_instances"]] = None
    #: how the grid point is chosen from the CV scores (:mod:`mlkit.grid_rules`): "argmax"
    #: the best mean score, "one_se" the fewest N_XV within one standard error of it
    grid_rule: Literal["argmax", "one_se"] = "argmax"
    #: further rules whose choice is also refitted and scored on the test part, kept in the
    #: record under ``also`` (one refit each, the grid's fold scores shared)
    grid_also: list[Literal["argmax", "one_se"]] = Field(default_factory=list)
    #: {parameter: start value}: the grid searched in two stages (:mod:`mlkit.runner.staged`):
    #: the other parameters with these held at their start values, then these at that
    #: choice (e.g. ``{n_xv: 100}``: gamma and C at N_XV 100, then N_XV); empty: one joint
    #: grid. Without a grid, as the other grid options, it does nothing
    grid_staged: dict[str, Any] = Field(default_factory=dict)
    #: ``{method: <registered name>, params: [...]}``: those grid parameters are the CV
    #: choice of that method over the grid's parameters it takes, on the same inner folds
    #: (:class:`mlkit.runner.staged.BorrowedGridSearchCV`); the rest of the grid is then
    #: searched with them fixed
    grid_borrow: Optional["GridBorrow"] = None
    #: the label whose seeds the runs take (default: their own): rows of an ablation that
    #: change one setting share the random state and the inner folds of the row they vary
    seed_from: Optional[str] = None
    #: run on the protocol's first ``repeats`` repetitions only (None: on all of them), e.g.
    #: a search whose choice only the first split's runs read
    repeats: Optional[int] = Field(None, ge=1)

    @model_validator(mode="after")
    def _borrowed_in_grid(self):
        # without a grid there is no search: the grid options do nothing (as grid_n_xv_cap)
        if self.grid_borrow is not None and self.grid:
            missing = [p for p in self.grid_borrow.params if p not in self.grid]
            if missing:
                raise ValueError(f"grid_borrow: {missing} not in the grid "
                                 f"(grid: {sorted(self.grid)})")
            if self.grid_staged:
                raise ValueError("grid_borrow and grid_staged cannot be combined")
        return self

    @model_validator(mode="after")
    def _staged_in_grid(self):
        for name, value in (self.grid_staged.items() if self.grid else ()):
            if name not in self.grid:
                raise ValueError(f"grid_staged: {name!r} is not in the grid "
                                 f"(grid: {sorted(self.grid)})")
            if value not in self.grid[name]:
                raise ValueError(f"grid_staged: the start value {name}={value!r} is not one "
                                 f"of the grid's values {self.grid[name]}")
        return self

    @property
    def display(self):
        return self.label or self.name


class ExperimentSpec(_Strict):
    """The typed form of one experiment config (see the README's config reference)."""

    paper: str
    artifact: str
    title: str = ""
    render: str = "metric-table"       # the registered renderer that draws the target
    runs_of: Optional[str] = None      # another artifact of the paper whose runs it renders
    fast: bool = False                 # its quick form is cheap enough for CI's regression run
    datasets: list[DatasetSpec] = Field(default_factory=list)
    methods: list[MethodSpec] = Field(default_factory=list)
    protocol: ProtocolSpec = Field(default_factory=ProtocolSpec)
    metrics: list[str] = Field(default_factory=list)
    curves: bool = False
    reported: Reported = Field(default_factory=dict)   # the paper's own numbers
    thresholds: dict[str, float] = Field(default_factory=dict)   # what its claims test
    report: dict[str, Any] = Field(default_factory=dict)   # the renderer's typed options
    quick: dict[str, Any] = Field(default_factory=dict)
    source: Optional[str] = None   # the file it came from (filled in by load_spec)

    def paper_value(self, dataset, method, key, role=None):
        """The paper's number for ``dataset`` (or its paper ``role``), ``method`` and
        ``key`` as a :class:`PaperValue`, or None when the config gives none. A marker
        given for the whole dataset or method ("not public") answers for all its keys."""
        for scope in (dataset, role):
            entry = self.reported.get(scope) if scope else None
            if entry is None:
                continue
            if isinstance(entry, str):
                return PaperValue(value=entry)
            by_method = entry.get(method)
            if isinstance(by_method, str):
                return PaperValue(value=by_method)
            if by_method is not None and key in by_method:
                return _paper_value(by_method[key])
        return None

    @property
    def options(self):
        """The renderer's options (``report:``), validated by its typed model."""
        from .registry import RENDERERS

        model = RENDERERS.get(self.render).options
        return model.model_validate(self.report) if model is not None else self.report

    @field_validator("methods")
    @classmethod
    def _unique_labels(cls, methods):
        # labels are case-sensitive, as the papers use them ("mi-SVM" and "MI-SVM")
        labels = [m.display for m in methods]
        dupes = sorted({x for x in labels if labels.count(x) > 1})
        if dupes:
            raise ValueError(f"method labels must be unique; repeated: {', '.join(dupes)} "
                             "(give each a distinct 'label')")
        return methods

    @model_validator(mode="before")
    @classmethod
    def _one_dataset(cls, data):
        # `dataset: {...}` is shorthand for a one-item `datasets:` list
        if isinstance(data, dict) and "dataset" in data:
            if "datasets" in data:
                raise ValueError("give either 'dataset' or 'datasets', not both")
            data = dict(data)
            data["datasets"] = [data.pop("dataset")]
        return data

    @field_validator("datasets")
    @classmethod
    def _unique_dataset_labels(cls, datasets):
        labels = [_folder_key(d.display) for d in datasets if d.name or d.path]
        dupes = sorted({d.display for d in datasets
                        if (d.name or d.path) and labels.count(_folder_key(d.display)) > 1})
        if dupes:
            raise ValueError(f"dataset labels must be unique; repeated: {dupes} "
                             "(give each a distinct 'label')")
        return datasets

    @property
    def dataset(self):
        """The first (often the only) dataset."""
        return self.datasets[0]

    @model_validator(mode="after")
    def _labelled_fields_need_the_labelled_split(self):
        """``n_labelled`` / ``n_test`` mean something only to ``split: labelled``: given with
        another split (the config's, or a dataset's merged over it), they are an error, never
        silently ignored."""
        for d in self.datasets:
            p = d.protocol_over(self.protocol)
            given = [k for k in ("n_labelled", "n_test") if getattr(p, k) is not None]
            if p.split != "labelled" and given:
                raise ValueError(f"dataset {d.display}: {' and '.join(given)} apply to "
                                 f"'split: labelled' only; its protocol's split is {p.split!r}")
        return self

    @model_validator(mode="after")
    def _staged_start_in_every_grid(self):
        """A staged grid's start values are in the grid each dataset runs (its
        ``method_grids`` may replace the method's values)."""
        for d in self.datasets:
            for m in self.methods:
                grid = d.grid_for(m) if m.grid_staged and m.grid else {}
                if not grid:
                    continue
                for name, value in m.grid_staged.items():
                    if value not in grid.get(name, []):
                        raise ValueError(f"method {m.display} on dataset {d.display}: "
                                         f"grid_staged's start {name}={value!r} is not one of "
                                         f"the grid's values {grid.get(name)}")
        return self

    @model_validator(mode="after")
    def _metrics_for_methods(self):
        if self.methods and not self.metrics:
            raise ValueError("a config with methods needs at least one entry in 'metrics'")
        if not self.datasets and not self.runs_of:
            raise ValueError("a config needs 'datasets' (or 'dataset'), or 'runs_of' naming "
                             "the artifact whose runs it renders")
        return self

    @property
    def target(self):
        return f"{self.paper}/{self.artifact}"

    def resolved(self):
        """The spec as a plain dict (what the manifest stores)."""
        return self.model_dump(mode="json", exclude={"quick", "source"})


# ---------------------------------------------------------------------------------------
def _read_yaml(path):
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: config file not found") from None
    except IsADirectoryError:
        raise ConfigError(f"{path}: is a directory, not a config file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config ({exc})") from None
    key = (text, str(path))
    if key in _PARSED:
        raw, node = _PARSED[key]
        return copy.deepcopy(raw), node
    try:
        raw, node = _parse_yaml(text)
    except yaml.YAMLError as exc:
        # the context mark is where the unfinished construct began (an unclosed bracket's
        # line); the problem mark is where the parser gave up
        context = getattr(exc, "context_mark", None)
        mark = context or getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        if context is not None and getattr(exc, "problem_mark", None) is not None:
            problem = (f"{exc.context} not closed: {problem} at line "
                       f"{exc.problem_mark.line + 1}")
        raise ConfigError(f"{path}{where}: malformed YAML: {problem}") from None
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a config must be a mapping of keys, got "
                          f"{type(raw).__name__}")
    _no_duplicate_keys(path, node)
    if len(_PARSED) > 256:
        _PARSED.clear()
    _PARSED[key] = (raw, node)
    return copy.deepcopy(raw), node


#: (text, path) -> (data, node) of the YAML read so far (a report reads each config a few
#: times); the caller gets its own copy of the data
_PARSED = {}
_FAST_LOADER = getattr(yaml, "CSafeLoader", None)


def _parse_yaml(text):
    """(data, node tree) of a YAML text: by libyaml when PyYAML has it (the same data and
    line marks, several times faster), else by the pure-Python parser, which also gives
    the error of a malformed text (so its message is the same either way)."""
    if _FAST_LOADER is not None:
        try:
            return (yaml.load(text, Loader=_FAST_LOADER),
                    yaml.compose(text, Loader=_FAST_LOADER))
        except yaml.YAMLError:
            pass                          # said by the pure-Python parser below
    return yaml.safe_load(text), yaml.compose(text)


def _no_duplicate_keys(path, node, where=()):
    """A key given twice in one mapping is a :class:`ConfigError` naming both lines (YAML
    would silently keep the second)."""
    if isinstance(node, yaml.MappingNode):
        seen = {}
        for key, value in node.value:
            name = key.value if isinstance(key, yaml.ScalarNode) else None
            if name is not None and name != "<<":
                if name in seen:
                    at = ".".join([*where, name])
                    raise ConfigError(f"{path}:{key.start_mark.line + 1}: key {at!r} is given "
                                      f"twice (first at line {seen[name]}); keep one of them")
                seen[name] = key.start_mark.line + 1
            _no_duplicate_keys(path, value, (*where, str(name)))
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _no_duplicate_keys(path, item, (*where, str(i)))


def _line_of(node, loc):
    """1-based line of the YAML node at key path ``loc`` (or of its deepest existing parent)."""
    line = None
    for part in loc:
        if node is None:
            break
        line = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if k.value == str(part)), None)
            if node is None:
                # the key itself may be the culprit: point at it
                break
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            node = node.value[part] if part < len(node.value) else None
        else:
            node = None
    if node is not None:
        line = node.start_mark.line + 1
    return line


def _key_line(node, loc):
    """Line of the key named by the last element of ``loc`` (for unknown keys)."""
    parent = node
    for part in loc[:-1]:
        if isinstance(parent, yaml.MappingNode):
            parent = next((v for k, v in parent.value if k.value == str(part)), None)
        elif isinstance(parent, yaml.SequenceNode) and isinstance(part, int):
            parent = parent.value[part] if part < len(parent.value) else None
        if parent is None:
            return None
    if isinstance(parent, yaml.MappingNode):
        for k, _ in parent.value:
            if k.value == str(loc[-1]):
                return k.start_mark.line + 1
    return None


def _where(path, node, loc, origins, *, key_line=False):
    """'--set KEY=VALUE' when ``loc`` was set on the command line, else 'file:line'."""
    for set_loc, where in origins.items():
        n = min(len(set_loc), len(loc))
        if n and tuple(set_loc[:n]) == tuple(loc[:n]):
            return where
    line = _key_line(node, loc) if key_line else _line_of(node, loc)
    return f"{path}:{line}" if line else str(path)


def _fmt_loc(loc):
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _fields_at(loc):
    """Valid key names of the model found at key path ``loc`` (for suggestions)."""
    model = ExperimentSpec
    for part in loc:
        if isinstance(part, int):
            continue
        field = model.model_fields.get("datasets" if part == "dataset" else part)
        if field is None:
            return []
        ann = field.annotation
        inner = getattr(ann, "__args__", None)
        candidates = [ann, *(inner or ())]
        model = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)),
                     None)
        if model is None:
            return []
    names = []
    for n, f in model.model_fields.items():
        if n == "source":
            continue
        names.append(f.alias or n)
    return names


def _error_from_pydantic(path, node, exc, origins):
    err = exc.errors()[0]
    loc = tuple(err["loc"])
    if err["type"] == "extra_forbidden":
        where = _where(path, node, loc, origins, key_line=True)
        key = loc[-1]
        parent = _fmt_loc(loc[:-1]) or "top level"
        msg = (f"unknown key {key!r} in {parent}{did_you_mean(key, _fields_at(loc[:-1]))}; "
               f"valid keys: {', '.join(_fields_at(loc[:-1]))}")
    elif err["type"] == "missing":
        where = _where(path, node, loc[:-1], {}) if len(loc) > 1 else str(path)
        msg = f"missing required key {_fmt_loc(loc)!r}"
    else:
        where = _where(path, node, loc, origins)
        got = err.get("input")
        msg = f"{_fmt_loc(loc)}: {err['msg'].rstrip('.')}; got {got!r}"
    return ConfigError(f"{where}: {msg}")


# ---------------------------------------------------------------------------------------
def _deep_merge(base, extra):
    out = copy.deepcopy(base)
    for key, value in (extra or {}).items():
        if isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _deep_merge(out[key], value)
        elif key == "methods" and isinstance(value, dict) and isinstance(out.get(key), list):
            # quick: {methods: {<label or name>: {params: ...}}} tweaks listed methods
            for ref, tweak in value.items():
                idx = _method_index(out[key], ref)
                out[key][idx] = _deep_merge(out[key][idx], tweak)
        else:
            out[key] = copy.deepcopy(value)
    return out


def _method_index(methods, ref):
    if isinstance(ref, int) or (isinstance(ref, str) and ref.isdigit()):
        i = int(ref)
        if 0 <= i < len(methods):
            return i
        raise ConfigError(f"methods[{i}] does not exist ({len(methods)} methods)")
    refs = [m.get("label") or m.get("name") for m in methods if isinstance(m, dict)]
    for key in ("label", "name"):       # labels first; a name must be unambiguous
        hits = [i for i, m in enumerate(methods) if isinstance(m, dict) and m.get(key) == ref]
        if len(hits) > 1:
            raise ConfigError(f"{ref!r} names {len(hits)} entries; use a label or an index")
        if hits:
            return hits[0]
    raise ConfigError(f"no method {ref!r} in this config{did_you_mean(ref, refs)}; "
                      f"methods: {', '.join(map(str, refs))}")


def apply_overrides(raw, overrides):
    """Apply ``--set key.path=value`` strings to a raw config dict (values parsed as YAML).

    A method is addressed by its label, name or index: ``methods.MSSBoost.params.rd=0.2``.
    """
    return _apply_overrides(raw, overrides)[0]


def _apply_overrides(raw, overrides):
    """(new raw dict, {resolved key path: the --set item that set it})."""
    raw = copy.deepcopy(raw)
    origins = {}
    for item in overrides:
        if "=" not in item:
            raise ConfigError(f"--set {item!r}: expected key.path=value")
        key, value = item.split("=", 1)
        try:
            parsed = yaml.safe_load(value) if value.strip() else None
        except yaml.YAMLError:
            parsed = value
        parts = [p for p in key.strip().split(".") if p]
        if not parts:
            raise ConfigError(f"--set {item!r}: empty key")
        cur, loc = raw, []
        try:
            for i, part in enumerate(parts[:-1]):
                if isinstance(cur, list):
                    idx = _method_index(cur, part)
                    cur = cur[idx]
                    loc.append(idx)
                    continue
                nxt = cur.get(part)
                if nxt is None:
                    nxt = cur[part] = {}
                if not isinstance(nxt, (dict, list)):
                    raise ConfigError(f"{'.'.join(parts[:i + 1])} is not a mapping")
                cur = nxt
                loc.append(part)
            if isinstance(cur, list):
                raise ConfigError(f"name a key inside the method, e.g. {key}.params.NAME=VALUE")
        except ConfigError as exc:
            raise ConfigError(f"--set {item}: {exc}") from None
        cur[parts[-1]] = parsed
        origins[(*loc, parts[-1])] = f"--set {item}"
    return raw, origins


# ---------------------------------------------------------------------------------------
@functools.cache
def _param_names(cls):
    """``cls._get_param_names()`` (an estimator class's constructor arguments), read once per
    class: scikit-learn inspects the signature on every call, and a report loads every
    config several times (tens of thousands of calls, seconds of CPU)."""
    return tuple(cls._get_param_names())


def _check_params(callable_, params, what, where):
    """Unknown parameter names of a function or estimator class -> ConfigError."""
    if inspect.isclass(callable_) and hasattr(callable_, "_get_param_names"):
        valid = list(_param_names(callable_))
    else:
        sig = inspect.signature(callable_)
        valid = [n for n, p in sig.parameters.items()
                 if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and n != "path"]
    for key in params:
        if key not in valid:
            raise ConfigError(f"{where(key)}: unknown parameter {key!r} of {what}"
                              f"{did_you_mean(key, valid)}; valid parameters: {', '.join(valid)}")


def _check_names(spec, path, node, origins):
    """Every name must be registered; every method's parameters must pass its own checks."""

    def at(*loc, key_line=False):
        return _where(path, node, loc, origins, key_line=key_line)

    def lookup(registry, name, *loc):
        try:
            return registry.get(name)
        except MlkitError as exc:
            raise ConfigError(f"{at(*loc)}: {exc}") from None

    key = "datasets" if any(k.value == "datasets" for k, _ in node.value) else "dataset"
    labels = [m.display for m in spec.methods]
    for d, ds in enumerate(spec.datasets):
        dloc = (key, d) if key == "datasets" else (key,)
        if (ds.name is None) == (ds.path is None):
            raise ConfigError(f"{at(*dloc)}: a dataset needs exactly one of 'name' (a "
                              "registered dataset) or 'path' (+ 'format') of your own file")
        if ds.test_path is not None and ds.path is None:
            raise ConfigError(f"{at(*dloc, 'test_path')}: 'test_path' goes with 'path' (the "
                              "training part of your own data, in the same format)")
        if ds.name is not None:
            loader = lookup(DATASETS, ds.name, *dloc, "name")
        else:
            if ds.format is None:
                raise ConfigError(f"{at(*dloc)}: dataset.path needs a 'format' "
                                  f"(one of: {', '.join(FORMATS.names())})")
            loader = lookup(FORMATS, ds.format, *dloc, "format")
        _check_params(loader, ds.params, f"dataset {ds.display!r}",
                      lambda k, dloc=dloc: at(*dloc, "params", k, key_line=True))
        taken = {p for m in spec.methods for p in _param_names(lookup(METHODS, m.name,
                                                                       "methods"))}
        for k in ds.method_params.get("*", {}):
            if k not in taken:
                raise ConfigError(f"{at(*dloc, 'method_params', '*', k, key_line=True)}: no "
                                  f"method takes the parameter {k!r}{did_you_mean(k, taken)}")
        repeats = ds.protocol_over(spec.protocol).repeats
        for r, by_label in ds.split_method_params.items():
            rloc = (*dloc, "split_method_params", r)
            if not 0 <= r < repeats:
                raise ConfigError(f"{at(*rloc, key_line=True)}: split_method_params names "
                                  f"repetition {r}; the protocol has repetitions 0-"
                                  f"{repeats - 1}")
            for ref, params in by_label.items():
                if ref != "*" and ref not in labels:
                    raise ConfigError(f"{at(*rloc, ref, key_line=True)}: split_method_params "
                                      f"names no method {ref!r}{did_you_mean(ref, labels)}; "
                                      f"methods: {', '.join(labels)}")
                for k in (params if ref == "*" else ()):
                    if k not in taken:
                        raise ConfigError(f"{at(*rloc, ref, k, key_line=True)}: no method "
                                          f"takes the parameter {k!r}{did_you_mean(k, taken)}")
        searched = {p for m in spec.methods for p in m.grid}
        for k in ds.method_grids.get("*", {}):
            if k not in searched:
                raise ConfigError(f"{at(*dloc, 'method_grids', '*', k, key_line=True)}: no "
                                  f"method's grid searches {k!r}{did_you_mean(k, searched)}")
        for field in ("method_params", "method_grids"):
            for ref in getattr(ds, field):
                if ref != "*" and ref not in labels:
                    raise ConfigError(f"{at(*dloc, field, ref, key_line=True)}: {field} names "
                                      f"no method {ref!r}{did_you_mean(ref, labels)}; "
                                      f"methods: {', '.join(labels)}")
                if field == "method_grids" and ref != "*":
                    m = next(m for m in spec.methods if m.display == ref)
                    _check_params(lookup(METHODS, m.name, "methods"), ds.method_grids[ref],
                                  f"method {m.name!r}", lambda k, dloc=dloc, ref=ref:
                                  at(*dloc, "method_grids", ref, k, key_line=True))
    for i, m in enumerate(spec.methods):
        cls = lookup(METHODS, m.name, "methods", i, "name")
        _check_params(cls, m.params, f"method {m.name!r}",
                      lambda k, i=i: at("methods", i, "params", k, key_line=True))
        _check_params(cls, m.grid, f"method {m.name!r}",
                      lambda k, i=i: at("methods", i, "grid", k, key_line=True))
        if m.grid:
            lookup(METRICS, m.grid_metric, "methods", i, "grid_metric")
        if m.grid_borrow is not None:
            source = lookup(METHODS, m.grid_borrow.method, "methods", i, "grid_borrow",
                            "method")
            _check_params(source, {k: None for k in m.grid_borrow.params},
                          f"method {m.grid_borrow.method!r}",
                          lambda k, i=i: at("methods", i, "grid_borrow", key_line=True))
        for d, ds, r in ((d, ds, r) for d, ds in enumerate(spec.datasets)
                         for r in (None, *ds.split_method_params)):
            params = ds.params_for(m, r)
            extra = {k: v for k, v in params.items() if k not in m.params or m.params[k] != v}
            field = "method_params" if r is None else "split_method_params"
            dloc = (key, d, field) if key == "datasets" else (key, field)
            _check_params(cls, extra, f"method {m.name!r}",
                          lambda k, dloc=dloc: at(*dloc, key_line=True))
            try:
                est = cls(**params)
                if hasattr(est, "_parameter_constraints"):   # sklearn's declared checks
                    est._validate_params()
            except (ValueError, TypeError) as exc:
                bad = next((k for k in params if f"'{k}'" in str(exc)), None)
                if bad in extra:
                    loc = dloc
                else:
                    loc = ("methods", i, "params", bad) if bad else ("methods", i)
                raise ConfigError(f"{at(*loc)}: methods[{i}] ({m.display}) on "
                                  f"{ds.display}: {exc}") from None
    for j, name in enumerate(spec.metrics):
        lookup(METRICS, name, "metrics", j)


def load_spec(path, *, overrides=(), quick=False, seed=None):
    """Read, override, validate and check one config file.

    Parameters
    ----------
    path : str or Path
    overrides : sequence of str
        ``key.path=value`` strings (``--set``), applied after ``quick``.
    quick : bool
        Merge the config's ``quick:`` block first (``--quick``).
    seed : int, optional
        Replaces ``protocol.seed`` (``--seed``).

    Returns
    -------
    ExperimentSpec
    """
    raw, node = _read_yaml(path)
    quick_origins = {}
    if quick:
        quick_block = raw.get("quick") or {}
        if not isinstance(quick_block, dict):
            raise ConfigError(f"{path}: 'quick' must be a mapping of keys to override")
        raw = _deep_merge(raw, quick_block)
        quick_origins = _quick_origins(path, node, raw, quick_block)
    raw, origins = _apply_overrides(raw, overrides)
    origins = {**quick_origins, **origins}
    if seed is not None:
        raw.setdefault("protocol", {})
        raw["protocol"]["seed"] = seed
        origins[("protocol", "seed")] = f"--seed {seed}"
    raw.pop("source", None)
    try:
        spec = ExperimentSpec.model_validate(raw)
    except ValidationError as exc:
        raise _error_from_pydantic(path, node, exc, origins) from None
    spec.source = str(path)
    _check_names(spec, path, node, origins)
    _check_options(spec, path, node, origins)
    return spec


def _quick_origins(path, node, merged, quick_block):
    """{key path in the merged config: 'file:line (quick:)'} for every key ``quick:`` set,
    so an invalid value it brings is reported at its own line."""
    out = {}

    def walk(value, loc, qloc):
        if isinstance(value, dict) and not (loc == ("methods",)):
            for k, v in value.items():
                walk(v, (*loc, k), (*qloc, k))
        elif loc == ("methods",) and isinstance(value, dict):
            for ref, tweak in value.items():
                idx = _method_index(merged["methods"], ref)
                walk(tweak, ("methods", idx), (*qloc, ref))
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, (*loc, i), (*qloc, i))
        else:
            line = _line_of(node, ("quick", *qloc))
            out[loc] = f"{path}:{line} (quick: block, used by --quick)"

    walk(quick_block, (), ())
    return out


def _check_options(spec, path, node, origins):
    """The renderer must be registered and ``report:`` must fit its typed options."""
    from .registry import RENDERERS

    try:
        renderer = RENDERERS.get(spec.render)
    except MlkitError as exc:
        raise ConfigError(f"{_where(path, node, ('render',), origins)}: {exc}") from None
    if renderer.options is None:
        return
    try:
        renderer.options.model_validate(spec.report)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ("report", *err["loc"])
        fields = list(renderer.options.model_fields)
        if err["type"] == "extra_forbidden":
            key = loc[-1]
            msg = (f"unknown option {key!r} of renderer {spec.render!r}"
                   f"{did_you_mean(str(key), fields)}; its options: "
                   f"{', '.join(fields) or '(none)'}")
            where = _where(path, node, loc, origins, key_line=True)
        else:
            msg = f"{_fmt_loc(loc)}: {err['msg'].rstrip('.')}; got {err.get('input')!r}"
            where = _where(path, node, loc, origins)
        raise ConfigError(f"{where}: {msg}") from None


def read_target_header(path):
    """The few keys that make a config file a target (paper, artifact, title, render,
    runs_of, fast), read without validating the rest (``mlkit list`` stays cheap)."""
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        raw = None
    raw = raw if isinstance(raw, dict) else {}
    return {k: raw.get(k) for k in ("paper", "artifact", "title", "render", "runs_of", "fast")}
