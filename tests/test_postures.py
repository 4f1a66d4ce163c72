"""UCI Hand Postures: the official archive (no published checksum, verified by content)."""

import hashlib
import io
import zipfile

import numpy as np
import pytest

from fedclust.data.download import DataUnavailableError
from fedclust.data.postures import (
    POSTURES_UCI,
    fetch_postures_uci,
    load_postures,
    postures_csv_from_archive,
    postures_features,
)
from fedclust.data.prepared import prepare_postures

HEADER = "Class,User," + ",".join(f"{a}{i}" for i in range(12) for a in "XYZ")


def postures_csv(classes=(1, 2, 5)) -> bytes:
    # like UCI's file: a placeholder row of zeros, then rows with trailing markers missing
    rows = [HEADER, ",".join(["0"] * 38)]
    for i, c in enumerate(classes):
        rows.append(f"{c},{i}," + ",".join([f"{c + 0.5 * j}" for j in range(9)] + ["?"] * 27))
    return ("\n".join(rows) + "\n").encode()


def zip_bytes(members: dict) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def mirror_with(tmp_path, archive: bytes):
    mirror = tmp_path / "mirror"
    (mirror / "postures").mkdir(parents=True)
    (mirror / POSTURES_UCI.mirror_path).write_bytes(archive)
    return mirror


def test_the_csv_is_found_directly_or_in_a_nested_zip(tmp_path):
    csv = postures_csv()
    flat = tmp_path / "flat.zip"
    flat.write_bytes(zip_bytes({"Postures.csv": csv, "readme.txt": b"x"}))
    nested = tmp_path / "nested.zip"
    nested.write_bytes(zip_bytes({"Postures.zip": zip_bytes({"data/Postures.csv": csv})}))
    assert postures_csv_from_archive(flat) == csv
    assert postures_csv_from_archive(nested) == csv


def test_archive_errors_name_the_archive(tmp_path):
    empty = tmp_path / "empty.zip"
    empty.write_bytes(zip_bytes({"readme.txt": b"x"}))
    with pytest.raises(ValueError, match=r"empty\.zip: expected exactly one Postures\.csv.*none"):
        postures_csv_from_archive(empty)
    twice = tmp_path / "twice.zip"
    twice.write_bytes(zip_bytes({"a/Postures.csv": b"1", "b/Postures.csv": b"2"}))
    with pytest.raises(ValueError, match=r"twice\.zip: .*a/Postures\.csv, .*b/Postures\.csv"):
        postures_csv_from_archive(twice)
    junk = tmp_path / "junk.zip"
    junk.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"junk\.zip: not a readable zip archive"):
        postures_csv_from_archive(junk)


def test_fetch_from_a_mirror_extracts_a_verified_csv(tmp_path):
    mirror = mirror_with(tmp_path, zip_bytes({"Postures.csv": postures_csv()}))
    path = fetch_postures_uci(tmp_path / "raw", mirror=mirror, progress=False)
    assert path.name == "Postures.csv"
    data = load_postures(path)
    assert data.posture.tolist() == [1, 2, 5]  # the placeholder row is dropped
    prepared = prepare_postures(path)
    assert prepared.X.shape == (3, 9) and prepared.devices.tolist() == [0, 1, 2]
    # the description names the exact bytes used, since UCI publishes no checksum
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    assert f"(Postures.csv, sha256 {digest})" in prepared.description
    assert sorted(p.name for p in (tmp_path / "raw").iterdir()) == [
        "Postures.csv", "motion+capture+hand+postures.zip"]


@pytest.mark.parametrize("csv, message", [
    (postures_csv(classes=(1, 7)), r"posture classes \[7\] outside \[1, 2, 3, 4, 5\]"),
    (b"a,b\n1,2\n", r"header is not the UCI Postures layout"),
])
def test_an_archive_that_is_not_uci_postures_is_refused(tmp_path, csv, message):
    mirror = mirror_with(tmp_path, zip_bytes({"Postures.csv": csv}))
    with pytest.raises(ValueError, match=r"motion\+capture\+hand\+postures\.zip \(from mirror "
                                         r".*\): .*" + message):
        fetch_postures_uci(tmp_path / "raw", mirror=mirror, progress=False)
    assert list((tmp_path / "raw").iterdir()) == []  # nothing half-written


def test_missing_from_the_mirror_names_the_path(tmp_path):
    with pytest.raises(DataUnavailableError, match=r"postures/motion\+capture\+hand\+postures"):
        fetch_postures_uci(tmp_path / "raw", mirror=tmp_path)


def test_postures_loader(tmp_path):
    header = "Class,User," + ",".join(f"{a}{i}" for i in range(12) for a in "XYZ")
    zeros = ",".join(["0"] * 38)
    rows = ["1,0," + ",".join(["1.0"] * 9 + ["?"] * 27),
            "2,1," + ",".join(["3.0"] * 12 + ["?"] * 24)]
    (tmp_path / "p.csv").write_text("\n".join([header, zeros, *rows]) + "\n")
    data = load_postures(tmp_path / "p.csv")
    assert data.posture.tolist() == [1, 2] and data.user.tolist() == [0, 1]  # zeros row dropped
    X, kept = postures_features(data, max_missing=0.5)
    assert kept == [f"{a}{i}" for i in range(4) for a in "XYZ"] and X.shape == (2, 12)
    assert X[0, -1] == 3.0  # X3..Z3 missing in row 0: imputed with the column mean
    (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
    with pytest.raises(ValueError, match="bad.csv: header is not the UCI Postures layout"):
        load_postures(tmp_path / "bad.csv")
    (tmp_path / "txt.csv").write_text("\n".join([header, rows[0].replace("1.0", "x", 1)]))
    with pytest.raises(ValueError, match="txt.csv: column X0 holds non-numeric value 'x'"):
        load_postures(tmp_path / "txt.csv")


def test_postures_subset_of_the_mirror(mirror):
    data = load_postures(mirror / "postures" / "Postures.subset_classes1-3_users0-2.csv")
    assert len(data.posture) == 11022
    assert np.bincount(data.posture).tolist() == [0, 4377, 3105, 3540]
    X, kept = postures_features(data)
    assert X.shape == (11022, 15) and not np.isnan(X).any()
