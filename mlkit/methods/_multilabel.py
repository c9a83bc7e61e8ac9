"""The base of every multi-label estimator: target checks, encodings and predictions.

Y is an (n, L) 0/1 or -1/+1 matrix (predictions come back in the same form), or a 1-D
binary y (a single label; predictions are its classes). Decision values are (n, L), or
(n,) for a 1-D y; a prediction is ``classes_[F > 0]``.
"""

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.multiclass import type_of_target
from sklearn.utils.validation import check_is_fitted, validate_data

from ._record import RecordedModel
from ._validation import TrainingDataError, check_multilabel_Y

__all__ = ["MultiLabelClassifier"]


class MultiLabelClassifier(RecordedModel, ClassifierMixin, BaseEstimator):
    """Shared fit-time checks and predict-time plumbing; subclasses implement ``fit`` with
    :meth:`_check_fit_input` and ``decision_function`` returning (n, L) via
    :meth:`_shape_scores`."""

    #: what a run record keeps: the size of the fitted model and, for the boosted
    #: ensembles, each base model's weights per label and the label it was learned for
    _recorded_attributes = ("n_models_", "model_size_", "alphas_", "estimator_labels_")

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.target_tags.multi_output = True
        tags.classifier_tags.multi_class = False
        tags.classifier_tags.multi_label = True
        return tags

    def _check_fit_input(self, X, Y):
        """Validate X and Y; return X and Y as a (n, L) float matrix of -1/+1."""
        self._validate_params()
        if Y is None:
            raise ValueError(f"{type(self).__name__} requires y to be passed, but the target "
                             "y is None")
        X = validate_data(self, X, accept_sparse=["csr", "csc"], dtype=float)
        Y = np.asarray(Y)
        if Y.ndim == 1 or (Y.ndim == 2 and Y.shape[1] == 1 and Y.dtype.kind not in "biuf"):
            Y = self._encode_binary(Y.ravel(), X.shape[0])
            self._encoding = "binary"
        else:
            Y, self._encoding = check_multilabel_Y(Y, X.shape[0], self)
            self.classes_ = np.array([0, 1]) if self._encoding == "01" else np.array([-1, 1])
        self.n_labels_ = Y.shape[1]
        return X, Y

    def _encode_binary(self, y, n_samples):
        name = type(self).__name__
        if len(y) != n_samples:
            raise ValueError(f"{name}: X has {n_samples} samples but y has {len(y)}")
        y_type = type_of_target(y, input_name="y", raise_unknown=True)
        if len(np.unique(y)) < 2:
            raise TrainingDataError(f"{name}: y has only one class; at least 2 classes are "
                                    "needed")
        if y_type == "multiclass":
            raise ValueError(
                f"Only binary classification is supported. {name} handles binary or "
                f"multi-label targets; y has {len(np.unique(y))} classes. Pass a "
                "(n_samples, n_labels) indicator matrix (e.g. "
                "sklearn.preprocessing.label_binarize) for one-vs-rest."
            )
        if y_type != "binary":
            raise ValueError(f"{name}: unsupported target type {y_type!r}")
        self.classes_, y_idx = np.unique(y, return_inverse=True)
        return np.where(y_idx == 1, 1.0, -1.0)[:, None]

    def _check_X(self, X):
        check_is_fitted(self)
        return validate_data(self, X, accept_sparse=["csr", "csc"], dtype=float, reset=False)

    def _shape_scores(self, F):
        """(n, L) decision values -> (n,) when fitted on a 1-D binary y."""
        return F[:, 0] if self._encoding == "binary" else F

    def predict_from_scores(self, F):
        return self.classes_[(F > 0).astype(int)]

    def predict(self, X):
        """sign(F_l(x)), in the encoding of the Y given to ``fit`` (0/1, -1/+1 or ``classes_``)."""
        return self.predict_from_scores(self.decision_function(X))
