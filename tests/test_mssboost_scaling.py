"""mssboost/scaling: the generator's nested sizes, the log-log slope, the cost model and
the config (Table 2's TRECVID-style settings at every N)."""

import numpy as np
import pytest

from mlkit.papers.mssboost.data import make_trecvid_style
from mlkit.papers.mssboost.renderers.scaling import cost_model, loglog_slope

from .conftest import CONFIGS


def test_population_makes_nested_sets_and_leaves_the_default_alone():
    full = make_trecvid_style(400, population=400, n_labels=5, scale=1.0, random_state=3)
    same = make_trecvid_style(400, n_labels=5, random_state=3)
    np.testing.assert_array_equal(full.X, same.X)
    small = make_trecvid_style(150, population=400, n_labels=5, random_state=3)
    assert small.X.shape == (150, 343)
    np.testing.assert_array_equal(small.X, full.X[:150])
    np.testing.assert_array_equal(small.Y, full.Y[:150])
    with pytest.raises(ValueError, match="population"):
        make_trecvid_style(500, population=400)


def test_loglog_slope_against_an_independent_fit():
    rng = np.random.default_rng(0)
    n = np.repeat([100, 200, 400, 800], 3).astype(float)
    v = 2.0 * n ** 0.7 * np.exp(rng.normal(0, 0.05, n.size))
    b, half, a = loglog_slope(n, v)
    x, y = np.log(n), np.log(v)
    slope, icpt = np.polyfit(x, y, 1)
    resid = y - (icpt + slope * x)
    se = np.sqrt(resid @ resid / (x.size - 2) / ((x - x.mean()) ** 2).sum())
    from scipy.stats import t
    assert b == pytest.approx(slope) and a == pytest.approx(icpt)
    assert half == pytest.approx(t.ppf(0.975, x.size - 2) * se)
    assert abs(b - 0.7) < half


def test_cost_model_gives_the_papers_example():
    # Sec. 4.4: rd = rf = 0.1, T = 3L -> "around 250 times and 33 times"
    learn, predict = cost_model(39, 117, 0.1, 0.1)
    assert learn == pytest.approx(250) and predict == pytest.approx(33.33, rel=1e-3)


def test_config_loads_with_table2s_trecvid_settings():
    from mlkit.config import load_spec
    scaling = load_spec(CONFIGS / "mssboost" / "scaling.yaml")
    table2 = load_spec(CONFIGS / "mssboost" / "table2.yaml")
    t2 = next(d for d in table2.datasets if d.name == "trecvid-style")
    t2m = {m.display: m for m in table2.methods}
    for m in scaling.methods:
        for ds in scaling.datasets:
            ours, theirs = ds.params_for(m), t2.params_for(t2m[m.display])
            for k in ("gamma", "C", "rd", "rf", "n_estimators", "chi2_filter"):
                assert ours.get(k) == theirs.get(k), (m.display, k)
    sizes = [d.params["n_samples"] for d in scaling.datasets]
    assert max(sizes) / min(sizes) >= 16
    assert {d.params["population"] for d in scaling.datasets} == {max(sizes)}
