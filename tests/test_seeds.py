import pytest

from fedclust.seeds import generator_for, seed_for


def test_seeds_depend_on_names_only():
    a = seed_for(2021, "kfed", "fig2", "femnist", "run=0")
    assert a == seed_for(2021, "kfed", "fig2", "femnist", "run=0")
    others = {seed_for(2021, "kfed", "fig2", "femnist", "run=1"),
              seed_for(2022, "kfed", "fig2", "femnist", "run=0"),
              seed_for(2021, "kfed", "fig2", "shakespeare", "run=0"),
              seed_for(2021, "kfed", "fig2femnist", "run=0")}
    assert a not in others and len(others) == 4
    assert seed_for(1, "p", 1) == seed_for(1, "p", 1.0) != seed_for(1, "p", 0.5)
    assert 0 <= a < 2**31
    assert generator_for(1, "x").random() == generator_for(1, "x").random()


def test_bad_seed_names_are_refused():
    with pytest.raises(ValueError, match="base_seed must be a non-negative integer"):
        seed_for(-1, "x")
    with pytest.raises(TypeError, match="seed names must be strings or numbers"):
        seed_for(1, ["x"])
