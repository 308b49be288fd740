"""Example rated stories the project generates itself (no third-party text), in the layouts users' files have.

Each system has a planted quality: better systems write longer stories that copy more of the prompt's
reference, and raters score them higher on three criteria that are not HANNA's. `config/examples/` ships the
files `write_examples` writes, beside a ready config for each layout.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

SYSTEMS = ("alpha", "beta", "gamma", "delta", "epsilon")  # planted quality rises from alpha to epsilon
CRITERIA = {"Fluency": "fluency", "Plot": "plot_score", "Delight": "delight"}  # criterion: column
WORDS = tuple(
    "the a old young quiet brave small dark bright lost hidden red fox king river tower girl boy storm ship map "
    "letter garden wolf clock city forest door key song walked found opened lost carried watched followed "
    "remembered crossed built broke sang dreamed under over into beyond behind near night morning winter home "
    "secret promise journey shadow light fire stone bridge window mountain sea road friend stranger".split()
)


def rated_stories(seed: int = 7, prompts: int = 12, raters: int = 3, systems=SYSTEMS,
                  vocabulary=tuple(f"w{index}" for index in range(400))) -> pd.DataFrame:
    """One row per story and rater: prompts x systems stories, planted quality, integer ratings on 1-5."""
    rng = np.random.default_rng(seed)
    rows = []
    for prompt in range(prompts):
        reference = list(rng.choice(vocabulary, 60))
        for rank, system in enumerate(systems):
            quality = rank / 2 + rng.normal(0, 0.3)
            copied = int(np.clip(10 + 12 * quality, 0, 60))
            words = reference[:copied] + list(rng.choice(vocabulary, 30 + int(15 * quality)))
            means = {"fluency": 2 + quality, "plot_score": 1.5 + 0.8 * quality, "delight": 2.5 + 0.5 * quality}
            for rater in range(raters):
                noisy = {column: int(np.clip(np.rint(mean + rng.normal(0, 0.5)), 1, 5))
                         for column, mean in means.items()}
                rows.append({
                    "id": f"p{prompt:02d}-{system}",
                    "prompt": f"Write a story about topic {prompt}.",
                    "model": system,
                    "text": " ".join(words) + ".",
                    "human_story": " ".join(reference) + ".",
                    "annotator": f"rater{(prompt + rater) % 5}",
                    **noisy,
                })
    return pd.DataFrame(rows)


def long_layout(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per story, rater, criterion and score (a crowdsourcing export)."""
    keys = [column for column in frame.columns if column not in CRITERIA.values()]
    long = frame.reset_index().melt(id_vars=["index", *keys], value_vars=list(CRITERIA.values()),
                                    var_name="criterion", value_name="score")
    return long.sort_values("index", kind="stable").drop(columns="index").reset_index(drop=True)


def per_rater_layout(frame: pd.DataFrame) -> pd.DataFrame:
    """One row per story, a column per rater position and criterion (r1_fluency, r2_fluency, ...)."""
    frame = frame.assign(position=frame.groupby("id").cumcount() + 1)
    keys = ["id", "prompt", "model", "text", "human_story"]
    wide = frame.pivot(index=keys, columns="position", values=list(CRITERIA.values()))
    wide = wide.loc[frame.set_index(keys).index.unique()]  # the stories in their order, not sorted
    wide.columns = [f"r{position}_{column}" for column, position in wide.columns]
    return wide.reset_index()


def write_examples(folder: str | Path, seed: int = 2026) -> dict[str, Path]:
    """The example dataset (6 prompts x 4 systems x 3 raters) as wide.csv, long.csv and per_rater.jsonl."""
    folder = Path(folder)
    frame = rated_stories(seed, prompts=6, systems=SYSTEMS[:4], vocabulary=WORDS)
    paths = {name: folder / name for name in ("wide.csv", "long.csv", "per_rater.jsonl")}
    frame.to_csv(paths["wide.csv"], index=False, lineterminator="\n")
    long_layout(frame).to_csv(paths["long.csv"], index=False, lineterminator="\n")
    per_rater_layout(frame).to_json(paths["per_rater.jsonl"], orient="records", lines=True)
    return paths


