"""Shakespeare (LEAF): one user per speaking role, next-character examples, k-means features.

Parses the 1994 Gutenberg text as LEAF does (one user per speaking role, every 80-character
window with its next character) and turns each window into the square root of its letter
distribution. The source and its checksum, LEAF's preprocessing step by step, the counts it
gives and why these features: docs/data.md, *Shakespeare*.
"""

from __future__ import annotations

import hashlib
import json
import numbers
import re
import tempfile
import urllib.error
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from .._validation import check_int, check_random_state
from ..io import atomic_path
from .cache import read_h5, write_h5
from .download import ChecksumError, DataUnavailableError, RemoteFile, _download, fetch

__all__ = [
    "ALL_LETTERS",
    "NUM_LETTERS",
    "SEQ_LEN",
    "SHAKESPEARE_RAW",
    "GUTENBERG_ARCHIVE_URLS",
    "LEAF_RAW_DATA_URL",
    "Role",
    "ShakespeareUsers",
    "FederatedText",
    "fetch_shakespeare",
    "extract_etext",
    "read_shakespeare",
    "parse_plays",
    "leaf_user_name",
    "leaf_users",
    "load_shakespeare_users",
    "letter_indices",
    "char_count_features",
    "sample_users",
    "sample_windows",
    "build_shakespeare_dataset",
    "cache_shakespeare",
    "load_shakespeare_cache",
]

# -- source ---------------------------------------------------------------------------------

#: LEAF's ``get_data.sh`` (original version): the 1994 edition, zipped, ``100.txt`` inside.
LEAF_RAW_DATA_URL = "http://www.gutenberg.org/files/100/old/1994-01-100.zip"
#: Where Project Gutenberg keeps that archive now (it moved one folder down), then LEAF's URL.
GUTENBERG_ARCHIVE_URLS = ("https://www.gutenberg.org/files/100/old/old/1994-01-100.zip",
                          LEAF_RAW_DATA_URL)
_ARCHIVE_MEMBER = "100.txt"

#: ``raw_data.txt`` as LEAF reads it: etext #100, January 1994 (5,458,199 bytes, 124,456 lines).
#: The URL is MIT OpenCourseWare's long-standing verbatim copy (``t8.shakespeare.txt``); Gutenberg
#: itself serves this edition only zipped, see :func:`fetch_shakespeare`.
SHAKESPEARE_RAW = RemoteFile(
    name="raw_data.txt",
    urls=("https://ocw.mit.edu/ans7870/6/6.006/s08/lecturenotes/files/t8.shakespeare.txt",),
    mirror_path="shakespeare/raw_data.txt",
    sha256="c5601d266987ac885ca96522b1b4e439feb7eca39f0fe1111f7342b63b6468f3",
)

# -- LEAF constants -------------------------------------------------------------------------

#: LEAF's vocabulary (``models/utils/language_utils.py``); 80 symbols.
ALL_LETTERS = ("\n !\"&'(),-.0123456789:;>?ABCDEFGHIJKLMNOPQRSTUVWXYZ[]abcdefghijklmnopqrstuvwxyz}")
NUM_LETTERS = len(ALL_LETTERS)
#: LEAF's window length.
SEQ_LEN = 80

_AUTHOR_LINE = "by William Shakespeare"
_END_OF_PLAYS = 124195          # LEAF: "This marks the end of the plays in the file."
_COMEDY_OF_ERRORS = "THE COMEDY OF ERRORS"
_SPEECH = re.compile(r"^  ([a-zA-Z][a-zA-Z ]*)\. (.*)")
_CONTINUATION = re.compile(r"^    (.*)")
_COE_SPEECH = re.compile(r"^([a-zA-Z][a-zA-Z ]*)\. (.*)")
_COE_CONTINUATION = re.compile(r"^(.*)")
_MAX_SKIPPED_LINES = 2          # LEAF skips roles with this many lines or fewer
_SPACE_RUN = re.compile(r" {2,}")
_NON_WORD = re.compile(r"\W+")

_OOV = NUM_LETTERS - 1          # letter_to_vec's one-hot of index -1
_ASCII_INDEX = np.full(128, -1, dtype=np.int64)
_ASCII_INDEX[[ord(c) for c in ALL_LETTERS]] = np.arange(NUM_LETTERS)


# -- fetching -------------------------------------------------------------------------------

