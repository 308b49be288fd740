"""What a file is, from its first bytes rather than its name: a spreadsheet, a compressed file or a Parquet
file given as a CSV, or text that a byte-order mark (BOM) declares UTF-16, UTF-32 or UTF-8.

The signatures are the formats' own: ZIP local headers (PK 03 04; an .xlsx holds xl/, an .ods names its
mimetype first, OpenDocument 1.2 section 3.3), gzip's 1f 8b (RFC 1952), Parquet's PAR1, and the Unicode BOMs
(The Unicode Standard, section 23.8).
"""

from __future__ import annotations

import codecs
import zipfile
from pathlib import Path

# Longest first: UTF-32 LE's BOM begins with UTF-16 LE's.
BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"), (codecs.BOM_UTF8, "utf-8-sig"),
        (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
ODS_MIMETYPE = b"application/vnd.oasis.opendocument.spreadsheet"


def bom_encoding(raw: bytes) -> str | None:
    """The codec a byte-order mark at the start of `raw` declares (it reads the mark away), else None."""
    return next((codec for mark, codec in BOMS if raw.startswith(mark)), None)


def container(path: str | Path, head: bytes) -> str | None:
    """What a file whose first bytes are `head` holds, when it is no plain text: xlsx, ods, zip (another
    archive), gzip or parquet; None for anything else."""
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if head.startswith(b"PAR1"):
        return "parquet"
    if not head.startswith(b"PK\x03\x04"):
        return None
    if head[30:38] == b"mimetype" and ODS_MIMETYPE in head[38:120]:
        return "ods"
    try:
        with zipfile.ZipFile(path) as archive:
            return "xlsx" if any(name.startswith("xl/") for name in archive.namelist()) else "zip"
    except (zipfile.BadZipFile, OSError):
        return "zip"


WHAT = {"xlsx": "an Excel workbook (.xlsx)", "ods": "an OpenDocument spreadsheet (.ods)",
        "parquet": "a Parquet file", "gzip": "gzip-compressed (its first bytes are gzip's 1f 8b)",
        "zip": "a ZIP archive (its first bytes are PK 03 04) that is no workbook"}


def utf16_without_bom(raw: bytes) -> str | None:
    """utf-16-le or utf-16-be where every other byte of `raw`'s start is NUL, as UTF-16 writes ASCII text
    without a byte-order mark; else None."""
    head = raw[:200]
    if len(head) < 4 or head.count(0) < len(head) // 3:
        return None
    return "utf-16-le" if head[1::2].count(0) > head[0::2].count(0) else "utf-16-be"