CROWD_SYSTEMS = ("longform", "brief")  # planted: longform writes longer stories and is rated higher
CROWD_TASKS = {"Coherence": "coherence.csv", "Fluency": "fluency.csv", "Interestingness": "interestingness.csv"}
SHARED_WORKER = "W-ALL"  # the one worker who took all three tasks


def crowd_tasks(seed: int = 2026, prompts: int = 50, ratings: int = 3) -> dict[str, pd.DataFrame]:
    """A crowdsourcing export of the shape researchers collect: one task (file) per criterion, each with its own
    9-11 workers of whom one (SHARED_WORKER) took every task, `prompts` prompts x 2 systems, `ratings` ratings
    per story and criterion on 1-5, prompt ids but no prompt texts, no reference.

    Planted confound: longform's stories are longer and rated higher (+1 on every criterion), while within each
    system a story's length is drawn independently of its quality, so length tracks the ratings only through
    which system wrote the story."""
    rng = np.random.default_rng(seed)
    stories = []
    for prompt in range(prompts):
        for system, words, bonus in ((CROWD_SYSTEMS[0], 60, 1.0), (CROWD_SYSTEMS[1], 30, 0.0)):
            length = int(rng.integers(words - 12, words + 13))
            stories.append({"story_id": f"q{prompt:02d}-{system}", "prompt_id": f"q{prompt:02d}", "model": system,
                            "story": " ".join(rng.choice(WORDS, length)).capitalize() + ".",
                            "quality": 2.4 + bonus + rng.normal(0, 0.6)})
    tasks = {}
    for number, criterion in enumerate(CROWD_TASKS):
        workers = [SHARED_WORKER, *(f"W{number + 1}{index:02d}" for index in range(int(rng.integers(8, 11))))]
        severity = dict(zip(workers, rng.normal(0, 0.3, len(workers))))
        rows = []
        for story in stories:
            for worker in rng.choice(workers, ratings, replace=False):
                score = story["quality"] + severity[worker] + rng.normal(0, 0.5)
                rows.append({"HITId": f"H{number + 1}-{story['story_id']}", "WorkerId": worker,
                             **{f"Input.{key}": story[key] for key in ("story_id", "prompt_id", "model", "story")},
                             "Answer.rating": int(np.clip(np.rint(score), 1, 5))})
        tasks[criterion] = pd.DataFrame(rows)
    # The last task came from another export of the platform: its rating column has the task's own name.
    last = list(CROWD_TASKS)[-1]
    tasks[last] = tasks[last].rename(columns={"Answer.rating": f"Answer.{last.lower()}"})
    return tasks


