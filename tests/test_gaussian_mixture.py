"""Gaussian mixtures in k-FED's Table 1 setup (groups, active and inactive separation)."""

import numpy as np
import pytest

from fedclust.data import make_separated_mixture, mixture_groups
from fedclust.metrics import separation


@pytest.mark.parametrize("c, c_in", [(0.05, 0.005), (1.0, 0.1), (100.0, 10.0)])
def test_active_pairs_at_c_and_inactive_pairs_at_their_requirement(c, c_in):
    mix = make_separated_mixture(9, 10, c, samples_per_cluster=40, device_clusters=3,
                                 devices_per_cluster=4, inactive_constant=c_in, random_state=1)
    assert mix.groups.tolist() == [0, 0, 0, 1, 1, 1, 2, 2, 2]
    measured = separation(mix.X, mix.labels, device_clusters=3, devices_per_cluster=4)
    active = (mix.groups[:, None] == mix.groups[None, :]) & ~np.eye(9, dtype=bool)
    inactive = mix.groups[:, None] != mix.groups[None, :]
    assert measured.c[active].min() == pytest.approx(c, rel=1e-9)
    # each device of a group holds 40 / 4 = 10 points of each of its 3 clusters: n_min = 30
    assert mix.min_device_size == 30
    ratio = measured.inactive(30)[inactive]
    assert ratio.min() * 10 == pytest.approx(c_in, rel=1e-9)
    np.testing.assert_allclose(measured.means, mix.centers, atol=1e-8)
    assert measured.residual_norm == pytest.approx(mix.residual_norm, rel=1e-12)


def test_inactive_pairs_are_the_close_ones_at_table_1s_c():
    """At c = 100 with C_in = 10, clusters of different groups sit far closer than clusters
    of one group: centralized k-means faces bunches, k-FED's devices never do."""
    mix = make_separated_mixture(16, 20, 100.0, samples_per_cluster=50, device_clusters=4,
                                 devices_per_cluster=5, random_state=2)
    gaps = np.linalg.norm(mix.centers[:, None] - mix.centers[None], axis=-1)
    same = (mix.groups[:, None] == mix.groups[None, :]) & ~np.eye(16, dtype=bool)
    other = mix.groups[:, None] != mix.groups[None, :]
    assert gaps[other].min() < 0.2 * gaps[same].min()


def test_generated_mixture_is_seeded():
    kw = dict(samples_per_cluster=10, device_clusters=1, devices_per_cluster=1)
    a = make_separated_mixture(3, 4, 2.0, random_state=5, **kw)
    b = make_separated_mixture(3, 4, 2.0, random_state=5, **kw)
    np.testing.assert_array_equal(a.X, b.X)
    assert not np.array_equal(a.X, make_separated_mixture(3, 4, 2.0, random_state=6, **kw).X)
    with pytest.raises(ValueError, match="separation must be > 0"):
        make_separated_mixture(3, 4, 0.0, **kw)
    assert mixture_groups(7, 3).tolist() == [0, 0, 0, 1, 1, 1, 2]