def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def extract_etext(archive, dest, *, sha256: str = SHAKESPEARE_RAW.sha256,
                  label: str | None = None) -> Path:
    """Extract ``100.txt`` from Gutenberg's ``1994-01-100.zip`` to ``dest``, verified.

    Line endings are normalised to ``\\n`` before the check: LEAF reads the file in text mode,
    where they do not matter. ``dest`` appears only if the sha256 matches.

    Raises
    ------
    ValueError
        ``archive`` is not a zip file or lacks ``100.txt``.
    ChecksumError
        The extracted text is not the expected edition.
    """
    archive, dest = Path(archive), Path(dest)
    label = label or str(archive)
    try:
        with zipfile.ZipFile(archive) as zf:
            names = zf.namelist()
            if _ARCHIVE_MEMBER not in names:
                raise ValueError(f"{label}: no {_ARCHIVE_MEMBER} in the archive (it holds {names})")
            raw = zf.read(_ARCHIVE_MEMBER)
    except zipfile.BadZipFile as exc:
        raise ValueError(f"{label}: not a zip archive ({exc})") from exc
    raw = raw.replace(b"\r\n", b"\n")
    got = _sha256(raw)
    if got != sha256.lower():
        raise ChecksumError(f"sha256 mismatch for {_ARCHIVE_MEMBER} of {label}: expected {sha256}, "
                            f"got {got}; not the 1994 edition LEAF's statistics refer to")
    with atomic_path(dest) as tmp:
        tmp.write_bytes(raw)
    return dest


def fetch_shakespeare(root, *, mirror=None, progress: bool = True) -> Path:
    """Put a verified ``raw_data.txt`` into ``root`` and return its path.

    With ``mirror``, the file is copied from ``mirror/shakespeare/raw_data.txt``. Otherwise it is
    downloaded from :data:`SHAKESPEARE_RAW`'s URL and, if that fails, extracted from Project
    Gutenberg's archive (:data:`GUTENBERG_ARCHIVE_URLS`); either way it must match the sha256.

    Raises
    ------
    DataUnavailableError
        Neither the mirror nor any URL provided the file.
    ChecksumError
        A file was obtained but is not the expected edition.
    """
    root = Path(root)
    try:
        return fetch(SHAKESPEARE_RAW, root, mirror=mirror, progress=progress)
    except DataUnavailableError as direct:
        if mirror is not None:
            raise
        errors = [str(direct)]
    root.mkdir(parents=True, exist_ok=True)
    for url in GUTENBERG_ARCHIVE_URLS:
        with tempfile.TemporaryDirectory(dir=root, prefix=".gutenberg-") as tmp:
            archive = Path(tmp) / url.rsplit("/", 1)[-1]
            try:
                _download(url, archive, progress)
            except (urllib.error.URLError, OSError, TimeoutError) as exc:
                errors.append(f"{url}: {exc}")
                continue
            return extract_etext(archive, root / SHAKESPEARE_RAW.name, label=url)
    raise DataUnavailableError("; ".join(errors))


def read_shakespeare(path) -> str:
    """Read the raw text (universal newlines, as LEAF's text-mode ``open`` does).

    Raises ``FileNotFoundError`` or ``ValueError`` naming ``path`` if it is missing, empty or not
    text.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"Shakespeare raw text missing: {path} (fetch it with "
                                f"fetch_shakespeare, or copy {SHAKESPEARE_RAW.mirror_path} from "
                                f"the data mirror)")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"{path}: not a text file ({exc.reason} at byte {exc.start})") from exc
    if not text.strip():
        raise ValueError(f"{path}: the file is empty; expected the Complete Works of "
                         f"Shakespeare (Gutenberg etext #100)")
    return text


# -- step 1: plays and roles ----------------------------------------------------------------

@dataclass(frozen=True)
class Role:
    """One speaking role of one play: LEAF's ``(play, character, [lines])``."""

    play: str
    character: str
    lines: tuple[str, ...]


def _play_title(lines: list[str], at: int, start: int, source: str) -> str:
    """LEAF's title rule: first non-blank line 2..6 above ``at``, else the line 7 above."""
    for back in (2, 3, 4, 5, 6, 7):
        j = at - back
        # LEAF indexes a list that starts at `start`; a negative index would wrap around to
        # the end of the file there, which we treat as a blank line instead.
        candidate = lines[j].strip() if j >= start else ""
        if candidate or back == 7:
            break
    if not candidate:
        raise ValueError(f"{source}: no play title 2 to 7 lines above line {at + 2} "
                         f"({_AUTHOR_LINE!r})")
    return candidate


