"""Rating files as they come: a workbook with rater blocks, a folder of story files, nested JSON, gaps under a
scale, missing rater ids, and files that are not what their names say; read without the workflow."""

import gzip
import hashlib
import json
import re
import shutil

import numpy as np
import pandas as pd
import pytest
import yaml

from storyeval.config import ConfigSources, check_table_entry
from storyeval.datasets import describe
from storyeval.errors import InputError
from storyeval.examples import (
    LEGACY_STORIES,
    WORKSHOP_CRITERIA,
    nested_records,
    workshop,
    write_nested,
    write_story_folder,
    write_workbook,
)
from storyeval.text.clean import clean_text
from storyeval.text.folder import check_digest, digest

from conftest import REPO

EXAMPLES = REPO / "config/examples"


def entry_of(name):
    return yaml.safe_load((EXAMPLES / f"{name}.yaml").read_text())["datasets"][name]


def one_line(error) -> str:
    message = str(error.value)
    assert "\n" not in message and "fix: " in message
    return message


def test_the_shipped_shapes_are_what_the_generators_write(tmp_path):
    for name, path in (("workshop.xlsx", write_workbook(tmp_path / "workshop.xlsx")),
                       ("nested.json", write_nested(tmp_path / "nested.json"))):
        assert path.read_bytes() == (EXAMPLES / name).read_bytes(), name
    written = write_story_folder(tmp_path / "folder")
    assert written["ratings.csv"].read_bytes() == (EXAMPLES / "folder/ratings.csv").read_bytes()
    for path in sorted(written["stories"].iterdir()):
        assert path.read_bytes() == (EXAMPLES / "folder/stories" / path.name).read_bytes(), path.name
    for name in ("workshop", "nested", "folder"):
        entry = entry_of(name)
        assert hashlib.sha256((REPO / entry["path"]).read_bytes()).hexdigest() == entry["sha256"], name
    texts = entry_of("folder")["texts"]
    assert digest(REPO / texts["path"], texts["pattern"]) == texts["sha256"]


def truth(frame: pd.DataFrame) -> pd.Series:
    """The generator's ratings given (gaps left out), by story, criterion and rater."""
    long = frame.melt(id_vars=["story", "rater"], value_vars=list(WORKSHOP_CRITERIA), var_name="criterion")
    long["value"] = pd.to_numeric(long["value"], errors="coerce")
    return long.dropna().set_index(["story", "criterion", "rater"])["value"].sort_index()


def read_back(data) -> pd.Series:
    return data.ratings.set_index(["story_id", "criterion", "worker"])["rating"].sort_index()


# --- a workbook --------------------------------------------------------------------------------------------------


def workbook_entry(**changes):
    return {**entry_of("workshop"), **changes}


def load_workbook_entry(path, **changes):
    return describe(workbook_entry(**changes), "workshop").load(path, "workshop")


def test_a_workbook_with_rater_blocks_reads_as_one_row_per_story_and_rater(tmp_path):
    """Title block, merged title and writer cells, spacer columns, two rater blocks, an Averages block and a
    Mean row: every rating the generator gave, each writer on all of their stories, the two blanks counted."""
    path = write_workbook(tmp_path / "workshop.xlsx")
    data = load_workbook_entry(path)
    frame = workshop()
    assert read_back(data).to_numpy().tolist() == truth(frame).to_numpy().tolist()
    assert read_back(data).index.tolist() == [tuple(key) for key in truth(frame).index.tolist()]
    writers = frame.drop_duplicates("story").set_index("story")["writer"]
    assert data.texts.set_index("story_id")["system"].to_dict() == writers.to_dict()  # merged over each writer's rows
    stories = len(writers)
    assert data.notes[0] == (f"gaps (empty, null, NA or NaN ratings: no rating given, left out of the means): "
                             f"Plot 1 of {2 * stories}, Style 1 of {2 * stories} rating cells")
    means = truth(frame).groupby(level=["story", "criterion"]).mean()
    scored = data.human_scores.set_index(["story_id", "criterion"])["score"].sort_index()
    assert np.allclose(scored.to_numpy(), means.sort_index().to_numpy())


