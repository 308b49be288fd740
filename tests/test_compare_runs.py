"""bench/compare_runs.py: two runs' outputs compared byte for byte, with the files that may differ counted apart."""

import base64
import importlib.util
import io
import json
import struct

import numpy as np
from PIL import Image

from conftest import REPO

spec = importlib.util.spec_from_file_location("compare_runs", REPO / "bench/compare_runs.py")
compare_runs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(compare_runs)


def safetensors(metadata: dict, data: bytes) -> bytes:
    header = json.dumps({"__metadata__": metadata, "x": {"dtype": "F64", "shape": [1], "data_offsets": [0, 8]}})
    return struct.pack("<Q", len(header)) + header.encode() + data


def write(root, files):
    for name, content in files.items():
        path = root / "results" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)


def test_a_changed_byte_or_a_missing_file_fails_and_timings_may_differ(tmp_path, capsys):
    before, after = tmp_path / "before", tmp_path / "after"
    shared = {"hanna/correlations.csv": b"r\n0.5\n", "hanna/fig.png": b"\x89PNG"}
    write(before, {**shared, "hanna/computation_times.csv": b"s\n1.0\n", "hanna/gone.csv": b"x"})
    write(after, {**shared, "hanna/computation_times.csv": b"s\n2.0\n"})
    assert compare_runs.main([str(before), str(after)]) == 1
    out = capsys.readouterr().out
    assert "identical: 2 files" in out and "DIFFERS: results/hanna/gone.csv (only in before)" in out
    assert "differ, as they may (the jobs' measured seconds): 1" in out
    write(after, {"hanna/gone.csv": b"x"})
    assert compare_runs.main([str(before), str(after)]) == 0
    write(before, {"e.safetensors": safetensors({"path": "/a"}, b"\x00" * 8)})
    write(after, {"e.safetensors": safetensors({"path": "/b"}, b"\x00" * 8)})
    assert compare_runs.main([str(before), str(after)]) == 0
    write(after, {"e.safetensors": safetensors({"path": "/a"}, b"\x01" + b"\x00" * 7)})
    assert compare_runs.main([str(before), str(after)]) == 1
    write(after, {"e.safetensors": safetensors({"path": "/a"}, b"\x00" * 8), "hanna/correlations.csv": b"r\n0.5001\n"})
    assert compare_runs.main([str(before), str(after)]) == 1
    assert "DIFFERS: results/hanna/correlations.csv (numbers only, by at most 0.0001)\n" in capsys.readouterr().out
    write(before, {"hanna/correlations.csv": b"level,r\nstory,0.5\n"})
    write(after, {"hanna/correlations.csv": b"level,r\nsystem,0.5\n"})  # a label differs: not numbers only
    assert compare_runs.main([str(before), str(after)]) == 1
    assert "DIFFERS: results/hanna/correlations.csv\n" in capsys.readouterr().out


def page(pixels: bytes, kind: str, text: str = "Fig. 1") -> bytes:
    buffer = io.BytesIO()
    Image.frombytes("RGBA", (64, 64), pixels).save(buffer, format=kind, lossless=True)
    data = base64.b64encode(buffer.getvalue()).decode()
    return f'<h3>{text}</h3><img src="data:image/{kind.lower()};base64,{data}">'.encode()


def test_a_report_page_may_encode_the_same_pixels_again_but_not_other_pixels_or_words(tmp_path, capsys):
    before, after = tmp_path / "before", tmp_path / "after"
    rgba = np.random.default_rng(0).integers(0, 8, (64, 64, 4), dtype=np.uint8) * 32
    rgba[..., 3] = 255
    write(before, {"hanna/report/fig.html": page(rgba.tobytes(), "WEBP")})
    write(after, {"hanna/report/fig.html": page(rgba.tobytes(), "PNG")})
    assert compare_runs.main([str(before), str(after)]) == 0
    assert "differ, as they may (a report page's embedded images encoded again" in capsys.readouterr().out
    rgba[0, 0, 0] += 1
    write(after, {"hanna/report/fig.html": page(rgba.tobytes(), "WEBP")})
    assert compare_runs.main([str(before), str(after)]) == 1
    rgba[0, 0, 0] -= 1
    write(after, {"hanna/report/fig.html": page(rgba.tobytes(), "PNG", "Fig. 2")})
    assert compare_runs.main([str(before), str(after)]) == 1
