"""Are two runs' outputs the same bytes? Every file under results/ of two working directories (before and after a
change of how the workflow runs: the job server, job order, fewer jobs), compared byte for byte.

    python bench/compare_runs.py BEFORE_DIR AFTER_DIR

Prints the count of identical files by kind, then each file that differs or exists in one run only, with, for a
CSV file that differs in numbers alone, the largest difference. Files that record how the run went rather than
what it computed may differ and are counted apart (MAY_DIFFER, with why). Exit status 1 when any other file
differs or is missing."""

from __future__ import annotations

import argparse
import filecmp
import json
import re
import struct
import sys
from collections import Counter
from pathlib import Path

MAY_DIFFER = {
    r"computation_times\.(csv|md)$|report/computation_times\.html$": "the jobs' measured seconds",
    r"\.signature\.json$": "the digests of the code that computed the scores (any edit of a script changes them)",
    r"storyer-model/.*\.json$": "the training run's metadata (its clone's path)",
}


SAFETENSORS_METADATA = "a safetensors header's metadata (the model's path, the digests of the code)"
PAGE_IMAGES = "a report page's embedded images encoded again: the same pixels, the rest of the page the same"
EMBEDDED_IMAGE = re.compile(rb'src="data:image/(?:webp|png);base64,([A-Za-z0-9+/=]*)"')


def page_parts(path: Path) -> tuple[list[bytes], list[bytes]]:
    """(the page's text around its embedded images, the images' pixels as RGBA bytes with their size)."""
    import base64
    import io

    from PIL import Image

    data = path.read_bytes()
    pixels = []
    for encoded in EMBEDDED_IMAGE.findall(data):
        with Image.open(io.BytesIO(base64.b64decode(encoded))) as image:
            pixels.append(repr(image.size).encode() + image.convert("RGBA").tobytes())
    return EMBEDDED_IMAGE.split(data)[::2], pixels


def safetensors_parts(path: Path) -> tuple[dict, dict, bytes]:
    """(metadata, the tensors' header entries, the tensor bytes) of a safetensors file."""
    data = path.read_bytes()
    size = struct.unpack("<Q", data[:8])[0]
    header = json.loads(data[8:8 + size])
    return header.pop("__metadata__", {}), header, data[8 + size:]


def largest_difference(one: Path, two: Path) -> float | None:
    """The largest absolute difference between two CSV files' numbers, where their columns and every other cell
    are the same; None otherwise."""
    import numpy as np
    import pandas as pd

    left, right = pd.read_csv(one), pd.read_csv(two)
    if list(left.columns) != list(right.columns) or left.shape != right.shape:
        return None
    numbers = [column for column in left if pd.api.types.is_float_dtype(left[column])
               and pd.api.types.is_float_dtype(right[column])]
    others = [column for column in left if column not in numbers]
    a, b = left[numbers].to_numpy(), right[numbers].to_numpy()
    if not left[others].equals(right[others]) or not np.array_equal(np.isnan(a), np.isnan(b)):
        return None
    return float(np.nanmax(np.abs(a - b), initial=0.0))


def may_differ(path: str) -> str | None:
    return next((why for pattern, why in MAY_DIFFER.items() if re.search(pattern, path)), None)


def compare(before: Path, after: Path) -> tuple[Counter, list[str], list[tuple[str, str]]]:
    """(identical files by suffix, files that differ or exist in one run only, (file, why) that may differ)."""
    files = {path.relative_to(root).as_posix() for root in (before, after) for path in (root / "results").rglob("*")
             if path.is_file()}
    same, wrong, allowed = Counter(), [], []
    for name in sorted(files):
        one, two = before / name, after / name
        if one.is_file() and two.is_file() and filecmp.cmp(one, two, shallow=False):
            same[Path(name).suffix or "(none)"] += 1
        elif (why := may_differ(name)) and one.is_file() and two.is_file():
            allowed.append((name, why))
        elif name.endswith(".safetensors") and one.is_file() and two.is_file() \
                and safetensors_parts(one)[1:] == safetensors_parts(two)[1:]:
            allowed.append((name, SAFETENSORS_METADATA))
        elif name.endswith(".html") and one.is_file() and two.is_file() and page_parts(one) == page_parts(two):
            allowed.append((name, PAGE_IMAGES))
        else:
            wrong.append(name + ("" if one.is_file() and two.is_file() else
                                 " (only in " + ("before" if one.is_file() else "after") + ")"))
    return same, wrong, allowed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    args = parser.parse_args(argv)
    same, wrong, allowed = compare(args.before, args.after)
    print(f"identical: {sum(same.values())} files (" + ", ".join(f"{n} {s}" for s, n in same.most_common()) + ")")
    for why in sorted(set(why for _, why in allowed)):
        print(f"differ, as they may ({why}): {sum(1 for _, w in allowed if w == why)}")
    for name in wrong:
        one, two = args.before / name, args.after / name
        largest = largest_difference(one, two) if name.endswith(".csv") and one.is_file() and two.is_file() else None
        print(f"DIFFERS: {name}" + ("" if largest is None else f" (numbers only, by at most {largest:.3g})"))
    return 1 if wrong else 0


if __name__ == "__main__":
    sys.exit(main())