def test_formulas_are_read_as_the_workbook_saved_them(tmp_path):
    """Each block's Total is a SUM formula whose value the workbook saved: read, never computed."""
    path = write_workbook(tmp_path / "workshop.xlsx")
    columns = {**entry_of("workshop")["columns"], "criteria": ["Total"]}
    data = load_workbook_entry(path, columns=columns, scale=None, integer=False)
    sums = workshop().assign(Total=lambda frame: frame[list(WORKSHOP_CRITERIA)].apply(
        pd.to_numeric, errors="coerce").sum(axis=1)).set_index(["story", "rater"])["Total"].sort_index()
    assert read_back(data).droplevel("criterion").to_numpy().tolist() == sums.to_numpy().tolist()


def test_a_totals_row_under_the_stories_is_refused_with_its_cell_and_a_range_that_works(tmp_path):
    path = write_workbook(tmp_path / "workshop.xlsx")
    entry = workbook_entry()
    del entry["range"]  # the header is then found under the title block, the rows read down to the Mean row
    with pytest.raises(InputError) as error:
        describe(entry, "workshop").load(path, "workshop")
    last = 5 + workshop()["story"].nunique()
    assert f": C{last + 1} is empty: row {last + 1} has no story text beside 'Mean' in A{last + 1}" in one_line(error)
    suggested = re.search(r"fix: set datasets.workshop.range to the table above it \(e.g. (A5:[A-Z]+\d+)\)",
                          str(error.value)).group(1)
    assert suggested.endswith(str(last)) and len(load_workbook_entry(path, range=suggested).texts) == last - 5


def test_a_rating_off_the_scale_names_its_cell(tmp_path):
    import openpyxl

    path = write_workbook(tmp_path / "workshop.xlsx")
    book = openpyxl.load_workbook(path)
    book["Ratings"]["K8"] = 7  # rater B's Style of the third story
    book.save(path)
    with pytest.raises(InputError) as error:
        load_workbook_entry(path)
    assert "'7' in cell K8 of sheet 'Ratings' (column 'Style'), is outside the scale [1, 5] (1 such cells)" in \
        one_line(error)


def test_a_formula_without_a_saved_value_and_a_merged_rating_are_refused_by_cell(tmp_path):
    import openpyxl

    path = write_workbook(tmp_path / "workshop.xlsx")
    columns = {**entry_of("workshop")["columns"], "criteria": ["Total"]}
    book = openpyxl.load_workbook(path)
    book.save(path)  # openpyxl saves formulas without their values
    with pytest.raises(InputError) as error:
        load_workbook_entry(path, columns=columns, scale=None, integer=False)
    assert "cell H6 holds the formula =SUM(E6:G6) with no saved value" in one_line(error)
    book["Ratings"].merge_cells("E7:F7")
    book.save(path)
    with pytest.raises(InputError) as error:
        load_workbook_entry(path)
    assert ": E7:F7 is a merged cell over ratings; fix: unmerge it" in one_line(error)


def test_repeated_block_names_without_raters_point_to_the_blocks(tmp_path):
    path = write_workbook(tmp_path / "workshop.xlsx")
    entry = workbook_entry()
    del entry["raters"]
    with pytest.raises(InputError) as error:
        describe(entry, "workshop").load(path, "workshop")
    assert "names 'Plot' twice, in columns E and J (two rater blocks?); fix: declare each rater's block" in \
        one_line(error)
    with pytest.raises(InputError) as error:
        load_workbook_entry(path, sheet="Scores")
    assert "no sheet 'Scores' (it has 'About', 'Ratings')" in one_line(error)


def test_an_ods_sheet_with_a_title_block_reads_as_the_csv_would(tmp_path):
    pytest.importorskip("odf")
    frame = workshop()
    body = frame.drop(columns=["writer"])
    with pd.ExcelWriter(tmp_path / "ratings.ods", engine="odf") as writer:
        pd.DataFrame([["Workshop ratings"]]).to_excel(writer, sheet_name="Sheet1", header=False, index=False)
        body.to_excel(writer, sheet_name="Sheet1", startrow=2, index=False)
    entry = {"kind": "table", "scale": [1, 5],
             "columns": {"story_id": "story", "story": "text", "rater": "rater", "criteria": list(WORKSHOP_CRITERIA)}}
    data = describe(entry, "mine").load(tmp_path / "ratings.ods", "mine")
    assert read_back(data).to_numpy().tolist() == truth(frame).to_numpy().tolist()


