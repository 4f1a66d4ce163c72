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
