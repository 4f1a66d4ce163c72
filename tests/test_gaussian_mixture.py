"""Gaussian mixtures with a prescribed k-FED separation."""

import numpy as np
import pytest

from fedclust.data import make_separated_mixture
from fedclust.metrics import separation


@pytest.mark.parametrize("c", [0.05, 1.0, 100.0])
def test_generated_mixture_has_the_requested_separation(c):
    mix = make_separated_mixture(6, 10, c, samples_per_cluster=40, device_clusters=2,
                                 devices_per_cluster=3, random_state=1)
    measured = separation(mix.X, mix.labels, device_clusters=2, devices_per_cluster=3)
    assert measured.minimum == pytest.approx(c, rel=1e-9)
    np.testing.assert_allclose(measured.means, mix.centers, atol=1e-9)
    assert measured.residual_norm == pytest.approx(mix.residual_norm, rel=1e-12)


def test_generated_mixture_is_seeded():
    kw = dict(samples_per_cluster=10, device_clusters=1, devices_per_cluster=1)
    a = make_separated_mixture(3, 4, 2.0, random_state=5, **kw)
    b = make_separated_mixture(3, 4, 2.0, random_state=5, **kw)
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(a.X, make_separated_mixture(3, 4, 2.0, random_state=6, **kw).X)
    with pytest.raises(ValueError, match="separation must be > 0"):
        make_separated_mixture(3, 4, 0.0, **kw)
