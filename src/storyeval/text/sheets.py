"""Ratings in a spreadsheet, read as the workbook is kept: .xlsx through openpyxl, .ods through pandas' odf
reader (odfpy); never a hand parser of either format.

A shared sheet has a title block above its header, spacer columns, formulas, merged cells, a totals row under
the stories and a block of columns per rater side by side. `read_sheet` takes the header from the first row
of `range:` (else the first row that holds every column the entry names), reads the rows under it down to the
range's end (else to the first empty row), gives a cell merged over a text column its value on every row it
spans, reads a formula's value as the workbook saved it (a formula is never evaluated), and stacks the rater
blocks (`raters: {rater id: "C:L"}`, each block holding the rating columns under the same names) into one row per
story and rater. Whatever it cannot read as meant is one line naming the cell and a fix.
"""

from __future__ import annotations

import datetime
import io
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from storyeval.errors import InputError, quoted

RATER_COLUMN = "_rater"  # the column the rater blocks' ids are stacked into


@dataclass
class Grid:
    """A sheet's cells: values[r][c] (0-based), formulas {(r, c): text} and merged ranges (r0, c0, r1, c1),
    inclusive and 0-based."""

    title: str
    values: list[list]
    formulas: dict
    merged: list[tuple[int, int, int, int]]


def address(row: int, column: int) -> str:
    """The A1-style address of the 0-based cell (row, column)."""
    from openpyxl.utils import get_column_letter

    return f"{get_column_letter(column + 1)}{row + 1}"


def chosen_sheet(names: Sequence[str], sheet: str | int | None, label: str, key: str) -> str:
    """The sheet's name: `sheet` by name, or by position counted from 1; the first when None."""
    if sheet is None:
        return names[0]
    if isinstance(sheet, int) and 1 <= sheet <= len(names):
        return names[sheet - 1]
    if sheet in names:
        return sheet
    raise InputError(f"{label}: no sheet {sheet!r} (it has {', '.join(map(repr, names))}); fix: set {key}.sheet to "
                     "one of those names, or a position counted from 1")


def xlsx_grid(path: str | Path, sheet, label: str, key: str) -> Grid:
    import openpyxl

    raw = Path(path).read_bytes()  # as bytes: openpyxl refuses a workbook by its name's suffix (one named .csv)
    try:  # twice: the saved values, and the formulas (to name one the workbook saved no value of)
        values = openpyxl.load_workbook(io.BytesIO(raw), data_only=True)
        formulas = openpyxl.load_workbook(io.BytesIO(raw), data_only=False)
    except Exception as error:  # openpyxl raises zipfile, KeyError or XML errors on a damaged file
        raise InputError(f"{label}: not a readable .xlsx workbook ({type(error).__name__}: "
                         f"{' '.join(str(error).split())[:160]}); fix: open and save it again in a spreadsheet "
                         "program, or export the sheet as CSV") from error
    title = chosen_sheet(values.sheetnames, sheet, label, key)
    cells, written = values[title], formulas[title]
    shape = {"min_row": 1, "min_col": 1, "max_row": cells.max_row, "max_col": cells.max_column}
    grid = [list(row) for row in cells.iter_rows(values_only=True, **shape)]
    found = {(cell.row - 1, cell.column - 1): str(cell.value) for row in written.iter_rows(**shape) for cell in row
             if cell.data_type == "f"}
    bounds = [block.bounds for block in cells.merged_cells.ranges]
    merged = [(r0 - 1, c0 - 1, r1 - 1, c1 - 1) for c0, r0, c1, r1 in bounds]
    return Grid(title, grid, found, merged)


def ods_grid(path: str | Path, sheet, label: str, key: str) -> Grid:
    try:
        book = pd.read_excel(path, engine="odf", sheet_name=None, header=None)
    except Exception as error:  # odfpy raises zipfile or XML errors on a damaged file
        raise InputError(f"{label}: not a readable .ods spreadsheet ({type(error).__name__}: "
                         f"{' '.join(str(error).split())[:160]}); fix: open and save it again in a spreadsheet "
                         "program, or export the sheet as CSV") from error
    title = chosen_sheet(list(book), sheet, label, key)
    frame = book[title].astype(object)
    values = [[None if pd.isna(value) else value for value in row] for row in frame.itertuples(index=False)]
    return Grid(title, values, {}, [])  # pandas' odf reader reads saved values and spreads merged ones