# --- a folder of story files -------------------------------------------------------------------------------------


def folder_entry(root):
    entry = entry_of("folder")
    texts = {**entry["texts"], "path": str(root / "stories")}
    return {**entry, "texts": {**texts, "sha256": digest(texts["path"], texts["pattern"])}}


def test_a_folder_of_mixed_encodings_and_crlf_joins_its_ratings(tmp_path):
    paths = write_story_folder(tmp_path)
    declared = describe(folder_entry(tmp_path), "folder")
    assert declared.systems and not declared.prompts  # the pattern names {system}, not {prompt_id}
    data = declared.load(paths["ratings.csv"], "folder")
    frame = workshop()
    texts = data.texts.set_index("story_id")
    for story, words in frame.drop_duplicates("story").set_index("story")["text"].str.split().items():
        expected = clean_text(f"“{' '.join(words[:8])}” — café {' '.join(words[8:20])}.\n{' '.join(words[20:])}")
        assert texts.at[story, "story"] == expected, story  # cp1252 decoded, CRLF gone
        assert texts.at[story, "system"] == story.split("-")[0]  # the writer, from the file name
    assert read_back(data).to_numpy().tolist() == truth(frame).to_numpy().tolist()
    legacy = ", ".join(f"{story}.txt" for story in sorted(LEGACY_STORIES))
    assert data.notes[0] == (f"{tmp_path / 'stories'}: {len(LEGACY_STORIES)} of {len(texts)} texts read as cp1252 "
                             f"(not UTF-8): {legacy}")
    assert data.notes[1].startswith("gaps (") and "Plot 1 of 48, Style 1 of 48" in data.notes[1]


def test_a_folder_names_unread_files_missing_texts_and_unrated_texts(tmp_path):
    paths = write_story_folder(tmp_path)
    stories = paths["stories"]
    (stories / "w2-2.txt").write_bytes(b"A story \x81 with a byte no encoding has.")
    with pytest.raises(InputError) as error:
        describe(folder_entry(tmp_path), "folder").load(paths["ratings.csv"], "folder")
    assert f"{stories / 'w2-2.txt'}: byte 8 (0x81) is not UTF-8, and no encoding of cp1252 reads the file" in \
        one_line(error)
    (stories / "w2-2.txt").unlink()
    with pytest.raises(InputError) as error:
        describe(folder_entry(tmp_path), "folder").load(paths["ratings.csv"], "folder")
    row = pd.read_csv(paths["ratings.csv"])["story"].tolist().index("w2-2") + 1
    assert (f"ratings.csv data row {row} rates story 'w2-2', which has no file in datasets.folder.texts.path (1 such "
            "stories)") in one_line(error)
    shutil.copy(stories / "w2-1.txt", stories / "w2-2.txt")
    (stories / "w9-1.txt").write_text("A story nobody rated.")
    with pytest.raises(InputError) as error:
        describe(folder_entry(tmp_path), "folder").load(paths["ratings.csv"], "folder")
    assert f"{stories / 'w9-1.txt'} gives story 'w9-1', which no rating file rates (1 such files)" in one_line(error)


def test_a_changed_folder_fails_its_digest_with_a_fix_that_works(tmp_path):
    paths = write_story_folder(tmp_path)
    spec = folder_entry(tmp_path)["texts"]
    check_digest(spec, "datasets.folder.texts")
    (paths["stories"] / "w1-1.txt").write_text("Changed.")
    with pytest.raises(InputError) as error:
        check_digest(spec, "datasets.folder.texts")
    new = digest(spec["path"], spec["pattern"])
    assert one_line(error).endswith(f"set sha256: {new}")
    check_digest({**spec, "sha256": new}, "datasets.folder.texts")


# --- nested JSON -------------------------------------------------------------------------------------------------