def parse_plays(text: str, *, source: str = "text") -> list[Role]:
    """Split the Complete Works into speaking roles as LEAF's ``_split_into_plays`` does.

    Parameters
    ----------
    text : str
        The whole raw file.
    source : str
        Name used in error messages (the file path).

    Returns
    -------
    list of Role
        Plays in file order, roles in order of first speech; plays with fewer than two roles
        are left out, roles with few lines are kept (:func:`leaf_users` filters them).
    """
    # LEAF reads the file in text mode: universal newlines
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.splitlines(keepends=True)[1:]
    author_at = [j for j, line in enumerate(lines) if _AUTHOR_LINE in line]
    if len(author_at) < 2:
        raise ValueError(f"{source}: not the Complete Works of Shakespeare in the Gutenberg "
                         f"etext #100 layout LEAF expects: {len(author_at)} line(s) with "
                         f"{_AUTHOR_LINE!r}, need at least 2 (the Sonnets, then the plays)")
    start = max(author_at[1] - 5, 0)
    plays: list[tuple[str, dict[str, list[str]]]] = []
    roles: dict[str, list[str]] | None = None
    current: str | None = None
    comedy_of_errors = False
    for j in range(start, min(len(lines), _END_OF_PLAYS + 1)):
        line = lines[j]
        if _AUTHOR_LINE in line:                       # a new play
            title = _play_title(lines, j, start, source)
            roles, current = {}, None
            comedy_of_errors = title == _COMEDY_OF_ERRORS
            plays.append((title, roles))
            continue
        if roles is None:
            continue
        speech = (_COE_SPEECH if comedy_of_errors else _SPEECH).match(line)
        if speech:
            character = speech.group(1).upper()
            if comedy_of_errors and character.startswith("ACT "):   # "ACT II. SCENE 1."
                current = None
            else:
                roles.setdefault(character, []).append(speech.group(2))
                current = character
            continue
        if current is not None:
            cont = (_COE_CONTINUATION if comedy_of_errors else _CONTINUATION).match(line)
            if cont:
                if comedy_of_errors and cont.group(1).startswith("<"):   # licence notice
                    current = None
                else:
                    roles[current].append(cont.group(1))
    return [Role(play, character, tuple(said))
            for play, play_roles in plays if len(play_roles) > 1
            for character, said in play_roles.items()]


def leaf_user_name(play: str, character: str) -> str:
    """LEAF's user id of a role (``play_and_character``).

    >>> leaf_user_name("THE TRAGEDY OF HAMLET, PRINCE OF DENMARK", "HAM")
    'THE_TRAGEDY_OF_HAMLET__PRINCE_OF_DENMARK_HAM'
    """
    return _NON_WORD.sub("_", f"{play}_{character}".replace(" ", "_"))


def _leaf_text(lines) -> str:
    """A user's text as ``__txt_to_data`` reads it back: lines joined, whitespace collapsed."""
    return _SPACE_RUN.sub(" ", "".join(f"{line}\n" for line in lines).replace("\n", " "))


# -- letters --------------------------------------------------------------------------------

def _code_points(text: str) -> np.ndarray:
    return np.frombuffer(text.encode("utf-32-le"), dtype="<u4")


def letter_indices(text: str) -> np.ndarray:
    """LEAF's ``word_to_indices``: position of each character in ``ALL_LETTERS``, -1 if absent.

    >>> letter_indices("Ay}#").tolist()
    [25, 77, 79, -1]
    """
    cp = _code_points(text)
    out = np.full(cp.shape, -1, dtype=np.int64)
    ascii_ = cp < 128
    out[ascii_] = _ASCII_INDEX[cp[ascii_]]
    return out


def _letter_codes(text: str) -> np.ndarray:
    """Letter indices with LEAF's ``letter_to_vec`` treatment of -1 (the last symbol), uint8."""
    idx = letter_indices(text)
    idx[idx < 0] = _OOV
    return idx.astype(np.uint8)


