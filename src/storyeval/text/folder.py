"""A dataset's stories as a folder of text files, one a story (`texts: {path, pattern, sha256}`): the story id,
and the system (the writer) and prompt where the name holds them, come from each file's name by the declared
`pattern` ("{system}-{sample}.txt"; fields {story_id}, {system}, {prompt_id}, {sample}; without {story_id} the
id is the name less its suffix).

Each file's encoding is its own: a byte-order mark's, else UTF-8, else the one of `encodings` (default
Windows-1252, as Windows editors save) that charset-normalizer finds fits the bytes; a file none of them reads
is refused by name and byte offset. Line ends become \\n (storyeval.text.clean makes a story one line).
The folder is pinned by one sha256 over its files (`digest`), checked before any job as a file's is.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from storyeval.errors import InputError, quoted
from storyeval.limits import MAX_FIELD
from storyeval.text import sniff

FIELDS = ("story_id", "system", "prompt_id", "sample")
LEGACY = ("cp1252",)  # what a Western text that is not UTF-8 most likely is (Windows' default code page)


def pattern_regex(pattern: str, key: str) -> re.Pattern:
    """`pattern`'s {field}s as named groups (a field spans no path separator), the rest matched literally."""
    parts = re.split(r"\{(\w+)\}", pattern)
    unknown = [name for name in parts[1::2] if name not in FIELDS]
    if unknown or len(set(parts[1::2])) != len(parts[1::2]):
        raise InputError(f"{key}.pattern: {pattern!r} names {unknown[0] if unknown else 'a field twice'}; fix: use "
                         f"each of {', '.join('{' + name + '}' for name in FIELDS)} at most once")
    return re.compile("".join(re.escape(part) if index % 2 == 0 else f"(?P<{part}>[^/]+?)"
                              for index, part in enumerate(parts)))


def matching(folder: Path, pattern: str, key: str) -> tuple[list[tuple[Path, dict]], list[str]]:
    """The files of `folder` whose names match `pattern` with their fields, in name order, and the names of
    those that do not (hidden files aside)."""
    if not folder.is_dir():
        raise InputError(f"{key}.path: no folder {folder}; fix: correct the path (relative to the working "
                         "directory)")
    regex = pattern_regex(pattern, key)
    found, other = [], []
    for path in sorted(folder.iterdir()):
        if path.name.startswith(".") or not path.is_file():
            continue
        match = regex.fullmatch(path.name)
        (found.append((path, match.groupdict())) if match else other.append(path.name))
    if not found:
        raise InputError(f"{key}: no file in {folder} matches {pattern!r} ({len(other)} others, e.g. "
                         f"{', '.join(other[:3]) or 'none'}); fix: correct {key}.pattern or {key}.path")
    return found, other


def digest(folder: str | Path, pattern: str, key: str = "texts") -> str:
    """The sha256 that pins a folder of texts: of the lines `<sha256 of the file>  <name>`, one per matching file
    in name order (what `sha256sum` prints for them, run in the folder, piped into `sha256sum`)."""
    files, _ = matching(Path(folder), pattern, key)
    listing = "".join(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.name}\n" for path, _ in files)
    return hashlib.sha256(listing.encode()).hexdigest()


def decode(raw: bytes, path: Path, encodings: Sequence[str], key: str = "texts") -> tuple[str, str]:
    """(text, encoding) of one story file; one that no encoding reads is refused by name and byte offset."""
    import charset_normalizer

    marked = sniff.bom_encoding(raw)
    try:
        return raw.decode(marked or "utf-8"), marked or "utf-8"
    except UnicodeDecodeError as error:
        if marked:
            raise InputError(f"{path}: byte {error.start} is not {marked}, which its byte-order mark declares; fix: "
                             "re-save the file as UTF-8") from error
        offset = error.start
    best = charset_normalizer.from_bytes(raw, cp_isolation=list(encodings)).best()
    if best is None:
        raise InputError(f"{path}: byte {offset} (0x{raw[offset]:02x}) is not UTF-8, and no encoding of "
                         f"{', '.join(encodings)} reads the file; fix: re-save it as UTF-8, or add its encoding to "
                         f"{key}.encodings")
    return str(best), best.encoding