def write_crowd(folder: str | Path, seed: int = 2026) -> dict[str, Path]:
    """`crowd_tasks` as one CSV per criterion under `folder` (config/examples/crowd/)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {}
    for criterion, frame in crowd_tasks(seed).items():
        paths[CROWD_TASKS[criterion]] = folder / CROWD_TASKS[criterion]
        frame.to_csv(paths[CROWD_TASKS[criterion]], index=False, lineterminator="\n")
    return paths


def writer_groups(seed: int = 2026, writers: int = 13, per_writer: int = 5) -> pd.DataFrame:
    """Thirteen writers, one prompt, five stories each, raters in five groups of two: group g rated story g of
    every writer (a workshop's design). One row per story and rater; Overall on 1-10.

    Planted: a writer's level (N(0, 1.2)) and each story's own quality (N(0, 0.6)) set the ratings; a story's
    length follows its writer's level only, so length ranks writers but not one writer's stories."""
    rng = np.random.default_rng(seed)
    level = rng.normal(0, 1.2, writers)
    rows = []
    for writer in range(writers):
        for sample in range(per_writer):
            quality = level[writer] + rng.normal(0, 0.6)
            length = int(np.clip(80 + 20 * level[writer] + rng.normal(0, 15), 20, None))
            text = " ".join(rng.choice(WORDS, length)).capitalize() + "."
            for rater in range(2):
                score = int(np.clip(np.rint(5.5 + 1.5 * quality + rng.normal(0, 1.0)), 1, 10))
                rows.append({"story": f"writer{writer + 1:02d}-{sample + 1}", "writer": f"writer{writer + 1:02d}",
                             "prompt": "plan 7", "text": text, "annotator": f"group{sample + 1}-r{rater + 1}",
                             "overall": score})
    return pd.DataFrame(rows)


def annotator_slots(seed: int = 2026, stories: int = 483) -> pd.DataFrame:
    """One group of stories, each rated by 2-5 annotators whose ids are per-story slots (annot0 .. annot4, as
    releases with a list of scores per story have them). One row per story and slot; Coherence on 1-5.

    Planted: repetition (a story that repeats its words) goes with higher coherence here, against the declared
    direction of Repetition-1 (lower is better)."""
    rng = np.random.default_rng(seed)
    rows = []
    for index in range(stories):
        quality = rng.normal(0, 1)
        pool = list(rng.choice(WORDS, int(np.clip(14 - 4 * quality + rng.normal(0, 3), 3, 30)), replace=False))
        text = " ".join(rng.choice(pool, 30)).capitalize() + "."
        for slot in range(int(rng.integers(2, 6))):
            score = int(np.clip(np.rint(3 + 0.8 * quality + rng.normal(0, 0.8)), 1, 5))
            rows.append({"id": f"s{index:03d}", "text": text, "annotator": f"annot{slot}", "coherence": score})
    return pd.DataFrame(rows)


def write_designs(folder: str | Path, seed: int = 2026) -> dict[str, Path]:
    """`writer_groups` and `annotator_slots` as groups.csv and slots.csv under `folder` (config/examples/)."""
    folder = Path(folder)
    paths = {"groups.csv": folder / "groups.csv", "slots.csv": folder / "slots.csv"}
    writer_groups(seed).to_csv(paths["groups.csv"], index=False, lineterminator="\n")
    annotator_slots(seed).to_csv(paths["slots.csv"], index=False, lineterminator="\n")
    return paths


WORKSHOP_CRITERIA = ("Plot", "Style", "Voice")
WORKSHOP_RATERS = ("A", "B")
WORKSHOP_GAPS = {("w2-3", "B", "Style"): None, ("w5-1", "B", "Plot"): "NA"}  # planted: rater B left two blank


def workshop(seed: int = 2026, writers: int = 6, per_writer: int = 4) -> pd.DataFrame:
    """A writing workshop's ratings: `writers` writers x `per_writer` stories, raters A and B each rating every
    story on Plot, Style and Voice (1-5), two of B's cells left blank (WORKSHOP_GAPS: one empty, one "NA").
    One row per story and rater. Planted: a writer's level sets the ratings and the story's length."""
    rng = np.random.default_rng(seed)
    level = rng.normal(0, 1, writers)
    rows = []
    for writer in range(writers):
        for sample in range(1, per_writer + 1):
            story = f"w{writer + 1}-{sample}"
            quality = level[writer] + rng.normal(0, 0.4)
            text = " ".join(rng.choice(WORDS, int(40 + 15 * level[writer] + rng.integers(0, 10)))).capitalize() + "."
            for rater in WORKSHOP_RATERS:
                scores = {name: int(np.clip(np.rint(3 + quality + rng.normal(0, 0.6)), 1, 5))
                          for name in WORKSHOP_CRITERIA}
                scores.update({name: WORKSHOP_GAPS[(story, rater, name)] for name in WORKSHOP_CRITERIA
                               if (story, rater, name) in WORKSHOP_GAPS})
                rows.append({"story": story, "writer": f"writer {writer + 1}", "text": text, "rater": rater, **scores})
    return pd.DataFrame(rows)


def saved_workbook(book, path: Path, cached: dict[str, float]) -> None:
    """`book` saved as a spreadsheet program saves it: each formula's value stored beside it (`cached`, by cell
    address; openpyxl writes formulas without one), and fixed times in the archive, so that the bytes follow
    from the content alone."""
    import io
    import re
    import zipfile

    buffer = io.BytesIO()
    book.save(buffer)
    formula = re.compile(rb'<c r="([A-Z]+[0-9]+)"([^>]*)><f>([^<]*)</f><v\s*/?>(?:</v>)?</c>')

    def with_value(match: re.Match) -> bytes:
        value = cached[match.group(1).decode()]
        return b'<c r="%s"%s><f>%s</f><v>%s</v></c>' % (match.group(1), match.group(2), match.group(3),
                                                          repr(float(value)).encode())

    with zipfile.ZipFile(buffer) as source, zipfile.ZipFile(path, "w") as target:
        for item in source.infolist():
            data = source.read(item.filename)
            if item.filename.startswith("xl/worksheets/"):
                data = formula.sub(with_value, data)
            if item.filename == "docProps/core.xml":  # openpyxl stamps the time of saving
                data = re.sub(rb"(<dcterms:modified[^>]*>)[^<]*", rb"\g<1>2026-01-01T00:00:00Z", data)
            target.writestr(zipfile.ZipInfo(item.filename, (1980, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)


def write_workbook(path: str | Path, seed: int = 2026) -> Path:
    """`workshop` as a shared workbook is kept (config/examples/workshop.xlsx): an "About" sheet first; on sheet
    "Ratings" a title block (rows 1-3, the title merged over A1:E1), the header on row 5 under the blocks' merged
    labels, each writer's name merged over the rows of their stories, a spacer column after the texts and after
    each block, rater A's block E:H and rater B's J:M (Plot, Style, Voice and a Total formula each), an
    "Averages" block O:Q of formulas, and a "Mean" row of formulas right under the stories. Every formula's value
    is saved with it."""
    import datetime

    import openpyxl
    from openpyxl.utils import get_column_letter

    frame = workshop(seed)
    book = openpyxl.Workbook()
    book.properties.created = book.properties.modified = datetime.datetime(2026, 1, 1)
    book.active.title = "About"
    book.active["A1"] = "Ratings of the spring workshop; see sheet Ratings."
    sheet = book.create_sheet("Ratings")
    sheet["A1"], sheet["A2"] = "Spring workshop: ratings of the stories", "Scale 1-5; a blank cell: not rated"
    sheet.merge_cells("A1:E1")
    first = {"A": 5, "B": 10, "Averages": 15}  # the blocks' first columns: E, J, O
    for label, column in first.items():
        sheet.cell(4, column, label if label == "Averages" else f"Rater {label}")
        sheet.merge_cells(start_row=4, start_column=column, end_row=4, end_column=column + 3 - (label == "Averages"))
    for column, name in enumerate(["Story", "Writer", "Text"], 1):
        sheet.cell(5, column, name)
    for rater in WORKSHOP_RATERS:
        for offset, name in enumerate([*WORKSHOP_CRITERIA, "Total"]):
            sheet.cell(5, first[rater] + offset, name)
    for offset, name in enumerate(WORKSHOP_CRITERIA):
        sheet.cell(5, first["Averages"] + offset, name)
    cached = {}
    stories = frame.drop_duplicates("story").reset_index(drop=True)
    for index, story in stories.iterrows():
        row = 6 + index
        sheet.cell(row, 1, story["story"])
        sheet.cell(row, 3, story["text"])
        given = frame[frame["story"] == story["story"]].set_index("rater")
        for rater in WORKSHOP_RATERS:
            letters = [get_column_letter(first[rater] + offset) for offset in range(len(WORKSHOP_CRITERIA))]
            for letter, name in zip(letters, WORKSHOP_CRITERIA):
                sheet[f"{letter}{row}"] = given.at[rater, name]
            total = f"{get_column_letter(first[rater] + 3)}{row}"
            sheet[total] = f"=SUM({letters[0]}{row}:{letters[-1]}{row})"
            cached[total] = pd.to_numeric(given.loc[rater, list(WORKSHOP_CRITERIA)], errors="coerce").sum()
        for offset, name in enumerate(WORKSHOP_CRITERIA):
            cell = f"{get_column_letter(first['Averages'] + offset)}{row}"
            pair = [f"{get_column_letter(first[rater] + offset)}{row}" for rater in WORKSHOP_RATERS]
            sheet[cell] = f"=AVERAGE({','.join(pair)})"
            cached[cell] = pd.to_numeric(given[name], errors="coerce").mean()
    for writer, rows in stories.groupby("writer", sort=False).groups.items():
        sheet.cell(6 + rows[0], 2, writer)
        sheet.merge_cells(start_row=6 + rows[0], start_column=2, end_row=6 + rows[-1], end_column=2)
    last, mean = 5 + len(stories), 6 + len(stories)
    sheet.cell(mean, 1, "Mean")
    for column in range(first["A"], first["Averages"] + 3):
        letter = get_column_letter(column)
        if sheet[f"{letter}5"].value is None:  # a spacer column
            continue
        sheet[f"{letter}{mean}"] = f"=AVERAGE({letter}6:{letter}{last})"
        values = [cached.get(f"{letter}{row}", sheet[f"{letter}{row}"].value) for row in range(6, last + 1)]
        cached[f"{letter}{mean}"] = pd.to_numeric(pd.Series(values), errors="coerce").mean()
    saved_workbook(book, Path(path), cached)
    return Path(path)


LEGACY_STORIES = ("w1-2", "w3-1", "w4-4")  # planted: saved as Windows-1252 by an old editor; the rest UTF-8


def write_story_folder(folder: str | Path, seed: int = 2026) -> dict[str, Path]:
    """`workshop`'s stories as a folder of text files (config/examples/stories/): one `<writer>-<n>.txt` a story,
    with Windows line ends, in UTF-8 except LEGACY_STORIES (Windows-1252), each text with a few letters beyond
    ASCII; and their ratings as ratings.csv beside the folder (story, rater, Plot, Style, Voice; WORKSHOP_GAPS
    empty), no texts in it."""
    folder = Path(folder)
    texts = folder / "stories"
    texts.mkdir(parents=True, exist_ok=True)
    frame = workshop(seed)
    for _, story in frame.drop_duplicates("story").iterrows():
        words = story["text"].split()
        text = f"“{' '.join(words[:8])}” — café {' '.join(words[8:20])}.\n{' '.join(words[20:])}\n"
        encoding = "cp1252" if story["story"] in LEGACY_STORIES else "utf-8"
        (texts / f"{story['story']}.txt").write_bytes(text.replace("\n", "\r\n").encode(encoding))
    ratings = folder / "ratings.csv"
    frame.drop(columns=["writer", "text"]).to_csv(ratings, index=False, lineterminator="\n")
    return {"stories": texts, "ratings.csv": ratings}


def nested_records(seed: int = 2026, stories: int = 30) -> dict[str, dict]:
    """A release's JSON of the kind "a dict keyed by story id": each story a title, its text, its writer, and
    per-annotator scores nested two levels down (HolisticData.scores.annot0 ... annot2, StyleData.scores the
    same), on 1-5; annotator ids are per-story slots. Planted: one null score (a gap) and a quality per writer."""
    rng = np.random.default_rng(seed)
    writers = {f"model-{letter}": level for letter, level in zip("abc", (-1.0, 0.0, 1.0))}
    records = {}
    for index in range(stories):
        writer = list(writers)[index % len(writers)]
        quality = writers[writer] + rng.normal(0, 0.5)
        words = rng.choice(WORDS, int(45 + 12 * quality + rng.integers(0, 8)))
        scores = [{f"annot{slot}": int(np.clip(np.rint(3 + quality + shift + rng.normal(0, 0.7)), 1, 5))
                   for slot in range(3)} for shift in (0.0, 0.3)]
        records[f"story-{index:02d}"] = {"Title": " ".join(words[:3]).title(), "Text": " ".join(words) + ".",
                                         "Meta": {"Writer": writer},
                                         "HolisticData": {"scores": scores[0]}, "StyleData": {"scores": scores[1]}}
    records["story-07"]["HolisticData"]["scores"]["annot1"] = None
    return records


def write_nested(path: str | Path, seed: int = 2026) -> Path:
    """`nested_records` as config/examples/nested.json."""
    import json

    Path(path).write_text(json.dumps(nested_records(seed), indent=1) + "\n")
    return Path(path)