def char_count_features(codes, starts, *, seq_len: int = SEQ_LEN, hellinger: bool = True,
                        block: int = 1 << 16) -> np.ndarray:
    """Letter distribution of the windows ``codes[s:s + seq_len]``, one row per start ``s``.

    Counts come from a cumulative one-hot sum ``C`` over the text, ``C[s + seq_len] - C[s]``,
    built over blocks of ``block`` start positions at a time so that memory stays bounded.

    Parameters
    ----------
    codes : array-like of int, shape (T,)
        Letter indices in ``[0, NUM_LETTERS)``.
    starts : array-like of int, shape (m,)
        Window starts, each in ``[0, T - seq_len]``.
    seq_len : int
    hellinger : bool
        Return ``sqrt(counts / seq_len)`` (Hellinger embedding) instead of ``counts / seq_len``.
    block : int

    Returns
    -------
    ndarray of shape (m, NUM_LETTERS), float32
        Rows of ``counts / seq_len`` sum to 1 (squares of the rows, with ``hellinger``).
    """
    seq_len = check_int(seq_len, "seq_len", low=1)
    block = check_int(block, "block", low=1)
    codes = np.asarray(codes)
    starts = np.asarray(starts)
    if codes.ndim != 1 or not np.issubdtype(codes.dtype, np.integer):
        raise ValueError(f"codes must be a 1-D integer array; got shape {codes.shape}, "
                         f"dtype {codes.dtype}")
    if codes.size and (codes.min() < 0 or codes.max() >= NUM_LETTERS):
        raise ValueError(f"codes must lie in [0, {NUM_LETTERS}); got values in "
                         f"[{codes.min()}, {codes.max()}]")
    if starts.ndim != 1 or not (starts.size == 0 or np.issubdtype(starts.dtype, np.integer)):
        raise ValueError(f"starts must be a 1-D integer array; got shape {starts.shape}, "
                         f"dtype {starts.dtype}")
    starts = starts.astype(np.int64, copy=False)
    last = codes.size - seq_len
    if starts.size and (starts.min() < 0 or starts.max() > last):
        raise ValueError(f"starts must lie in [0, {last}] for a text of {codes.size} letters "
                         f"and seq_len={seq_len}; got [{starts.min()}, {starts.max()}]")
    out = np.empty((starts.size, NUM_LETTERS), dtype=np.float32)
    one_hot = np.eye(NUM_LETTERS, dtype=np.int32)
    blocks = starts // block
    order = np.argsort(blocks, kind="stable")
    ids, first = np.unique(blocks[order], return_index=True)
    bounds = np.append(first, starts.size)
    for b, lo_row, hi_row in zip(ids, bounds[:-1], bounds[1:], strict=True):
        rows = order[lo_row:hi_row]
        lo = int(b) * block
        hi = min(lo + block - 1 + seq_len, codes.size)
        cumulative = np.zeros((hi - lo + 1, NUM_LETTERS), dtype=np.int32)
        np.cumsum(one_hot[codes[lo:hi]], axis=0, out=cumulative[1:])
        local = starts[rows] - lo
        out[rows] = cumulative[local + seq_len] - cumulative[local]
    out /= np.float32(seq_len)
    if hellinger:
        np.sqrt(out, out=out)
    return out


# -- step 2-3: users and their examples -----------------------------------------------------

