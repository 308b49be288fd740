"""Fetch a pinned file: local mirrors first, then the network; always verify sha256."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import urllib.request
from pathlib import Path

from storyeval.data.recorded import recorded_checksum
from storyeval.errors import InputError

CHUNK = 1 << 20


def sha256sum(path: str | Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(CHUNK), b""):
            digest.update(block)
    return digest.hexdigest()


def find_in_mirrors(name: str, mirrors: list[str | Path]) -> Path | None:
    """First mirror directory that holds a file called `name`."""
    for mirror in mirrors:
        candidate = Path(mirror) / name
        if candidate.is_file():
            return candidate
    return None


def verify(path: Path, expected: str | None, origin: str,
           fix: str = "delete it and fetch it again from the pinned URL") -> str:
    """Return the file's sha256; refuse it when it differs from `expected`."""
    actual = sha256sum(path)
    if expected and actual != expected.lower():
        raise InputError(
            f"{origin}: sha256 {actual} does not match the pinned {expected} (the file is corrupt, edited, "
            f"or from another commit); fix: {fix}"
        )
    return actual


def local_copy(fetched: str | Path, mirrors: list[str | Path], pinned: str | None,
               recorded: str | Path) -> Path | None:
    """The verified local file of a pinned file: its fetched copy `fetched`, else the first mirror's copy;
    None when neither exists (the fetch rule downloads and verifies it).

    The expected sha256 is `pinned`, else the one recorded at first download in `recorded`. The fetched copy
    is checked on every call, not only when fetched: the workflow reads it, and an edit to it would change
    results without any rule noticing. A fetched copy with no checksum to check against is refused."""
    fetched = Path(fetched)
    expected = pinned or recorded_checksum(recorded, fetched.name)
    if fetched.is_file():
        if expected is None:
            raise InputError(f"{fetched}: no sha256 pinned (sha256: null) and none recorded, in {recorded}; "
                             "fix: delete the file, and the next run fetches it and records its checksum")
        verify(fetched, expected, str(fetched), "delete it, and the next run fetches it again from a mirror "
                                                "or the pinned URL")
        return fetched
    mirror = find_in_mirrors(fetched.name, mirrors)
    if mirror is not None:
        verify(mirror, expected, str(mirror), "replace it with the file at the pinned commit, or remove it "
                                              "from the mirror")
    return mirror


def fetch(
    name: str,
    url: str,
    sha256: str | None,
    mirrors: list[str | Path],
    dest: str | Path,
    allow_download: bool = True,
    timeout: float = 60.0,
) -> str:
    """Place a verified copy of `name` at `dest` and return its sha256.

    `sha256=None` accepts any content (for files whose checksum is recorded at
    first download); the caller records the returned digest.
    Nothing is written to `dest` unless the checksum holds.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    local = find_in_mirrors(name, mirrors)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        staged = Path(tmp) / name
        if local is not None:
            shutil.copyfile(local, staged)
            origin = str(local)
        elif allow_download:
            try:
                with urllib.request.urlopen(url, timeout=timeout) as response, open(staged, "wb") as out:
                    shutil.copyfileobj(response, out, CHUNK)
            except OSError as error:
                raise InputError(
                    f"{name}: not in any mirror ({', '.join(map(str, mirrors)) or 'none configured'}) "
                    f"and the download of {url} failed ({error}); fix: put the file in a mirror directory "
                    "listed under data.mirrors in config.yaml, or run where that URL is reachable"
                ) from error
            origin = url
        else:
            raise InputError(
                f"{name}: not in any mirror ({', '.join(map(str, mirrors)) or 'none configured'}) and "
                "data.allow_download is false; fix: put the file in a mirror directory or allow downloads"
            )
        digest = verify(staged, sha256, origin)
        staged.replace(dest)
    return digest


def reachable(url: str, timeout: float = 3.0) -> bool:
    """True when a HEAD request to `url` succeeds (used to decide optional inputs)."""
    request = urllib.request.Request(url, method="HEAD")
    try:
        with urllib.request.urlopen(request, timeout=timeout):
            return True
    except OSError:
        return False