def as_text(value) -> str:
    """A text cell as the sheet shows it: a whole number without its .0, a date in ISO form, empty for none."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    return str(value).strip()


def empty(value) -> bool:
    return value is None or (isinstance(value, str) and not value.strip())


def find_header(grid: Grid, wanted: Sequence[str], label: str, key: str) -> int:
    """The first row that holds every name in `wanted` (the title block above it is skipped)."""
    names = set(wanted)
    best, found = 0, set()
    for index, row in enumerate(grid.values):
        held = names & {as_text(value) for value in row}
        if held == names:
            return index
        if len(held) > len(found):
            best, found = index, held
    missing = sorted(names - found)
    raise InputError(f"{label}: no row of sheet {grid.title!r} holds every column {key}.columns names (row "
                     f"{best + 1} holds {len(found)} of {len(names)}, not {', '.join(map(quoted, missing[:4]))}); fix: "
                     f"correct those names, or set {key}.range to the table's cells (e.g. A10:Z74), its first row "
                     "the header")


def block_columns(raters: Mapping[str, str], width: int, label: str, key: str) -> dict[str, range]:
    """{rater id: its 0-based columns} of `raters: {id: "C:L"}`; blocks inside the sheet and apart."""
    from openpyxl.utils import range_boundaries

    blocks = {}
    for rater, letters in raters.items():
        try:
            first, _, last, _ = range_boundaries(str(letters))
        except ValueError as error:
            raise InputError(f"{label}: {key}.raters.{rater}: {letters!r} is not a block of columns; fix: write its "
                             "first and last column, e.g. C:L") from error
        blocks[str(rater)] = range(first - 1, min(last, width))
        for other, columns in list(blocks.items())[:-1]:
            if set(columns) & set(blocks[str(rater)]):
                raise InputError(f"{label}: {key}.raters: the blocks of {other!r} and {rater!r} overlap; fix: give "
                                 "each rater's block its own columns")
    return blocks


def header_map(header: list, columns: range, names: set[str], label: str, where: str) -> dict[str, int]:
    """{name: column} of the `names` the header row holds within `columns`; a name held twice is refused."""
    held = {}
    for column in columns:
        name = as_text(header[column])
        if name in names:
            if name in held:
                raise InputError(f"{label}: {where} names {quoted(name)} twice, in columns "
                                 f"{address(0, held[name])[:-1]} and {address(0, column)[:-1]} (two rater blocks?); "
                                 "fix: declare each rater's block of columns under raters: {rater id: C:L}, or "
                                 "rename one of them")
            held[name] = column
    return held


def read_sheet(path: str | Path, file_format: str, label: str, key: str, text_columns: Mapping[str, str],
               rating_columns: Sequence[str], sheet=None, cells: str | None = None,
               raters: Mapping[str, str] | None = None) -> tuple[pd.DataFrame, list[str]]:
    """The sheet's table as a frame of the named columns (`text_columns` {key: header name}, as strings, and
    `rating_columns`, as the cells hold them) with `RATER_COLUMN` where `raters` declares blocks, and the notes
    start-up says of it. `frame.attrs`: "rows" (data row numbers: the n-th row under the header) and "address"
    (the cell of a row and column), which messages name. See the module docstring for what is read how."""
    from openpyxl.utils import range_boundaries

    grid = (xlsx_grid if file_format == "xlsx" else ods_grid)(path, sheet, label, key)
    height, width = len(grid.values), max((len(row) for row in grid.values), default=0)
    grid.values = [row + [None] * (width - len(row)) for row in grid.values]
    wanted = list(dict.fromkeys([*text_columns.values(), *rating_columns]))
    if cells:
        try:
            first_col, first_row, last_col, last_row = range_boundaries(cells)
        except ValueError as error:
            raise InputError(f"{label}: {key}.range: {cells!r} is not a cell range; fix: write it as A10:Z74, the "
                             "header's row first") from error
        top, bottom, span = first_row - 1, min(last_row, height), range(first_col - 1, min(last_col, width))
    else:
        top, span = find_header(grid, wanted, label, key), range(width)
        bottom = next((row for row in range(top + 1, height) if all(map(empty, grid.values[row]))), height)
    header = grid.values[top]
    where = f"row {top + 1} (the header) of sheet {grid.title!r}"
    blocks = block_columns(raters, width, label, key) if raters else {}
    inside = {column for columns in blocks.values() for column in columns}
    outside = header_map(header, [column for column in span if column not in inside],
                         set(wanted) - (set(rating_columns) if blocks else set()), label, where)
    if blocks:
        placed = {rater: header_map(header, columns, set(rating_columns), label, f"{where}, block {rater!r}")
                  for rater, columns in blocks.items()}
    else:
        placed = {None: {name: outside[name] for name in rating_columns if name in outside}}
    for rater, held in placed.items():
        lacking = [name for name in wanted if name not in outside and name not in held]
        if lacking:
            within = f" in block {rater!r} ({raters[rater]})" if rater is not None else ""
            raise InputError(f"{label}: {where} has no column {quoted(lacking[0])}{within}; fix: name a column the "
                             f"header holds in {key}.columns" + (f", or correct {key}.raters" if within else
                                                                 f", or set {key}.range with the header first"))
    rows = [row for row in range(top + 1, bottom) if not all(empty(grid.values[row][c]) for c in span)]
    used = set(outside.values()) | {column for held in placed.values() for column in held.values()}
    ratings_at = {column for held in placed.values() for column in held.values()}
    fill_merged(grid, set(rows), used, ratings_at, label)
    refuse_unsaved(grid, set(rows), used, label)
    id_column, text_column = outside[text_columns["story_id"]], outside.get(text_columns.get("story"))
    refuse_totals(grid, rows, id_column, text_column, used, label, key)
    frames = []
    for rater, held in placed.items():
        frame = pd.DataFrame({name: [as_text(grid.values[row][outside[name]]) for row in rows]
                              for name in text_columns.values()})
        for name, column in held.items():
            frame[name] = [grid.values[row][column] for row in rows]
        if rater is not None:
            frame[RATER_COLUMN] = rater
        frames.append(frame)
    frame = pd.concat(frames, ignore_index=True)
    origin = [(row, held) for held in placed.values() for row in rows]
    frame.attrs["rows"] = pd.Series([row - top for row, _ in origin])
    frame.attrs["address"] = lambda index, name: (
        f"cell {address(origin[index][0], origin[index][1].get(name, outside.get(name, 0)))} of sheet "
        f"{grid.title!r} (column {name!r})")
    notes = []
    if not cells and bottom < height and any(not empty(value) for row in grid.values[bottom:] for value in row):
        notes.append(f"{Path(path).name}: rows {bottom + 2}-{height} under the table's first empty row {bottom + 1} "
                     f"are not read (set {key}.range to read them)")
    return frame, notes


def fill_merged(grid: Grid, rows: set[int], used: set[int], ratings: set[int], label: str) -> None:
    """A merged cell over text columns gives its value to every cell it spans (as the sheet shows it); one over
    a rating column is refused: a rating is one rater's, in a cell of its own."""
    for r0, c0, r1, c1 in grid.merged:
        spanned = [(row, column) for row in range(r0, r1 + 1) for column in range(c0, c1 + 1)
                   if row in rows and column in used]
        if not spanned:
            continue
        cells = f"{address(r0, c0)}:{address(r1, c1)}"
        if any(column in ratings for _, column in spanned) and (r0, c0) != (r1, c1):
            raise InputError(f"{label}: {cells} is a merged cell over ratings; fix: unmerge it and give each rating "
                             "its own cell (leave a cell empty where no rating was given)")
        for row, column in spanned:
            grid.values[row][column] = grid.values[r0][c0]