@dataclass(frozen=True, eq=False)
class ShakespeareUsers:
    """LEAF's Shakespeare users with their texts; examples are made on demand.

    User ``u`` has ``num_samples[u] = len(texts[u]) - seq_len`` examples; example ``i`` is the
    window ``texts[u][i:i + seq_len]`` with target ``texts[u][i + seq_len]``. Methods take a user
    position and optional example indices (all by default) and build only those.

    Attributes
    ----------
    names : ndarray of str, shape (n_users,)
        LEAF user ids, in order of first appearance in the file (LEAF's own order is that of
        ``os.listdir``).
    plays : ndarray of str, shape (n_users,)
        Play of each user (LEAF's ``hierarchies``).
    texts : tuple of str
        Each user's text after LEAF's whitespace handling.
    codes : ndarray of uint8
        All texts concatenated as letter indices (out-of-vocabulary characters as ``}``).
    offsets : ndarray of int64, shape (n_users + 1,)
        User ``u``'s letters are ``codes[offsets[u]:offsets[u + 1]]``.
    seq_len : int
    """

    names: np.ndarray
    plays: np.ndarray
    texts: tuple[str, ...]
    codes: np.ndarray
    offsets: np.ndarray
    seq_len: int = SEQ_LEN

    @classmethod
    def from_texts(cls, names, plays, texts, *, seq_len: int = SEQ_LEN) -> ShakespeareUsers:
        """Build from per-user texts, each longer than ``seq_len``."""
        seq_len = check_int(seq_len, "seq_len", low=1)
        texts = tuple(texts)
        lengths = np.array([len(t) for t in texts], dtype=np.int64)
        short = np.flatnonzero(lengths <= seq_len)
        if short.size:
            raise ValueError(f"texts[{short[0]}] has {lengths[short[0]]} characters; every user "
                             f"needs more than seq_len={seq_len}")
        names, plays = np.asarray(names, dtype=str), np.asarray(plays, dtype=str)
        if not (names.shape == plays.shape == (len(texts),)):
            raise ValueError(f"names, plays and texts must have one entry per user; got "
                             f"{names.shape}, {plays.shape} and {len(texts)}")
        offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        return cls(names=names, plays=plays, texts=texts, codes=_letter_codes("".join(texts)),
                   offsets=offsets, seq_len=seq_len)

    def __len__(self) -> int:
        return len(self.texts)

    @property
    def num_samples(self) -> np.ndarray:
        """Examples per user, int64 array of shape (n_users,)."""
        return np.diff(self.offsets) - self.seq_len

    @property
    def total_samples(self) -> int:
        return int(self.num_samples.sum())

    def user_index(self, name: str) -> int:
        """Position of the user called ``name``."""
        hits = np.flatnonzero(self.names == name)
        if hits.size == 0:
            raise KeyError(f"no Shakespeare user {name!r}")
        return int(hits[0])

    def _select(self, user, index) -> tuple[int, np.ndarray]:
        u = check_int(user, "user", low=0, high=len(self) - 1)
        n = int(self.num_samples[u])
        if index is None:
            return u, np.arange(n, dtype=np.int64)
        index = np.asarray(index)
        if index.ndim != 1 or not (index.size == 0 or np.issubdtype(index.dtype, np.integer)):
            raise ValueError(f"index must be a 1-D array of example indices; got shape "
                             f"{index.shape}, dtype {index.dtype}")
        if index.size and (index.min() < 0 or index.max() >= n):
            raise ValueError(f"index must lie in [0, {n}) for user {u} ({self.names[u]}); got "
                             f"[{index.min()}, {index.max()}]")
        return u, index.astype(np.int64, copy=False)

    def _codes_of(self, u: int) -> np.ndarray:
        return self.codes[self.offsets[u]:self.offsets[u + 1]]

    def examples(self, user, index=None) -> tuple[np.ndarray, np.ndarray]:
        """LEAF's raw examples of one user: windows ``x`` (str) and next characters ``y`` (str)."""
        u, starts = self._select(user, index)
        cp = _code_points(self.texts[u])
        x = np.ascontiguousarray(sliding_window_view(cp, self.seq_len)[starts])
        return x.view(f"<U{self.seq_len}")[:, 0], cp[starts + self.seq_len].view("<U1")

    def letters(self, user, index=None) -> tuple[np.ndarray, np.ndarray]:
        """Examples as letter indices: ``x`` uint8 (m, seq_len) and ``y`` int64 (m,)."""
        u, starts = self._select(user, index)
        codes = self._codes_of(u)
        x = sliding_window_view(codes, self.seq_len)[starts]
        return x, codes[starts + self.seq_len].astype(np.int64)

    def targets(self, user, index=None) -> np.ndarray:
        """Next-character letter index of the examples, int64 (m,)."""
        u, starts = self._select(user, index)
        return self._codes_of(u)[starts + self.seq_len].astype(np.int64)

    def features(self, user, index=None, *, hellinger: bool = True) -> np.ndarray:
        """Letter-distribution features of the examples, float32 (m, NUM_LETTERS)."""
        u, starts = self._select(user, index)
        return char_count_features(self._codes_of(u), starts, seq_len=self.seq_len,
                                   hellinger=hellinger)


