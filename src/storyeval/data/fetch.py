"""Fetch a pinned file: local mirrors first, then the network; always verify sha256."""

from __future__ import annotations

import errno
import hashlib
import shutil
import signal
import threading
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path

from storyeval.data.recorded import recorded_checksum
from storyeval.errors import InputError

CHUNK = 1 << 20
MAX_DOWNLOAD = 2**30  # bytes a download of unknown size may take (config data.max_download); the largest pinned: 3.3 MB
DOWNLOAD_SECONDS = 3600.0  # seconds a download may take in all (config data.download_seconds)


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


def no_room(name: str, folder: Path, needed: int | None) -> InputError:
    """The refusal of a download whose disk is full: what is free, what the file needs, where to make room."""
    free = shutil.disk_usage(folder).free
    need = f", the file needs {needed:,}" if needed else ""
    return InputError(f"{name}: no space left on the disk of {folder} ({free:,} bytes free{need}); fix: free space "
                      "there, or set data.resources_dir to a folder on a disk with room")


def download(name: str, url: str, staged: Path, limit: int, seconds: float, timeout: float, pinned: bool) -> None:
    """Stream `url` into `staged`, refusing it past `limit` bytes (`pinned`: the file's pinned size) or after
    `seconds` in all; a socket that stays silent for `timeout` seconds fails the download too."""
    key = "the pinned size (size: in its entry)" if pinned else "data.max_download"
    fix = ("the URL serves another file: correct url: (or size:) in its entry, or put the file in a mirror directory"
           if pinned else "correct the URL, or raise data.max_download (bytes) if the file is really that large")
    deadline = time.monotonic() + seconds
    with urllib.request.urlopen(url, timeout=min(timeout, seconds)) as response, open(staged, "wb") as out:
        length = response.headers.get("Content-Length", "")
        if length.isdigit() and int(length) > limit:
            raise InputError(f"{name}: {url} announces {int(length):,} bytes, over {limit:,}, {key}; fix: {fix}")
        if length.isdigit() and int(length) > shutil.disk_usage(staged.parent).free:
            raise no_room(name, staged.parent, int(length))
        read = 0
        while block := response.read1(CHUNK):  # what has arrived: a trickle cannot outlast the deadline
            read += len(block)
            if read > limit:
                raise InputError(f"{name}: the download of {url} passed {limit:,} bytes, {key}; fix: {fix}")
            if time.monotonic() > deadline:
                raise InputError(f"{name}: the download of {url} took over {seconds:g} s (data.download_seconds), "
                                 f"{read:,} bytes read; fix: raise data.download_seconds, or put the file in a "
                                 "mirror directory listed under data.mirrors")
            out.write(block)


@contextmanager
def removed_on_exit(path: Path):
    """Delete `path` however the block ends: an error, Ctrl-C, or SIGTERM (a cancelled job), which is made an
    exit here. A SIGKILL leaves it; the next fetch of the file removes it before anything else."""
    main = threading.current_thread() is threading.main_thread()

    def leave(signum, frame):
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, leave) if main else None
    path.unlink(missing_ok=True)
    try:
        yield path
    finally:
        path.unlink(missing_ok=True)
        if main:
            signal.signal(signal.SIGTERM, previous)


def fetch(
    name: str,
    url: str,
    sha256: str | None,
    mirrors: list[str | Path],
    dest: str | Path,
    allow_download: bool = True,
    timeout: float = 60.0,
    size: int | None = None,
    limit: int = MAX_DOWNLOAD,
    seconds: float = DOWNLOAD_SECONDS,
) -> str:
    """Place a verified copy of `name` at `dest` and return its sha256.

    `sha256=None` accepts any content (for files whose checksum is recorded at
    first download); the caller records the returned digest. A download stops past
    `size` bytes (the pinned size) where known, else past `limit`, and after `seconds`.
    Nothing is written to `dest` unless the checksum holds, and nothing stays beside it.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    local = find_in_mirrors(name, mirrors)
    listed = ", ".join(map(str, mirrors)) or "none configured"
    if local is None and not allow_download:
        raise InputError(f"{name}: not in any mirror ({listed}) and data.allow_download is false; fix: put the "
                         "file in a mirror directory or allow downloads")
    with removed_on_exit(dest.parent / f".{dest.name}.part") as staged:
        try:
            if local is not None:
                shutil.copyfile(local, staged)
            else:
                download(name, url, staged, size or limit, seconds, timeout, pinned=bool(size))
        except OSError as error:
            if error.errno == errno.ENOSPC:  # the message would otherwise blame the network or the mirror
                raise no_room(name, dest.parent, size or (local.stat().st_size if local else None)) from None
            if local is not None:
                raise
            raise InputError(f"{name}: not in any mirror ({listed}) and the download of {url} failed ({error}); "
                             "fix: put the file in a mirror directory listed under data.mirrors in config.yaml, or "
                             "run where that URL is reachable") from error
        digest = verify(staged, sha256, str(local or url))
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
