"""Checksums recorded at first download, for files whose sha256 is not pinned in config."""

from __future__ import annotations

from pathlib import Path


def _read(path: Path) -> dict[str, str]:
    if not path.is_file():
        return {}
    return dict(line.split("\t", 1) for line in path.read_text().splitlines() if "\t" in line)


def recorded_checksum(path: str | Path, name: str) -> str | None:
    return _read(Path(path)).get(name)


def record_checksum(path: str | Path, name: str, digest: str) -> None:
    path = Path(path)
    entries = _read(path) | {name: digest}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{key}\t{value}\n" for key, value in sorted(entries.items())))