def nested_truth() -> pd.Series:
    rows = [(story, criterion, rater, score) for story, record in nested_records().items()
            for criterion, key in (("Holistic", "HolisticData"), ("Style", "StyleData"))
            for rater, score in record[key]["scores"].items() if score is not None]
    return pd.DataFrame(rows, columns=["story", "criterion", "rater", "score"]).set_index(
        ["story", "criterion", "rater"])["score"].sort_index()


def test_nested_json_keyed_by_id_reads_its_paths(tmp_path):
    data = describe(entry_of("nested"), "nested").load(write_nested(tmp_path / "nested.json"), "nested")
    assert read_back(data).index.tolist() == nested_truth().index.tolist()
    assert read_back(data).to_numpy().tolist() == nested_truth().to_numpy().tolist()
    writers = {story: record["Meta"]["Writer"] for story, record in nested_records().items()}
    assert data.texts.set_index("story_id")["system"].to_dict() == writers
    assert data.notes == ("gaps (empty, null, NA or NaN ratings: no rating given, left out of the means): Holistic 1 "
                          f"of {3 * len(writers)} rating cells",)


@pytest.mark.parametrize("suffix", [".json", ".jsonl"])
def test_a_list_of_records_and_jsonl_read_the_same_paths(tmp_path, suffix):
    records = [{"id": story, **record} for story, record in nested_records().items()]
    path = tmp_path / f"nested{suffix}"
    path.write_text(json.dumps(records) if suffix == ".json" else "".join(json.dumps(r) + "\n" for r in records))
    entry = entry_of("nested")
    entry = {**entry, "columns": {**entry["columns"], "story_id": "id"}}
    data = describe(entry, "nested").load(path, "nested")
    assert read_back(data).to_numpy().tolist() == nested_truth().to_numpy().tolist()


def test_a_path_a_record_lacks_names_the_record_and_the_path(tmp_path):
    records = nested_records()
    del records["story-12"]["StyleData"]
    path = tmp_path / "nested.json"
    path.write_text(json.dumps(records))
    with pytest.raises(InputError) as error:
        describe(entry_of("nested"), "nested").load(path, "nested")
    assert ("nested.json: record 'story-12' has no 'StyleData.scores' (datasets.nested.columns.criteria; the record "
            "holds 'Title', 'Text', 'Meta', 'HolisticData'); fix: correct the path") in one_line(error)
    path.write_text(json.dumps(list(records.values())))
    with pytest.raises(InputError) as error:
        describe(entry_of("nested"), "nested").load(path, "nested")
    assert "record 1: @key is the key of a record in an object keyed by story id" in one_line(error)


# --- gaps under a scale, missing rater ids -----------------------------------------------------------------------

COLUMNS = {"story_id": "id", "story": "text", "rater": "annotator", "criteria": {"Fluency": "fluency"}}


def small_table(tmp_path, cells, raters=("r1", "r2", "r3"), suffix=".csv"):
    rows = [{"id": f"s{k // 3}", "text": f"story {k // 3} text", "annotator": raters[k % len(raters)],
             "fluency": cell} for k, cell in enumerate(cells)]
    path = tmp_path / f"mine{suffix}"
    if suffix == ".csv":
        pd.DataFrame(rows).to_csv(path, index=False)
    else:
        path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.mark.parametrize("gap", ["", "NA", "NaN", "null", "nan"])
def test_gaps_stay_gaps_under_a_scale_and_are_counted(tmp_path, gap):
    cells = [4, 5, gap, 2, gap, 3, 1, 2, 2, 5, 4, 4]
    path = small_table(tmp_path, cells)
    data = describe({"kind": "table", "scale": [1, 5], "columns": COLUMNS}, "mine").load(path, "mine")
    assert data.notes == ("gaps (empty, null, NA or NaN ratings: no rating given, left out of the means): Fluency 2 "
                          "of 12 rating cells",)
    assert len(data.ratings) == 10
    assert data.human_scores.set_index("story_id")["score"].to_dict() == {"s0": 4.5, "s1": 2.5, "s2": 5 / 3,
                                                                          "s3": 13 / 3}


