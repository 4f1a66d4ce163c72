import warnings

import numpy as np
import pytest

from fedclust._validation import check_n_clusters, check_sample_weight, fit_rng


def test_sample_weight_checks_name_the_argument():
    assert check_sample_weight(None, 3) is None
    np.testing.assert_array_equal(check_sample_weight(2, 3), [2.0, 2.0, 2.0])
    with pytest.raises(ValueError, match=r"one weight per row of X \(3\); got shape \(2,\)"):
        check_sample_weight([1, 2], 3)
    with pytest.raises(ValueError, match="sample_weight contains NaN"):
        check_sample_weight([1, np.nan, 1], 3)
    with pytest.raises(ValueError, match="1 weights are negative"):
        check_sample_weight([1, -1, 1], 3)
    assert check_sample_weight([1, -1, 1], 3, allow_negative=True)[1] == -1
    with pytest.raises(ValueError, match="no positive weight"):
        check_sample_weight([0, 0], 2)
    with pytest.raises(ValueError, match="must be real numbers"):
        check_sample_weight(["a", "b"], 2)


def test_n_clusters_against_the_data():
    assert check_n_clusters(3, 3) == 3
    with pytest.raises(ValueError, match=r"n_clusters=4 exceeds the number of samples \(3\)"):
        check_n_clusters(4, 3)


def test_fit_rng_copies_a_generator_and_seeds_the_rest():
    gen = np.random.default_rng(3)
    state = gen.bit_generator.state
    a, b = fit_rng(gen), fit_rng(gen)
    assert a.random() == b.random() and gen.bit_generator.state == state
    assert fit_rng(5).random() == np.random.default_rng(5).random()
    with pytest.raises(TypeError, match="random_state must be"):
        fit_rng("seed")


def test_distinct_points_are_counted_past_a_repeated_head():
    from sklearn.exceptions import ConvergenceWarning

    from fedclust._validation import check_distinct_points
    # the first 8k rows repeat one point: the full scan finds the other two at the end
    X = np.zeros((100, 2))
    X[-1], X[-2] = [1.0, 0.0], [0.0, 1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_distinct_points(X, 3)
    with pytest.warns(ConvergenceWarning, match=r"distinct clusters \(3\) found smaller than "
                                                r"n_clusters \(4\)"):
        check_distinct_points(X, 4)
    # a distinct point of zero weight does not count
    weights = np.ones(100)
    weights[-1] = 0.0
    with pytest.warns(ConvergenceWarning, match=r"distinct clusters \(2\)"):
        check_distinct_points(X, 3, weights)


@pytest.mark.parametrize("dtype, fine, too_large", [(np.float64, 1e140, 1e160),
                                                    (np.float32, 1e15, 1e18)])
def test_values_whose_squares_overflow_are_refused_by_name(dtype, fine, too_large):
    from fedclust._validation import check_data
    X = np.ones((1000, 10), dtype=dtype)
    X[5, 3] = fine
    check_data(X)
    X[5, 3] = too_large
    with pytest.raises(ValueError, match=r"Xtest holds values up to 1e\+1(8|60), too large for "
                                         r"k-means in float(32|64)"):
        check_data(X, name="Xtest")
