import collections
import hashlib
import zipfile

import numpy as np
import pytest

from fedclust.data import ChecksumError
from fedclust.data.shakespeare import (
    ALL_LETTERS,
    NUM_LETTERS,
    SHAKESPEARE_RAW,
    ShakespeareUsers,
    build_shakespeare_dataset,
    cache_shakespeare,
    char_count_features,
    extract_etext,
    fetch_shakespeare,
    leaf_user_name,
    leaf_users,
    letter_indices,
    load_shakespeare_cache,
    load_shakespeare_users,
    parse_plays,
    sample_users,
    sample_windows,
)

LICENCE = "<<THIS ELECTRONIC VERSION OF THE COMPLETE WORKS OF WILLIAM SHAKESPEARE IS COPYRIGHT>>"
LONG = "and so the speech runs on, well past the eighty characters of one LEAF window;"

# The Gutenberg layout LEAF's parser expects: a first line (dropped), the Sonnets (first
# "by William Shakespeare"), then the plays, each titled two lines above its own author line.
PLAYS = "\n".join([
    "The Complete Works of William Shakespeare (a synthetic test text)",
    "",
    "THE SONNETS",
    "",
    "by William Shakespeare",
    "",
    "  1",
    "  From fairest creatures we desire increase,",
    "",
    "1600",
    "",
    "A TEST PLAY",
    "",
    "by William Shakespeare",
    "",
    "Dramatis Personae",
    "  ALPHA, a speaker",
    "",
    "  ALPHA. Hello there,  my friend;",
    f"    {LONG}",
    "  BETA. Well, thank you.",
    "",
    "    A continuation after a blank line still belongs to BETA.",
    "                 Enter GAMMA",
    "  Beta. Mixed case is the same role #1.",
    "  ALPHA. Good.",
    "  GAMMA. Only one line.",
    "",
    "THE COMEDY OF ERRORS",
    "",
    "by William Shakespeare",
    "",
    "ACT I. SCENE 1",
    "AEGEON. Proceed, Solinus, to procure my fall,",
    "  And by the doom of death end woes and all.",
    "",
    LICENCE,
    "  Not spoken: the licence ended the speech.",
    "DUKE. Merchant of Syracuse, plead no more;",
    f"  {LONG}",
    "  Proceed no further.",
    "ACT II. SCENE 1",
    "  Not spoken either.",
    "AEGEON. Yet this my comfort.",
    "",
    LICENCE,
    "",
    "A MONOLOGUE",
    "",
    "by William Shakespeare",
    "",
    "  SOLO. One role only,",
    "  SOLO. so this play is dropped,",
    "  SOLO. as LEAF drops it.",
    "",
])

ALPHA_TEXT = f"Hello there, my friend; {LONG} Good. "
BETA_TEXT = ("Well, thank you. A continuation after a blank line still belongs to BETA. "
             "Enter GAMMA Mixed case is the same role #1. ")
AEGEON_TEXT = ("Proceed, Solinus, to procure my fall, And by the doom of death end woes and all. "
               "Yet this my comfort. ")
DUKE_TEXT = f"Merchant of Syracuse, plead no more; {LONG} Proceed no further. "


@pytest.fixture
def raw_file(tmp_path):
    path = tmp_path / "raw_data.txt"
    path.write_text(PLAYS)
    return path


def leaf_index(c):
    i = ALL_LETTERS.find(c)
    return NUM_LETTERS - 1 if i < 0 else i


def test_parse_plays_finds_roles_and_lines_as_leaf_does():
    roles = {(r.play, r.character): r.lines for r in parse_plays(PLAYS)}
    # the Sonnets and the one-role play are dropped; roles keep their order of appearance
    assert list(roles) == [("A TEST PLAY", "ALPHA"), ("A TEST PLAY", "BETA"),
                           ("A TEST PLAY", "GAMMA"), ("THE COMEDY OF ERRORS", "AEGEON"),
                           ("THE COMEDY OF ERRORS", "DUKE")]
    assert roles["A TEST PLAY", "ALPHA"] == ("Hello there,  my friend;", LONG, "Good.")
    # a blank line does not end a speech, an indented stage direction continues it, and
    # names are upper-cased
    assert roles["A TEST PLAY", "BETA"] == (
        "Well, thank you.", "A continuation after a blank line still belongs to BETA.",
        " " * 13 + "Enter GAMMA", "Mixed case is the same role #1.")
    # The Comedy of Errors: unindented speeches, every line continues (blank ones too),
    # "ACT ..." and the licence notice end a speech
    assert roles["THE COMEDY OF ERRORS", "AEGEON"] == (
        "Proceed, Solinus, to procure my fall,", "  And by the doom of death end woes and all.",
        "", "Yet this my comfort.", "")
    assert roles["THE COMEDY OF ERRORS", "DUKE"] == ("Merchant of Syracuse, plead no more;",
                                                     f"  {LONG}", "  Proceed no further.")