def refuse_unsaved(grid: Grid, rows: set[int], used: set[int], label: str) -> None:
    """A formula read whose workbook saved no value (a file written by a program that computes none)."""
    unsaved = sorted((row, column) for (row, column), formula in grid.formulas.items()
                     if row in rows and column in used and grid.values[row][column] is None)
    if unsaved:
        row, column = unsaved[0]
        raise InputError(f"{label}: cell {address(row, column)} holds the formula {grid.formulas[(row, column)]} "
                         f"with no saved value ({len(unsaved)} such cells; a formula is read, never computed); fix: "
                         "open the workbook in a spreadsheet program and save it, or paste the values over the "
                         "formulas")


def refuse_totals(grid: Grid, rows: list[int], id_column: int, text_column: int | None, used: set[int], label: str,
                  key: str) -> None:
    """A row under the header without a story id but with values (a totals or averages row, a subheading), or
    with an id but no story text, is no story: one line naming its cells and the range that leaves it out."""
    for row in rows:
        values = grid.values[row]
        no_id = empty(values[id_column]) and any(not empty(values[column]) for column in used)
        no_text = text_column is not None and not no_id and empty(values[text_column])
        if no_id or no_text:
            cell = address(row, id_column if no_id else text_column)
            what = ("no story id but values" if no_id else
                    f"no story text beside {quoted(as_text(values[id_column]))} in {address(row, id_column)}")
            above = f"{address(rows[0] - 1, min(used))}:{address(row - 1, max(used))}"
            raise InputError(f"{label}: {cell} is empty: row {row + 1} has {what} (a totals or averages row?); fix: "
                             f"set {key}.range to the table above it (e.g. {above}), or fill in the cell")
