"""The one protocol between the experiment runner and the estimators: what a run record
stores of a fitted model beyond its metrics."""

__all__ = ["RecordedModel"]


class RecordedModel:
    """Mixin: ``run_record_extras()`` returns the fitted attributes a class declares in
    ``_recorded_attributes`` (name without the trailing underscore -> value), those it has.

    An estimator with other needs overrides ``run_record_extras`` itself; the runner calls
    it on every fitted model and stores the (JSON-ready) result as the record's ``model``.
    ``numerics_revision`` is bumped whenever a change alters the estimator's numbers, so
    runs recorded before it are never reused.
    """

    numerics_revision = 1
    _recorded_attributes = ()

    def run_record_extras(self):
        out = {}
        for attr in self._recorded_attributes:
            try:
                out[attr.rstrip("_")] = getattr(self, attr)
            except AttributeError:
                continue
        return out