def test_plays_end_at_leafs_last_line():
    filler = "\n" * 124_200
    text = PLAYS + filler + "LATE PLAY\n\nby William Shakespeare\n  A. x\n    y\n  B. z\n"
    assert {r.play for r in parse_plays(text)} == {"A TEST PLAY", "THE COMEDY OF ERRORS"}


def test_leaf_user_names_and_texts():
    assert leaf_user_name("TWELFTH NIGHT; OR, WHAT YOU WILL", "SIR TOBY") == \
        "TWELFTH_NIGHT__OR__WHAT_YOU_WILL_SIR_TOBY"
    users = leaf_users(PLAYS)
    # GAMMA has one line (LEAF skips roles with <= 2 lines)
    assert users.names.tolist() == ["A_TEST_PLAY_ALPHA", "A_TEST_PLAY_BETA",
                                    "THE_COMEDY_OF_ERRORS_AEGEON", "THE_COMEDY_OF_ERRORS_DUKE"]
    assert users.plays.tolist() == ["A TEST PLAY"] * 2 + ["THE COMEDY OF ERRORS"] * 2
    assert users.texts == (ALPHA_TEXT, BETA_TEXT, AEGEON_TEXT, DUKE_TEXT)
    np.testing.assert_array_equal(users.num_samples, [len(t) - 80 for t in users.texts])
    assert users.total_samples == sum(len(t) - 80 for t in users.texts)
    # a user needs one full window plus its target (LEAF keeps users with len(dataX) > 0)
    assert len(leaf_users(PLAYS, seq_len=10)) == 4
    assert leaf_users(PLAYS, seq_len=len(ALPHA_TEXT) - 1).names[0] == "A_TEST_PLAY_ALPHA"
    assert "A_TEST_PLAY_ALPHA" not in leaf_users(PLAYS, seq_len=len(ALPHA_TEXT)).names


def test_examples_are_every_window_and_next_character():
    users = leaf_users(PLAYS)
    u = users.user_index("A_TEST_PLAY_ALPHA")
    x, y = users.examples(u)
    assert len(x) == len(ALPHA_TEXT) - 80
    assert x.tolist() == [ALPHA_TEXT[i:i + 80] for i in range(len(x))]
    assert y.tolist() == list(ALPHA_TEXT[80:])
    X, Y = users.letters(u, [0, 5])
    assert X.shape == (2, 80) and X.dtype == np.uint8
    assert X[1].tolist() == [leaf_index(c) for c in ALPHA_TEXT[5:85]]
    assert Y.tolist() == [leaf_index(ALPHA_TEXT[80]), leaf_index(ALPHA_TEXT[85])]
    with pytest.raises(ValueError, match=r"index must lie in \[0, \d+\) for user 0"):
        users.examples(u, [len(x)])
    with pytest.raises(ValueError, match="user must be <= 3"):
        users.features(4)
    with pytest.raises(KeyError, match="no Shakespeare user 'NOBODY'"):
        users.user_index("NOBODY")


def test_letters_map_out_of_vocabulary_as_leaf():
    # word_to_indices gives -1; letter_to_vec's one-hot of -1 is the last symbol '}'
    assert letter_indices("\n a}#").tolist() == [0, 1, 53, 79, -1]
    users = leaf_users(PLAYS)
    beta = users.user_index("A_TEST_PLAY_BETA")
    hash_at = BETA_TEXT.index("#")
    assert users.targets(beta, [hash_at - 80]).tolist() == [NUM_LETTERS - 1]


