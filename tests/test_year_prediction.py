"""UCI YearPredictionMSD: no published checksum, verified by content (small files made here)."""

import io
import zipfile

import numpy as np
import pytest

import fedclust.data.year_prediction as year_prediction
from fedclust.data.download import DataUnavailableError
from fedclust.data.year_prediction import (
    YEAR_PREDICTION,
    fetch_year_prediction,
    load_year_prediction,
)


def year_text(years=(2001, 1977, 1922), seed=0) -> bytes:
    rng = np.random.default_rng(seed)
    rows = [",".join([str(y)] + [f"{v:.5f}" for v in rng.standard_normal(90) * 40])
            for y in years]
    return ("\n".join(rows) + "\n").encode()


def zipped(members: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_reads_the_archive_and_the_text_alike(tmp_path):
    text = year_text()
    (tmp_path / "YearPredictionMSD.txt").write_bytes(text)
    (tmp_path / "a.zip").write_bytes(zipped({"YearPredictionMSD.txt": text}))
    for name in ("YearPredictionMSD.txt", "a.zip"):
        X, year = load_year_prediction(tmp_path / name, expected_rows=3)
        assert X.shape == (3, 90) and X.dtype == np.float32
        assert year.tolist() == [2001, 1977, 1922]
    expected = np.loadtxt(io.BytesIO(text), delimiter=",")[:, 1:]
    np.testing.assert_allclose(X, expected, rtol=1e-6)


@pytest.mark.parametrize("content, message", [
    (year_text(years=(2001, 1900)), r"row 2 has year 1900, outside 1922-2011"),
    (b"2001,1.0,2.0\n", r"rows have 3 columns; YearPredictionMSD has 91"),
    (year_text(years=(2001,)).replace(b"2001,", b"2001,abc,", 1), r"not the YearPredictionMSD"),
])
def test_a_wrong_file_is_named(tmp_path, content, message):
    path = tmp_path / "YearPredictionMSD.txt"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message):
        load_year_prediction(path, expected_rows=None)


def test_the_official_row_count_is_required(tmp_path):
    path = tmp_path / "YearPredictionMSD.txt"
    path.write_bytes(year_text())
    with pytest.raises(ValueError, match=r"3 rows; the UCI file has 515,345"):
        load_year_prediction(path)


def test_fetched_from_a_mirror_and_verified_by_content(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    (mirror / "year_prediction_msd").mkdir(parents=True)
    (mirror / YEAR_PREDICTION.mirror_path).write_bytes(
        zipped({"YearPredictionMSD.txt": year_text()}))
    with pytest.raises(ValueError, match="3 rows; the UCI file has 515,345"):
        fetch_year_prediction(tmp_path / "raw", mirror=mirror, progress=False)
    assert not (tmp_path / "raw" / YEAR_PREDICTION.name).exists()  # nothing half-written
    monkeypatch.setattr(year_prediction, "YEAR_ROWS", 3)  # the check counts the official rows
    path = fetch_year_prediction(tmp_path / "raw", mirror=mirror, progress=False)
    assert load_year_prediction(path, expected_rows=3)[1].tolist() == [2001, 1977, 1922]
    with pytest.raises(DataUnavailableError, match="not found in the data mirror"):
        fetch_year_prediction(tmp_path / "other", mirror=tmp_path / "empty", progress=False)


def test_the_pipeline_prepares_it_as_a_data_set(tmp_path):
    from fedclust.data.prepared import prepare_year_prediction
    from fedclust.pipeline.data import DATASETS, fetch_outputs, raw_files

    assert DATASETS["year_prediction"].fetch == "fetch_year_prediction"
    config = {"data_mirror": None, "datasets": {"year_prediction": {"max_samples": None}}}
    assert raw_files("year_prediction", config) == fetch_outputs("fetch_year_prediction",
                                                                 config) == [
        "data/year_prediction/raw/YearPredictionMSD.txt.zip"]
    path = tmp_path / "YearPredictionMSD.txt.zip"
    path.write_bytes(zipped({"YearPredictionMSD.txt": year_text(years=(2001, 1977, 1922) * 40)}))
    data = prepare_year_prediction(path, max_samples=100, seed=3, expected_rows=None)
    assert data.X.shape == (100, 90) and set(data.y) == {2001, 1977, 1922}
    assert "(a seeded subset" in data.description and "sha256" in data.description
    again = prepare_year_prediction(path, max_samples=100, seed=3, expected_rows=None)
    np.testing.assert_array_equal(data.X, again.X)
    # the pipeline's preparation wants the official file: a small one is named, not used
    with pytest.raises(ValueError, match="the UCI file has 515,345"):
        prepare_year_prediction(path)