def leaf_users(text: str, *, seq_len: int = SEQ_LEN, source: str = "text") -> ShakespeareUsers:
    """LEAF's users (one per play and speaking role) of the raw Complete Works ``text``."""
    seq_len = check_int(seq_len, "seq_len", low=1)
    roles = parse_plays(text, source=source)
    if not roles:
        raise ValueError(f"{source}: no play with two or more speaking roles found; not the "
                         f"Complete Works of Shakespeare (Gutenberg etext #100)?")
    play_of: dict[str, str] = {}
    lines_of: dict[str, list[str]] = {}
    for role in roles:
        name = leaf_user_name(role.play, role.character)
        play_of[name] = role.play
        if len(role.lines) > _MAX_SKIPPED_LINES:
            lines_of.setdefault(name, []).extend(role.lines)
    names, plays, texts = [], [], []
    for name, said in lines_of.items():
        user_text = _leaf_text(said)
        if len(user_text) > seq_len:                   # LEAF keeps users with len(dataX) > 0
            names.append(name)
            plays.append(play_of[name])
            texts.append(user_text)
    if not texts:
        raise ValueError(f"{source}: no speaking role has enough text for one example "
                         f"of seq_len={seq_len}")
    return ShakespeareUsers.from_texts(names, plays, texts, seq_len=seq_len)


def load_shakespeare_users(path, *, seq_len: int = SEQ_LEN) -> ShakespeareUsers:
    """:func:`leaf_users` of the raw file at ``path``; errors name the file."""
    return leaf_users(read_shakespeare(path), seq_len=seq_len, source=str(path))


# -- sampling -------------------------------------------------------------------------------

def sample_users(users: ShakespeareUsers, n_users: int = 109, *, min_samples: int = 100,
                 random_state=None) -> np.ndarray:
    """Draw ``n_users`` distinct users among those with at least ``min_samples`` examples.

    k-FED (Dennis et al., 2021) clusters 109 Shakespeare roles; it does not say how they were
    chosen. Here they are uniform without replacement among the users with ``min_samples`` or
    more examples; the default 100 is the ``-k 100`` minimum of LEAF's small and medium
    Shakespeare configurations (a choice, not in the paper).

    Returns
    -------
    ndarray of int64, shape (n_users,)
        Sorted user positions.
    """
    n_users = check_int(n_users, "n_users", low=1)
    min_samples = check_int(min_samples, "min_samples", low=1)
    rng = check_random_state(random_state)
    eligible = np.flatnonzero(users.num_samples >= min_samples)
    if n_users > eligible.size:
        raise ValueError(f"n_users={n_users} but only {eligible.size} of {len(users)} users have "
                         f"min_samples={min_samples} or more examples")
    return np.sort(rng.choice(eligible, size=n_users, replace=False)).astype(np.int64)


def sample_windows(users: ShakespeareUsers, user_ids, *, max_samples_per_user: int | None = None,
                   random_state=None) -> list[np.ndarray]:
    """Example indices of each user in ``user_ids``: all, or a uniform subset of at most
    ``max_samples_per_user`` (sorted), drawn user after user from one generator."""
    if max_samples_per_user is not None:
        max_samples_per_user = check_int(max_samples_per_user, "max_samples_per_user", low=1)
    rng = check_random_state(random_state)
    num_samples = users.num_samples
    chosen = []
    for u in np.asarray(user_ids, dtype=np.int64):
        n = int(num_samples[check_int(u, "user_ids", low=0, high=len(users) - 1)])
        if max_samples_per_user is None or n <= max_samples_per_user:
            chosen.append(np.arange(n, dtype=np.int64))
        else:
            chosen.append(np.sort(rng.choice(n, size=max_samples_per_user, replace=False)))
    return chosen


# -- data set and cache ---------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class FederatedText:
    """Windows of sampled Shakespeare users as k-means data, one device per user.

    Attributes
    ----------
    X : ndarray of shape (n, NUM_LETTERS), float32
        Letter-distribution features (docs/data.md, *Shakespeare*).
    y : ndarray of shape (n,), int64
        Next-character letter index of each window.
    devices : ndarray of shape (n,), int64
        Device (position in ``user_names``) of each row; rows are grouped by device.
    windows : ndarray of shape (n,), int64
        Start of each window in its user's text (``ShakespeareUsers.examples`` index).
    user_names, plays : ndarray of str, shape (n_devices,)
        LEAF user id and play of each device.
    source_sha256 : str
        sha256 of the raw text the data come from.
    params : dict
        The parameters of :func:`build_shakespeare_dataset`.
    """

    X: np.ndarray
    y: np.ndarray
    devices: np.ndarray
    windows: np.ndarray
    user_names: np.ndarray
    plays: np.ndarray
    source_sha256: str
    params: dict = field(default_factory=dict)