@pytest.mark.parametrize("hellinger", [True, False])
def test_features_equal_brute_force_counts(hellinger):
    users = leaf_users(PLAYS)
    for u, text in enumerate(users.texts):
        index = np.array([0, 3, len(text) - 81, 17])
        F = users.features(u, index, hellinger=hellinger)
        assert F.shape == (4, NUM_LETTERS) and F.dtype == np.float32
        for row, i in zip(F, index, strict=True):
            expected = np.zeros(NUM_LETTERS)
            for c, n in collections.Counter(text[i:i + 80]).items():
                expected[leaf_index(c)] += n / 80
            np.testing.assert_allclose(row, np.sqrt(expected) if hellinger else expected,
                                       rtol=1e-6, atol=1e-7)


def test_char_count_features_blocks_and_errors(rng):
    codes = rng.integers(0, NUM_LETTERS, 500)
    starts = rng.permutation(500 - 80 + 1)
    small_blocks = char_count_features(codes, starts, seq_len=80, hellinger=False, block=7)
    windows = np.lib.stride_tricks.sliding_window_view(codes, 80)[starts]
    brute = np.stack([np.bincount(w, minlength=NUM_LETTERS) for w in windows]) / 80
    np.testing.assert_allclose(small_blocks, brute, rtol=1e-6)
    np.testing.assert_array_equal(char_count_features(codes, starts, hellinger=False),
                                  small_blocks)
    with pytest.raises(ValueError, match=r"starts must lie in \[0, 420\]"):
        char_count_features(codes, [421])
    with pytest.raises(ValueError, match=r"codes must lie in \[0, 80\)"):
        char_count_features(np.array([0, 80]), [0], seq_len=1)


def test_sampling_is_seeded_and_filtered():
    users = ShakespeareUsers.from_texts([f"U{i}" for i in range(30)], ["P"] * 30,
                                        ["x" * (81 + 10 * i) for i in range(30)])
    a = sample_users(users, 10, min_samples=50, random_state=3)
    np.testing.assert_array_equal(a, sample_users(users, 10, min_samples=50, random_state=3))
    assert not np.array_equal(a, sample_users(users, 10, min_samples=50, random_state=4))
    assert np.all(np.diff(a) > 0) and np.all(users.num_samples[a] >= 50)
    with pytest.raises(ValueError, match="n_users=30 but only 25 of 30 users"):
        sample_users(users, 30, min_samples=50)
    w = sample_windows(users, a, max_samples_per_user=40, random_state=1)
    again = sample_windows(users, a, max_samples_per_user=40, random_state=1)
    assert all(np.array_equal(p, q) for p, q in zip(w, again, strict=True))
    for u, idx in zip(a, w, strict=True):
        assert len(idx) == min(40, users.num_samples[u]) and len(np.unique(idx)) == len(idx)
        assert np.all(np.diff(idx) > 0) and idx.max() < users.num_samples[u]
    full = sample_windows(users, a)
    assert [len(i) for i in full] == users.num_samples[a].tolist()


def test_build_dataset_and_cache_round_trip(raw_file, tmp_path):
    data = build_shakespeare_dataset(raw_file, n_users=3, max_samples_per_user=20,
                                     min_samples=1, random_state=7)
    assert data.X.shape == (60, NUM_LETTERS) and data.X.dtype == np.float32
    np.testing.assert_allclose((data.X ** 2).sum(axis=1), 1.0, rtol=1e-5)
    assert data.devices.tolist() == sorted(data.devices.tolist())
    assert np.bincount(data.devices).tolist() == [20, 20, 20]
    assert data.source_sha256 == hashlib.sha256(raw_file.read_bytes()).hexdigest()
    users = load_shakespeare_users(raw_file)
    first = users.user_index(data.user_names[0])
    rows = data.devices == 0
    np.testing.assert_array_equal(data.X[rows], users.features(first, data.windows[rows]))
    np.testing.assert_array_equal(data.y[rows], users.targets(first, data.windows[rows]))
    again = build_shakespeare_dataset(raw_file, n_users=3, max_samples_per_user=20,
                                      min_samples=1, random_state=7)
    np.testing.assert_array_equal(again.X, data.X)
    # the window cap does not change which users are drawn
    uncapped = build_shakespeare_dataset(raw_file, n_users=3, max_samples_per_user=None,
                                         min_samples=1, random_state=7)
    assert uncapped.user_names.tolist() == data.user_names.tolist()

    path = cache_shakespeare(data, tmp_path / "cache" / "shakespeare.h5")
    back = load_shakespeare_cache(path, expected={"random_state": 7,
                                                  "source_sha256": data.source_sha256})
    for name in ("X", "y", "devices", "windows", "user_names", "plays"):
        np.testing.assert_array_equal(getattr(back, name), getattr(data, name))
    assert back.params == data.params and back.params["max_samples_per_user"] == 20
    with pytest.raises(ValueError, match=r"shakespeare\.h5: stale cache, random_state=7"):
        load_shakespeare_cache(path, expected={"random_state": 8})
    with pytest.raises(KeyError, match="unknown cache parameter 'seed'"):
        load_shakespeare_cache(path, expected={"seed": 7})