def test_json_null_is_a_gap_and_a_rating_off_the_scale_gets_a_fix_that_works(tmp_path):
    path = small_table(tmp_path, [4, None, 3, 2, 5, 3, 1, 2, 2, 5, 4, 4], suffix=".jsonl")
    entry = {"kind": "table", "scale": [1, 5], "columns": COLUMNS}
    assert len(describe(entry, "mine").load(path, "mine").ratings) == 11
    path = small_table(tmp_path, [4, 5, 3, 2, 7, 3, 1, 2, 2, 5, 4, 4])
    with pytest.raises(InputError) as error:
        describe(entry, "mine").load(path, "mine")
    assert "'7' in column 'fluency', data row 5, is outside the scale [1, 5] (1 such cells); fix: correct the " \
           "rating, leave the cell empty where no rating was given" in one_line(error)
    small_table(tmp_path, [4, 5, 3, 2, "", 3, 1, 2, 2, 5, 4, 4])  # the fix: the cell left empty
    assert len(describe(entry, "mine").load(path, "mine").ratings) == 11


@pytest.mark.parametrize("suffix, where", [(".csv", "column 'annotator', data row 4"),
                                           (".jsonl", "line 4, 'annotator'")])
def test_a_missing_rater_id_is_refused_by_row_alike_in_csv_and_jsonl(tmp_path, suffix, where):
    raters = ("r1", "r2", "r3", None, None, None) if suffix == ".jsonl" else ("r1", "r2", "r3", "", "", "")
    path = small_table(tmp_path, [4, 5, 3, 2, 5, 3, 1, 2, 2, 5, 4, 4], raters=raters, suffix=suffix)
    with pytest.raises(InputError) as error:
        describe({"kind": "table", "columns": COLUMNS}, "mine").load(path, "mine")
    assert f"mine{suffix}: no rater id in {where} (6 such rows): a rating needs its rater; fix: give each such " \
           "row its rater's id" in one_line(error)


# --- files that are not what their names say ---------------------------------------------------------------------


def test_utf16_with_a_bom_is_read_and_compression_and_workbooks_are_named(tmp_path):
    path = small_table(tmp_path, [4, 5, 3, 2, 5, 3, 1, 2, 2, 5, 4, 4])
    plain = describe({"kind": "table", "columns": COLUMNS}, "mine").load(path, "mine")
    (tmp_path / "utf16.csv").write_bytes(path.read_text().encode("utf-16"))
    wide = describe({"kind": "table", "columns": COLUMNS}, "mine").load(tmp_path / "utf16.csv", "mine")
    assert wide.ratings.equals(plain.ratings)
    for name in ("packed.csv", "packed.csv.gz"):
        (tmp_path / name).write_bytes(gzip.compress(path.read_bytes()))
        with pytest.raises(InputError) as error:
            describe({"kind": "table", "columns": COLUMNS}, "mine").load(tmp_path / name, "mine")
        assert f"{name}: the file is gzip-compressed (its first bytes are gzip's 1f 8b), not a plain table; fix: " \
               f"unpack it (gunzip -k {name})" in one_line(error)
        with pytest.raises(InputError) as error:  # at start-up, before any job
            check_table_entry({"kind": "table", "path": str(tmp_path / name), "sha256": "0" * 64, "columns": COLUMNS},
                              "datasets.mine", ConfigSources())
        assert f"datasets.mine.path: {tmp_path / name} is gzip-compressed" in one_line(error)
    (tmp_path / "workbook.csv").write_bytes(write_workbook(tmp_path / "w.xlsx").read_bytes())
    data = describe(workbook_entry(), "workshop").load(tmp_path / "workbook.csv", "workshop")
    assert len(data.texts) == workshop()["story"].nunique()  # read as the workbook it is
    (tmp_path / "bare16.csv").write_bytes(path.read_text().encode("utf-16-le"))
    with pytest.raises(InputError) as error:
        describe({"kind": "table", "columns": COLUMNS}, "mine").load(tmp_path / "bare16.csv", "mine")
    assert "the file is UTF-16 without a byte-order mark" in one_line(error)
    assert "add encoding: utf-16-le" in str(error.value)