def _two_streams(random_state) -> tuple[np.random.Generator, np.random.Generator]:
    """Independent generators for the user draw and the window draw."""
    if isinstance(random_state, np.random.Generator):
        return random_state, random_state
    if random_state is not None:
        random_state = check_int(random_state, "random_state", low=0)
    users_seq, windows_seq = np.random.SeedSequence(random_state).spawn(2)
    return np.random.default_rng(users_seq), np.random.default_rng(windows_seq)


def build_shakespeare_dataset(raw_path, *, n_users: int = 109,
                              max_samples_per_user: int | None = 5000, min_samples: int = 100,
                              seq_len: int = SEQ_LEN, hellinger: bool = True,
                              random_state=0) -> FederatedText:
    """LEAF users of ``raw_path``, ``n_users`` of them sampled, their windows as features.

    Parameters
    ----------
    raw_path : path-like
        The raw text (``raw_data.txt``).
    n_users, min_samples : int
        See :func:`sample_users`.
    max_samples_per_user : int or None
        Keep at most this many windows per user (uniform, seeded); None keeps all.
    seq_len : int
        Window length (LEAF: 80).
    hellinger : bool
        Square-root features (see :func:`char_count_features`).
    random_state : int or None
        The user draw and the window draw use independent streams derived from it, so that
        changing ``max_samples_per_user`` does not change the users.
    """
    raw_path = Path(raw_path)
    users = load_shakespeare_users(raw_path, seq_len=seq_len)
    user_rng, window_rng = _two_streams(random_state)
    chosen = sample_users(users, n_users, min_samples=min_samples, random_state=user_rng)
    starts = sample_windows(users, chosen, max_samples_per_user=max_samples_per_user,
                            random_state=window_rng)
    X = np.concatenate([users.features(u, s, hellinger=hellinger)
                        for u, s in zip(chosen, starts, strict=True)])
    y = np.concatenate([users.targets(u, s) for u, s in zip(chosen, starts, strict=True)])
    devices = np.repeat(np.arange(len(chosen), dtype=np.int64), [len(s) for s in starts])
    params = {"n_users": n_users, "max_samples_per_user": max_samples_per_user,
              "min_samples": min_samples, "seq_len": users.seq_len, "hellinger": bool(hellinger),
              "random_state": (int(random_state) if isinstance(random_state, numbers.Integral)
                               else None)}
    return FederatedText(X=X, y=y, devices=devices, windows=np.concatenate(starts),
                         user_names=users.names[chosen], plays=users.plays[chosen],
                         source_sha256=_sha256(raw_path.read_bytes()), params=params)


_CACHE_KIND = "shakespeare-leaf"
_CACHE_ARRAYS = ("X", "y", "devices", "windows", "user_names", "plays")


def cache_shakespeare(data: FederatedText, path) -> Path:
    """Write ``data`` to the HDF5 cache ``path`` (atomically), parameters as attributes."""
    arrays = {name: getattr(data, name) for name in _CACHE_ARRAYS}
    attrs = {"dataset": _CACHE_KIND, "source_sha256": data.source_sha256,
             "params": json.dumps(data.params, sort_keys=True)}
    return write_h5(path, arrays, attrs)


def load_shakespeare_cache(path, *, expected: dict | None = None) -> FederatedText:
    """Read a cache written by :func:`cache_shakespeare`.

    Parameters
    ----------
    expected : dict, optional
        Values the cache must have been built with (keys of ``params`` and/or
        ``source_sha256``); a mismatch raises ``ValueError`` naming the file and the key, so a
        stale cache is never used silently.
    """
    arrays, attrs = read_h5(path, _CACHE_ARRAYS)
    if attrs.get("dataset") != _CACHE_KIND:
        raise ValueError(f"{path}: not a Shakespeare cache (dataset={attrs.get('dataset')!r})")
    params = json.loads(attrs["params"])
    recorded = {**params, "source_sha256": attrs["source_sha256"]}
    for key, value in (expected or {}).items():
        if key not in recorded:
            raise KeyError(f"{path}: unknown cache parameter {key!r}; has {sorted(recorded)}")
        if recorded[key] != value:
            raise ValueError(f"{path}: stale cache, {key}={recorded[key]!r} but {value!r} "
                             f"is expected; rebuild it")
    return FederatedText(X=arrays["X"], y=arrays["y"].astype(np.int64),
                         devices=arrays["devices"].astype(np.int64),
                         windows=arrays["windows"].astype(np.int64),
                         user_names=arrays["user_names"], plays=arrays["plays"],
                         source_sha256=attrs["source_sha256"], params=params)
