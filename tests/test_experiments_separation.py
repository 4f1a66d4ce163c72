import pandas as pd
import pytest

from fedclust.centralized import reference_kmeans
from fedclust.papers.kfed.separation import (
    choose_k,
    oracle_seed,
    select_oracle,
    separation_pairs,
    summarize_separation,
    write_oracle,
)

from .conftest import make_blobs


def test_separation_pairs_summary_and_choice(rng):
    X, labels, _ = make_blobs(rng, n_clusters=4, per_cluster=50, spread=40.0)
    tables = [separation_pairs(X, k, device_clusters=1, devices_per_cluster=1, base_seed=0,
                               dataset="blobs") for k in (2, 4, 6)]
    pairs = pd.concat(tables, ignore_index=True)
    assert pairs.groupby("n_clusters").size().to_dict() == {2: 1, 4: 6, 6: 15}
    summary, chosen = summarize_separation(pairs, threshold=0.5)
    # the planted 4 blobs are far apart: k = 4 keeps every pair separated, k = 6 splits a blob
    at = summary.set_index("n_clusters")
    assert at.loc[4, "share_above"] == 1.0
    assert at.loc[6, "share_above"] < 1.0
    assert summary.loc[summary.chosen, "n_clusters"].tolist() == [4]  # ties go to the larger k
    assert chosen.n_clusters.tolist() == [4] and "chosen" not in chosen


def test_choose_k_breaks_ties_toward_larger_k():
    summary = pd.DataFrame({"n_clusters": [2, 3, 5], "share_above": [1.0, 1.0, 0.5]})
    assert choose_k(summary).chosen.tolist() == [False, True, False]


def test_oracle_seed_is_named_by_data_set_and_k():
    assert oracle_seed(1, "mnist", 4) == oracle_seed(1, "mnist", 4)
    assert len({oracle_seed(1, "mnist", 4), oracle_seed(1, "mnist", 5),
                oracle_seed(1, "femnist", 4)}) == 3


def test_select_oracle_by_k_or_chosen(tmp_path, rng):
    X, _, _ = make_blobs(rng, n_clusters=3)
    paths = []
    for k in (2, 3):
        path = tmp_path / f"k{k}.h5"
        write_oracle(reference_kmeans(X, k, seed=0), path)
        paths.append(str(path))
    labels, centers, attrs = select_oracle(paths, n_clusters=3)
    assert centers.shape == (3, X.shape[1])
    chosen = tmp_path / "chosen_k.csv"
    pd.DataFrame({"n_clusters": [2]}).to_csv(chosen, index=False)
    assert select_oracle(paths, n_clusters="chosen", chosen=chosen)[1].shape[0] == 2
    with pytest.raises(ValueError, match="no oracle clustering with k=7"):
        select_oracle(paths, n_clusters=7)