def read_folder(spec: Mapping, name: str) -> tuple[pd.DataFrame, list[str]]:
    """The stories of a `texts:` folder (story_id, story, the pattern's system and prompt_id, `_source` the
    file), and the notes start-up says: each file read in an encoding other than UTF-8, and the files whose
    names do not match the pattern (not read)."""
    key = f"datasets.{name}.texts"
    files, other = matching(Path(spec["path"]), spec["pattern"], key)
    rows, legacy = [], {}
    for path, fields in files:
        raw = path.read_bytes()
        text, encoding = decode(raw, path, spec.get("encodings") or LEGACY, key)
        if len(text) > MAX_FIELD:
            raise InputError(f"{path}: {len(text):,} characters, over the limit of {MAX_FIELD:,} for a story; fix: "
                             "shorten it, or move it out of the folder")
        if encoding not in ("utf-8", "utf-8-sig", "ascii"):
            legacy.setdefault(encoding, []).append(path.name)
        story_id = fields.get("story_id") or path.name[: len(path.name) - len("".join(path.suffixes[-1:]))]
        rows.append({"story_id": story_id, "story": text.replace("\r\n", "\n").replace("\r", "\n"),
                     **{field: fields[field] for field in ("system", "prompt_id") if field in fields},
                     "_source": str(path)})
    frame = pd.DataFrame(rows)
    repeated = frame["story_id"].duplicated()
    if repeated.any():
        story = frame.loc[repeated, "story_id"].iloc[0]
        both = frame.loc[frame["story_id"] == story, "_source"].tolist()
        raise InputError(f"{key}: {both[0]} and {both[1]} both give story {quoted(story)}; fix: one file per story id")
    notes = [f"{spec['path']}: {len(names)} of {len(files)} texts read as {encoding} (not UTF-8): {', '.join(names)}"
             for encoding, names in legacy.items()]
    if other:
        notes.append(f"{spec['path']}: {len(other)} files do not match {spec['pattern']!r} and are not read: "
                     f"{', '.join(other[:5])}{' ...' if len(other) > 5 else ''}")
    return frame, notes


def join_texts(text: pd.DataFrame, folder: pd.DataFrame, files: Sequence[str], name: str) -> pd.DataFrame:
    """The rows of the rating files (`text`: story ids and text columns, `_file`, `_row`) with each story's text,
    and the system and prompt its file name gives where they map none. A rated story without a file, or a file
    without ratings, is one line naming it."""
    unrated = folder[~folder["story_id"].isin(text["story_id"])]
    if len(unrated):
        raise InputError(f"dataset {name}: {unrated['_source'].iloc[0]} gives story "
                         f"{quoted(unrated['story_id'].iloc[0])}, which no rating file rates ({len(unrated)} such "
                         "files); fix: add its ratings, or move the file out of the folder")
    lacking = text[~text["story_id"].isin(folder["story_id"])]
    if len(lacking):
        row = lacking.iloc[0]
        raise InputError(f"dataset {name}: {files[row['_file']]} data row {row['_row']} rates story "
                         f"{quoted(row['story_id'])}, which has no file in datasets.{name}.texts.path "
                         f"({lacking['story_id'].nunique()} such stories); fix: add its text file (named by the "
                         "pattern), or remove its ratings")
    by_id = folder.set_index("story_id")
    for column in [column for column in ("story", "system", "prompt_id") if column in by_id]:
        given = text["story_id"].map(by_id[column])
        if column in text and (text[column].astype(str) != given.astype(str)).any():
            row = text[text[column].astype(str) != given.astype(str)].iloc[0]
            raise InputError(f"dataset {name}: {files[row['_file']]} data row {row['_row']} gives story "
                             f"{quoted(row['story_id'])} {column} {quoted(row[column])}, its file name "
                             f"{Path(by_id.at[row['story_id'], '_source']).name} {quoted(given[row.name])}; fix: "
                             f"one {column} per story (or leave the column out of datasets.{name}.columns)")
        text[column] = given
    return text


def check_digest(spec: Mapping, key: str) -> None:
    """The folder of texts matches its pinned sha256 (`digest`): checked before any job, as a file's is."""
    found = digest(spec["path"], spec["pattern"], key)
    if found.lower() != spec["sha256"].lower():
        raise InputError(f"{key}.sha256: the folder {spec['path']} ({spec['pattern']!r}) has digest {found}, not "
                         f"{spec['sha256']}: a file in it changed, came or went; fix: restore the files, or if you "
                         f"changed them on purpose, set sha256: {found}")