def test_errors_name_the_file(tmp_path):
    with pytest.raises(FileNotFoundError, match=r"Shakespeare raw text missing: .*nothing\.txt"):
        load_shakespeare_users(tmp_path / "nothing.txt")
    (tmp_path / "empty.txt").write_text("\n  \n")
    with pytest.raises(ValueError, match=r"empty\.txt: the file is empty"):
        load_shakespeare_users(tmp_path / "empty.txt")
    (tmp_path / "other.txt").write_text("Moby Dick\n\nby Herman Melville\n\nCall me Ishmael.\n")
    with pytest.raises(ValueError, match=r"other\.txt: not the Complete Works .* 0 line\(s\)"):
        load_shakespeare_users(tmp_path / "other.txt")
    (tmp_path / "binary.txt").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(ValueError, match=r"binary\.txt: not a text file"):
        load_shakespeare_users(tmp_path / "binary.txt")
    (tmp_path / "noplay.txt").write_text("x\nSONNETS\n\nby William Shakespeare\n\n  1\n\n\n"
                                         "PLAY\n\nby William Shakespeare\n\n  A. one line\n")
    with pytest.raises(ValueError, match=r"noplay\.txt: no play with two or more speaking roles"):
        load_shakespeare_users(tmp_path / "noplay.txt")
    with pytest.raises(ValueError, match=r"raw_data\.txt: no play title 2 to 7 lines above"):
        leaf_users("x\nby William Shakespeare\n\n\n\n\n\n\n\nby William Shakespeare\n",
                   source="raw_data.txt")


def test_gutenberg_archive_is_unzipped_and_verified(tmp_path):
    text = b"line one\r\nline two\r\n"
    archive = tmp_path / "1994-01-100.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("100.txt", text)
    good = hashlib.sha256(b"line one\nline two\n").hexdigest()
    dest = extract_etext(archive, tmp_path / "out" / "raw_data.txt", sha256=good)
    assert dest.read_bytes() == b"line one\nline two\n"
    with pytest.raises(ChecksumError, match=r"sha256 mismatch for 100\.txt of .*1994-01-100"):
        extract_etext(archive, tmp_path / "bad" / "raw_data.txt")
    assert not (tmp_path / "bad" / "raw_data.txt").exists()
    (tmp_path / "junk.zip").write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"junk\.zip: not a zip archive"):
        extract_etext(tmp_path / "junk.zip", tmp_path / "x.txt")


def test_real_mirror_reproduces_leaf_counts(mirror, tmp_path):
    manifest = dict(line.split()[::-1] for line in (mirror / "SHA256SUMS").read_text().splitlines()
                    if line.strip())
    assert manifest[f"./{SHAKESPEARE_RAW.mirror_path}"] == SHAKESPEARE_RAW.sha256
    raw = fetch_shakespeare(tmp_path, mirror=mirror, progress=False)
    users = load_shakespeare_users(raw)
    # LEAF's preprocessing of this file: 1,130 users and 4,226,206 samples
    assert len(users) == 1130
    assert users.total_samples == 4_226_206
    assert len(set(users.plays.tolist())) == 36
    hamlet = users.user_index("THE_TRAGEDY_OF_HAMLET__PRINCE_OF_DENMARK_HAM")
    assert users.num_samples[hamlet] == 66_903
    x, y = users.examples(hamlet, [0])
    assert x[0] == users.texts[hamlet][:80] and y[0] == users.texts[hamlet][80]

    data = build_shakespeare_dataset(raw, n_users=109, max_samples_per_user=500, random_state=0)
    assert len(data.user_names) == 109 and data.X.shape[1] == NUM_LETTERS
    assert data.X.shape[0] == np.minimum(users.num_samples[[users.user_index(n) for n in
                                                            data.user_names]], 500).sum()
