"""median and quantile give numpy's values exactly (float32 depth samples and float64 distances; median in float64)."""
import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from predrel_ros.predicates.order_statistics import median, quantile

samples = st.lists(st.floats(-2.0, 2.0, allow_nan=False, width=32), min_size=1, max_size=60)


@settings(max_examples=200, deadline=None)
@given(samples, st.sampled_from([np.float32, np.float64]), st.floats(0.0, 1.0))
def test_median_and_quantile_are_numpys(values, dtype, q):
    array = np.array(values, dtype)
    assert median(array.copy()) == float(np.median(array.astype(np.float64)))
    assert quantile(array, q) == float(np.quantile(array, q))
    for fixed in (0.1, 0.25, 0.5):                       # the quantiles the depth tests use
        assert quantile(array, fixed) == float(np.quantile(array, fixed))


def test_by_hand():
    assert median(np.array([3.0, 1.0, 2.0, 10.0])) == 2.5
    assert quantile(np.array([0.0, 1.0, 2.0, 3.0, 4.0]), 0.1) == np.quantile([0.0, 1.0, 2.0, 3.0, 4.0], 0.1) == 0.4
    assert quantile(np.array([7.0]), 0.25) == 7.0
