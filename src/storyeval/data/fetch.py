"""Fetch a pinned file: local mirrors first, then the network; always verify sha256."""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import urllib.request
from pathlib import Path

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


def verify(path: Path, expected: str | None, origin: str) -> str:
    """Return the file's sha256; refuse it when it differs from `expected`."""
    actual = sha256sum(path)
    if expected and actual != expected.lower():
        raise InputError(
            f"{origin}: sha256 {actual} does not match the pinned {expected}; "
            "the file is corrupt or from another commit: delete it and fetch it again from the pinned URL"
        )
    return actual


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
