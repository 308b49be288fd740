import hashlib

import pytest

from storyeval.data.fetch import fetch
from storyeval.data.recorded import record_checksum, recorded_checksum
from storyeval.errors import InputError


@pytest.fixture
def mirror(tmp_path):
    directory = tmp_path / "mirror"
    directory.mkdir()
    (directory / "data.csv").write_text("a,b\n1,2\n")
    return directory


def digest(text):
    return hashlib.sha256(text.encode()).hexdigest()


def test_mirror_copy_verified(mirror, tmp_path):
    dest = tmp_path / "out" / "data.csv"
    assert fetch("data.csv", "http://unused.invalid/x", digest("a,b\n1,2\n"), [mirror], dest) == digest("a,b\n1,2\n")
    assert dest.read_text() == "a,b\n1,2\n"


def test_checksum_mismatch_refused_and_nothing_written(mirror, tmp_path):
    dest = tmp_path / "out" / "data.csv"
    with pytest.raises(InputError, match="does not match the pinned"):
        fetch("data.csv", "http://unused.invalid/x", "0" * 64, [mirror], dest)
    assert not dest.exists()
    assert list(dest.parent.iterdir()) == []


def test_no_mirror_no_network_names_the_fix(tmp_path):
    with pytest.raises(InputError, match="not in any mirror.*download of http://127.0.0.1:9/x failed"):
        fetch("data.csv", "http://127.0.0.1:9/x", "0" * 64, [tmp_path / "empty"], tmp_path / "d.csv", timeout=2)


def test_downloads_disabled(tmp_path):
    with pytest.raises(InputError, match="allow_download is false"):
        fetch("data.csv", "http://127.0.0.1:9/x", None, [], tmp_path / "d.csv", allow_download=False)


def test_recorded_checksums_roundtrip(tmp_path):
    path = tmp_path / "recorded.tsv"
    assert recorded_checksum(path, "x") is None
    record_checksum(path, "x", "abc")
    record_checksum(path, "y", "def")
    assert recorded_checksum(path, "x") == "abc" and recorded_checksum(path, "y") == "def"
