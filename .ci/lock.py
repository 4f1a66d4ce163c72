"""Write requirements.lock: every package requirements.txt resolves to, pinned, with hashes.

    python .ci/lock.py                  # from the repository root, after changing requirements.txt
    python .ci/lock.py --extra flower   # requirements-flower.lock, installed on top of it

pip resolves requirements.txt from scratch (``--ignore-installed``, nothing installed: a dry
run) and reports the artifact it would install for each package with its sha256; the lock pins
them all, transitive ones included, so a rebuild installs the same files
(``pip install --require-hashes -r requirements.lock``, the README's install command and CI's).

``--extra NAME`` resolves requirements.txt together with the pins of pyproject.toml's optional
dependencies ``NAME`` and writes ``requirements-NAME.lock`` with only the packages the base lock
does not hold, so that ``pip install --require-hashes -r requirements-NAME.lock`` after the base
install adds them and changes nothing installed; a package of the base lock that the extra asks
for with extras of its own (flwr: ``sqlalchemy[asyncio]``) is pinned again with them, at the
base's version and hash (pip's hash mode wants every requirement it meets pinned, extras
included). It stops, naming the packages, when the extra
would move a package the base lock pins (a conflict to settle in requirements.txt, not here).
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
_PIN = re.compile(
    r"([A-Za-z0-9_.\-]+)(?:\[[A-Za-z0-9_.,\-]+\])?==(\S+) --hash=sha256:([0-9a-f]{64})")


def _key(name: str) -> str:
    """A distribution name as pip compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name.lower())


def resolve(extra_requirements: list[str]) -> list[tuple[str, str, str, tuple]]:
    """(name, version, sha256, extras asked for) of every package requirements.txt (and
    ``extra_requirements``) resolve to, sorted by name."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--dry-run",
                        "--ignore-installed", "--report", str(report),
                        "-r", str(ROOT / "requirements.txt"), *extra_requirements], check=True)
        installs = json.loads(report.read_text())["install"]
    extras = _asked_extras(installs)
    return sorted(((i["metadata"]["name"], i["metadata"]["version"],
                    i["download_info"]["archive_info"]["hashes"]["sha256"],
                    tuple(sorted(extras.get(_key(i["metadata"]["name"]), ()))))
                   for i in installs), key=lambda pin: pin[0].lower())


def _asked_extras(installs) -> dict[str, set]:
    """The extras any resolved package asks of another (``sqlalchemy[asyncio]``), by the
    other's normalized name; requirements that apply only under an extra of their own are
    left out."""
    from packaging.requirements import Requirement

    asked: dict[str, set] = {}
    for item in installs:
        for line in item["metadata"].get("requires_dist") or ():
            requirement = Requirement(line)
            if requirement.extras and (requirement.marker is None
                                       or requirement.marker.evaluate({"extra": ""})):
                asked.setdefault(_key(requirement.name), set()).update(requirement.extras)
    return asked


def read_lock(path: Path) -> dict[str, str]:
    """Version of every package a lock file pins, by normalized name."""
    return {_key(m.group(1)): m.group(2) for line in path.read_text().splitlines()
            if (m := _PIN.fullmatch(line))}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--extra", help="an optional-dependencies group of pyproject.toml: "
                        "write requirements-EXTRA.lock on top of requirements.lock")
    args = parser.parse_args(argv)
    if args.extra is None:
        pins, out, source = resolve([]), ROOT / "requirements.lock", "requirements.txt"
    else:
        extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
            "optional-dependencies"]
        if args.extra not in extras:
            parser.error(f"--extra {args.extra!r} is not an optional-dependencies group of "
                         f"pyproject.toml (there: {', '.join(sorted(extras))})")
        base = read_lock(ROOT / "requirements.lock")
        pins = resolve(extras[args.extra])
        moved = [f"{name} {base[_key(name)]} -> {version}" for name, version, _, _ in pins
                 if _key(name) in base and base[_key(name)].split("+")[0] != version.split("+")[0]]
        if moved:
            print(f"the extra {args.extra!r} moves pins of requirements.lock: "
                  + "; ".join(moved), file=sys.stderr)
            return 1
        # new packages, and the base's packages the extra asks for with extras
        pins = [pin for pin in pins if _key(pin[0]) not in base or pin[3]]
        out = ROOT / f"requirements-{args.extra}.lock"
        source = f"pyproject.toml's [{args.extra}] extra, on top of requirements.lock"
    command = "python .ci/lock.py" + ("" if args.extra is None else f" --extra {args.extra}")
    lines = [f"# Generated by `{command}` from {source}: do not edit.",
             "# Every package it resolves to (transitive ones included), pinned with the",
             "# sha256 of the file pip installs; install with",
             "#   python -m pip install --require-hashes -r requirements.lock"]
    if args.extra is not None:
        lines.append(f"#   python -m pip install --require-hashes -r {out.name}")
    lines += [f"{name}{'[' + ','.join(extras) + ']' if extras else ''}=={version} "
              f"--hash=sha256:{digest}" for name, version, digest, extras in pins]
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out.name}: {len(pins)} packages")
    return 0


if __name__ == "__main__":
    sys.exit(main())
