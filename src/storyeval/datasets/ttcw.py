"""TTCW, the Torrance Test of Creative Writing (Chakrabarty, Laban, Agarwal, Muresan & Wu, "Art or Artifice? Large
Language Models and the False Promise of Creativity", CHI 2024, arXiv 2309.14556): 48 short stories, 12 plots of
New Yorker stories x the New Yorker original, GPT-3.5, GPT-4 and Claude v1.3, each judged by three of ten expert
writers on 14 Yes/No tests grouped into Torrance's four dimensions; seven LLMs answered the same tests.

The files (github.com/salesforce/creativity_eval, Art_or_Artifice/, BSD-3-Clause):
- stories/ttcw_short_stories.json: 48 records (story_idx = the plot 0-11, story_id "<idx>_<author>", plot,
  story_name, content). Quirk: the 12 New Yorker stories' content is a link to newyorker.com (the authors may not
  redistribute them), so the texts are the 36 LLM stories: prompt = the plot (a one-sentence summary of the New
  Yorker story the LLMs were asked to write), systems GPT3.5, GPT4, Claude (the file's author names) on a 12 x 3
  grid; no reference text. The New Yorker stories' expert verdicts still count in the paper recipes.
- annotations/ttcw_annotations.json: 2,016 expert verdicts (story_id, expert_idx 0-9, ttcw_idx 1-14, binary_verdict
  "Yes"/"No", explanation). Quirk: its `category` is the test's name, not the Torrance dimension; the test ->
  dimension map below is the release's tests/ttcw_all_tests.json (`torrance_dimension`, printed by the authors'
  Evaluating_LLM.ipynb, section 3.1, as test_names_map) and the paper's Table 1: Fluency tests 1-5, Flexibility
  6-8, Originality 9-11, Elaboration 12-14. Each story has 3 experts, each answering all 14 tests.
- data/annotations_<judge>.jsonl: the LLM judges' free-text answers, id "story_<idx>_<author>_test<k>" (joins the
  stories' story_idx and author), for all 48 stories. Quirks: gemini-pro answers 658 of the 672 ids (the 14 absent
  ones are New Yorker stories) and 50 of its answers are "Content Blocked"; one claudev2 answer is
  "<functionality not implemented>...". storyeval reads an answer whose first word is yes or no (case-insensitive)
  and counts any other, and an absent id, as missing (not No); the authors' notebook takes Yes iff
  response.lower().startswith("yes"), so a missing answer is No there (the recipes follow the notebook).

Ratings: per expert and story, the number of tests passed (of 14) and the number passed in each dimension; a
story's score is the mean of its three experts. A judge's score: the share of the criterion's tests it passed among
those it answered, times the criterion's number of tests (so a missing answer is neither Yes nor No); none answered:
no score.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from storyeval.data.hanna import story_id
from storyeval.data.registry import REGISTRY_COLUMNS, slugify
from storyeval.datasets.base import Dataset, Printed, fixed, pinned_files
from storyeval.errors import InputError
from storyeval.text.datasets import TextDataset, finish

log = logging.getLogger(__name__)
COMMIT = "fced0ab2d3068244152d1302a8bd8e9f538440f5"
# Release name -> display label, in the order of the authors' notebook table (section 3.1).
JUDGES = {"gemini-pro": "Gemini Pro", "cgpt": "ChatGPT", "claudev2": "Claude v2", "claudev21": "Claude v2.1",
          "claudev13": "Claude v1.3", "gpt4": "GPT-4", "claude3-opus": "Claude 3 Opus"}
JUDGE_SHA256 = {
    "gemini-pro": "7ca31e6c8d32649290a222b8217cbc3a6bccc248eb5d355fa2a4d2044629a6b3",
    "cgpt": "63f86852d8ad706652ca3ab6a5b82b088ad4bbc142e67f89ff6788108c29c42e",
    "claudev2": "2b39b025f10b0878ae4aed11546e3526ee511ca28b61222c2dc5cb23d185635c",
    "claudev21": "b5b61822be47e013e6ee186234938d4ceffb0de4e7ace874e1bb208bf0aa8a08",
    "claudev13": "35bddc4d2fae76932793acf42f7ceabeff666f452ba5b002e9689b3bc02b478c",
    "gpt4": "3bf1b935e8f501a460489bf840a1f02338cb0a1d91ea6d1c769747fbd034da36",
    "claude3-opus": "984a4c420c3576e4f237c78726de22ba13e38f65611d81b83257e720fc3a0feb",
}
SOURCE = pinned_files("https://raw.githubusercontent.com/salesforce/creativity_eval", COMMIT, {
    "license": ("LICENSE", "LICENSE", "1a85e77efdcb7da31cd2bdc4a261ec58982dcdf21b7f907ad0f974fb3490d4a5"),
    "stories": ("Art_or_Artifice/stories/ttcw_short_stories.json", "ttcw_short_stories.json",
                "5ff3138ead096c50ecafc86c7be88837c96fd2d6a0d903042c0fb3ed867c2bcf"),
    "annotations": ("Art_or_Artifice/annotations/ttcw_annotations.json", "ttcw_annotations.json",
                    "f10b711378b80972ef80427d938aebea66b55e9d024d41815ec81ad67058d284"),
    "majority": ("Art_or_Artifice/annotations/ttcw_majority.json", "ttcw_majority.json",
                 "5eac1f59e3b393b3c8c276ca05137051237d745f9d512f4cb181e8b61a5e006e"),
    **{judge: (f"Art_or_Artifice/data/annotations_{judge}.jsonl", f"annotations_{judge}.jsonl", digest)
       for judge, digest in JUDGE_SHA256.items()},
})

NEW_YORKER = "NewYorker"  # the professional writers' "system": texts not released
TESTS = {1: "Narrative Ending", 2: "Understandability and Coherence", 3: "Scene vs Summary", 4: "Narrative Pacing",
         5: "Language Proficiency and Literary Devices", 6: "Emotional Flexibility", 7: "Structural Flexibility",
         8: "Perspective and Voice Flexibility", 9: "Originality in Thought", 10: "Originality in Form and Structure",
         11: "Originality in Theme and Content", 12: "Rhetorical Complexity", 13: "World Building and Setting",
         14: "Character Development"}
DIMENSIONS = {"Fluency": (1, 2, 3, 4, 5), "Flexibility": (6, 7, 8), "Originality": (9, 10, 11),
              "Elaboration": (12, 13, 14)}
TESTS_PASSED = "Tests passed"
CRITERIA = (TESTS_PASSED, *DIMENSIONS)
CRITERION_TESTS = {TESTS_PASSED: tuple(TESTS), **DIMENSIONS}
# Originality and Flexibility (its Structural Flexibility test: turns both surprising and appropriate) share the
# term of HANNA's Surprise; Elaboration (subtext, world building, character development) is HANNA's Complexity,
# "how elaborate is the story".
CRITERIA_MAP = {TESTS_PASSED: "overall", "Fluency": "fluency", "Flexibility": "interestingness/engagement",
                "Originality": "interestingness/engagement", "Elaboration": "complexity"}
JUDGE_ID = re.compile(r"story_(?P<prompt>\d+)_(?P<author>[^_]+)_test(?P<test>\d+)")
LINK = re.compile(r"https?://\S+")
STORY_KEYS = ("story_idx", "story_id", "plot", "content")
VERDICT_KEYS = ("story_id", "expert_idx", "ttcw_idx", "category", "binary_verdict")
TASK = "TTCW test prompts"  # the authors' one prompt a test (tests/ttcw_all_tests.json, full_prompt)


def records(path: str | Path, name: str, keys: Sequence[str]) -> pd.DataFrame:
    """A JSON list (or JSON Lines file) of objects as a frame; one lacking a key is one InputError."""
    text = Path(path).read_text(encoding="utf-8")
    try:
        rows = [json.loads(line) for line in text.splitlines() if line.strip()] if str(path).endswith(".jsonl") \
            else json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"dataset {name}: {path} is not valid JSON ({error}); fix: use the released file") from error
    frame = pd.DataFrame(rows)
    missing = [key for key in keys if key not in frame.columns or frame[key].isna().any()]
    if missing:
        raise InputError(f"dataset {name}: {path} has records without key {missing[0]!r}; fix: use the released file")
    return frame


def verdicts(path: str | Path, name: str) -> pd.DataFrame:
    """The expert verdicts: story (the release's id), author, worker, test, passed; checked complete."""
    frame = records(path, name, VERDICT_KEYS)
    bad = ~frame["binary_verdict"].isin(["Yes", "No"]) | ~frame["ttcw_idx"].isin(list(TESTS))
    named = frame["category"] != frame["ttcw_idx"].map(TESTS)
    if (bad | named).any():
        row = frame[bad | named].iloc[0]
        raise InputError(f"dataset {name}: {path}: story {row['story_id']} expert {row['expert_idx']} has test "
                         f"{row['ttcw_idx']!r} {row['category']!r} verdict {row['binary_verdict']!r}; fix: use the "
                         "released file (tests 1-14 as named in tests/ttcw_all_tests.json, Yes or No)")
    per_pair = frame.groupby(["story_id", "expert_idx"])["ttcw_idx"].agg(["size", "nunique"])
    incomplete = per_pair[(per_pair["size"] != len(TESTS)) | (per_pair["nunique"] != len(TESTS))]
    if len(incomplete):
        story, expert = incomplete.index[0]
        raise InputError(f"dataset {name}: {path}: expert {expert} answers {incomplete['size'].iloc[0]} tests of "
                         f"story {story}, not each of the {len(TESTS)} once; fix: use the released file")
    author = frame["story_id"].str.split("_", n=1).str[1]
    return pd.DataFrame({"story": frame["story_id"], "author": author,
                         "worker": "expert-" + frame["expert_idx"].astype(str), "test": frame["ttcw_idx"].astype(int),
                         "passed": frame["binary_verdict"].eq("Yes")})


def expert_ratings(table: pd.DataFrame) -> pd.DataFrame:
    """story, criterion, worker, rating: each expert's number of tests passed, in all and per dimension."""
    dimension = {test: criterion for criterion, tests in DIMENSIONS.items() for test in tests}
    parts = [table.assign(criterion=TESTS_PASSED), table.assign(criterion=table["test"].map(dimension))]
    counts = pd.concat(parts).groupby(["story", "criterion", "worker"], sort=False)["passed"].sum()
    return counts.rename("rating").astype(float).reset_index()


def load(paths: Sequence[str | Path], name: str = "ttcw") -> TextDataset:
    """ttcw_short_stories.json and ttcw_annotations.json -> the 36 LLM stories, their experts' ratings."""
    stories_path, annotations_path = paths
    stories = records(stories_path, name, STORY_KEYS)
    stories["author"] = stories["story_id"].str.split("_", n=1).str[1]
    if (stories["story_id"] != stories["story_idx"].astype(str) + "_" + stories["author"]).any():
        raise InputError(f"dataset {name}: {stories_path}: a story_id is not '<story_idx>_<author>'; fix: use the "
                         "released file")
    linked = stories["content"].str.strip().str.fullmatch(LINK.pattern)
    released = stories[~linked].reset_index(drop=True)
    texts = pd.DataFrame({
        "story_id": [story_id(prompt, author) for prompt, author in zip(released["story_idx"], released["author"])],
        "prompt_id": released["story_idx"].astype("int64"), "system": released["author"],
        "prompt": released["plot"], "story": released["content"],
        "reference": pd.Series([np.nan] * len(released), dtype="str")})
    table = verdicts(annotations_path, name)
    ids = dict(zip(released["story_id"], texts["story_id"]))
    ratings = expert_ratings(table[table["story"].isin(ids)])
    ratings = ratings.assign(story_id=ratings["story"].map(ids))[["story_id", "criterion", "worker", "rating"]]
    ratings = ratings.sort_values(["story_id", "criterion", "worker"]).reset_index(drop=True)
    scores = ratings.groupby(["story_id", "criterion"], sort=True)["rating"].mean().rename("score").reset_index()
    left = stories[linked]
    note = (f"{len(left)} stories of {', '.join(pd.unique(left['author']))} left out: their texts are not released "
            f"(a link only); their {int(table['story'].isin(left['story_id']).sum())} expert verdicts count in "
            "paper_recipes.csv")
    return TextDataset(name, finish(name, texts), scores, ratings, notes=(note,))


def judge_answers(path: str | Path, name: str) -> pd.DataFrame:
    """prompt_id, author, test, answer (1 Yes, 0 No, NaN: not a yes or no answer) and the raw response."""
    frame = records(path, name, ("id", "response"))
    parts = frame["id"].str.extract(JUDGE_ID.pattern)
    if parts.isna().any(axis=None) or frame["id"].duplicated().any():
        bad = frame.loc[parts.isna().any(axis=1) | frame["id"].duplicated(), "id"].iloc[0]
        raise InputError(f"dataset {name}: {path}: id {bad!r} is repeated or not 'story_<idx>_<author>_test<k>'; "
                         "fix: use the released file")
    first = frame["response"].str.lower().str.extract(r"^\W*(\w+)")[0]
    return pd.DataFrame({"prompt_id": parts["prompt"].astype(int), "author": parts["author"],
                         "test": parts["test"].astype(int), "answer": first.map({"yes": 1.0, "no": 0.0}),
                         "response": frame["response"]})


def judge_column(judge: str, criterion: str) -> tuple[str, str]:
    """Slug and label of a judge's released column for one criterion: gpt-4-fluency, "GPT-4 fluency"."""
    return f"{slugify(JUDGES[judge])}-{slugify(criterion)}", f"{JUDGES[judge]} {criterion.lower()}"


def released(paths: Sequence[str | Path], name: str, texts: pd.DataFrame):
    """The seven LLM judges' answers -> per story and criterion the tests passed (scaled over the answered ones);
    registry: one column per judge and criterion, with its criterion and its missing answers on these stories."""
    ids = {(prompt, system): story for story, prompt, system in
           zip(texts["story_id"], texts["prompt_id"], texts["system"])}
    frames, rows = [], []
    for judge, path in zip(JUDGES, paths):
        answers = judge_answers(path, name)
        answers["story_id"] = [ids.get(key) for key in zip(answers["prompt_id"], answers["author"])]
        unknown = answers["story_id"].isna() & (answers["author"] != NEW_YORKER)
        if unknown.any():
            row = answers[unknown].iloc[0]
            raise InputError(f"dataset {name}: {path} answers story {row['prompt_id']} of {row['author']!r}, which the "
                             "stories file lacks; fix: use the released files of one commit")
        grid = pd.MultiIndex.from_product([texts["story_id"], list(TESTS)], names=["story_id", "test"])
        answered = answers.dropna(subset=["story_id"]).set_index(["story_id", "test"])["answer"].reindex(grid)
        unread = answers.loc[answers["answer"].isna() & answers["story_id"].notna(), "response"]
        log.info("%s: judge %s: %d of %d answers on its stories missing (%d absent, %d neither yes nor no%s)", name,
                 judge, answered.isna().sum(), len(grid), len(grid) - answers["story_id"].notna().sum(),
                 answers["story_id"].notna().sum() - answered.notna().sum(),
                 f", e.g. {unread.iloc[0][:40]!r}" if len(unread) else "")
        for criterion, tests in CRITERION_TESTS.items():
            chosen = answered[answered.index.get_level_values("test").isin(tests)]
            value = chosen.groupby(level="story_id", sort=False).mean() * len(tests)
            slug, label = judge_column(judge, criterion)
            frames.append(pd.DataFrame({"story_id": value.index, "metric": slug, "value": value.to_numpy()}))
            rows.append({"slug": slug, "label": label, "column": f"{judge} {criterion}", "reference": "free",
                         "family": "llm-judge", "direction": "higher", "degenerate_release": False,
                         "judge": JUDGES[judge], "criterion": criterion, "task": TASK,
                         "missing": int(chosen.isna().sum())})
    registry = pd.DataFrame(rows).assign(order=range(len(rows)))
    scores = pd.concat(frames, ignore_index=True).dropna(subset=["value"])
    return scores.reset_index(drop=True), registry[[*REGISTRY_COLUMNS, "judge", "criterion", "task", "missing"]]


def fleiss_kappa(table: pd.DataFrame) -> tuple[float, float]:
    """(Krippendorff's nominal alpha, Fleiss' kappa) of one test's verdicts (story, worker, passed), three experts a
    story. Alpha from the krippendorff package; kappa from it by the exact identity of complete data with m raters
    a unit: D_o is Fleiss' 1 - P_bar and D_e = n / (n - 1) (1 - P_e) over the n = units x m values (Krippendorff
    2011, "Computing Krippendorff's Alpha-Reliability", nominal case), so kappa = 1 - (1 - alpha) n / (n - 1).
    statsmodels' fleiss_kappa is the usual library and is not a dependency here."""
    import krippendorff

    matrix = table.pivot(index="worker", columns="story", values="passed").astype(float).to_numpy()
    alpha = float(krippendorff.alpha(reliability_data=matrix, level_of_measurement="nominal"))
    n = len(table)
    return alpha, 1 - (1 - alpha) * n / (n - 1)


def majority(table: pd.DataFrame) -> pd.Series:
    """1 where most of a story's experts passed the test (the notebook's Counter.most_common(1) of 3 verdicts)."""
    return table.groupby(["story", "test"])["passed"].mean().gt(0.5).astype(int)


def authors_predictions(path: str | Path, name: str, index: pd.MultiIndex) -> tuple[pd.Series, int]:
    """The notebook's parse (section 3.1): 1 iff response.lower().startswith("yes"), an absent id 0; and the
    number of ids found (its N_found)."""
    frame = records(path, name, ("id", "response"))
    found = dict(zip(frame["id"], frame["response"].str.lower().str.startswith("yes").astype(int)))
    keys = [f"story_{story}_test{test}" for story, test in index]
    return pd.Series([found.get(key, 0) for key in keys], index=index), sum(key in found for key in keys)


def recipes(paths: Sequence[str | Path], name: str = "ttcw") -> pd.DataFrame:
    """The authors' numbers: each judge against the expert majority over the 48 x 14 items (Evaluating_LLM.ipynb,
    section 3.1: balanced accuracy, precision, recall, F1, Pearson of the binary labels), its story-level Pearson
    of tests passed (the notebook's figure titles), the experts' agreement per test (the paper's Fleiss' kappa,
    and Krippendorff's nominal alpha) and the pass rates per writer (majority label and every expert verdict)."""
    from sklearn.metrics import balanced_accuracy_score, f1_score, precision_score, recall_score

    annotations, *judge_paths = paths
    table = verdicts(annotations, name)
    labels = majority(table)
    rows = []
    notebook = "Evaluating_LLM.ipynb 3.1: judge (Yes iff answer starts with yes; missing = No) vs expert majority"
    for judge, path in zip(JUDGES, judge_paths):
        predictions, found = authors_predictions(path, name, labels.index)
        measures = {"balanced accuracy": balanced_accuracy_score, "precision": precision_score,
                    "recall": recall_score, "f1": f1_score,
                    "pearson": lambda y, p: float(np.corrcoef(y, p)[0, 1])}
        rows += [(f"{judge} {measure}", float(score(labels, predictions)), notebook)
                 for measure, score in measures.items()]
        rows.append((f"{judge} answers found", float(found), notebook))
        per_story = pd.DataFrame({"human": labels, "judge": predictions}).groupby(level="story").sum()
        rows.append((f"{judge} story-level pearson", float(np.corrcoef(per_story["human"], per_story["judge"])[0, 1]),
                     "Evaluating_LLM.ipynb figure titles: tests passed per story, judge vs expert majority"))
    for test, test_name in TESTS.items():
        alpha, kappa = fleiss_kappa(table[table["test"] == test])
        rows.append((f"test {test} {test_name} fleiss kappa", kappa, "Fleiss' kappa of the 3 experts a story "
                     "(from krippendorff's nominal alpha, exact identity)"))
        rows.append((f"test {test} {test_name} krippendorff alpha", alpha, "krippendorff nominal alpha"))
    rates = {"majority": labels.groupby(table.groupby(["story", "test"])["author"].first()).mean(),
             "all verdicts": table.groupby("author")["passed"].mean()}
    for how, rate in rates.items():
        rows += [(f"{writer} pass rate ({how})", float(value), f"share of tests passed, {how}")
                 for writer, value in rate.items()]
        rows += [(f"{NEW_YORKER}/{writer} pass-rate ratio ({how})", float(rate[NEW_YORKER] / value),
                  f"New Yorker's share of tests passed over the writer's, {how}")
                 for writer, value in rate.items() if writer != NEW_YORKER]
    return pd.DataFrame(rows, columns=["item", "value", "recipe"])


NOTEBOOK = "authors' Evaluating_LLM.ipynb (creativity_eval@fced0ab), section 3.1, output of its first code cell"
NOTEBOOK_TABLE = {  # model: balanced_accuracy, precision, recall, f1, corr as the notebook prints them (2 d.p.)
    "gemini-pro": (0.46, 0.32, 0.83, 0.46, -0.12), "cgpt": (0.49, 0.33, 0.66, 0.44, -0.02),
    "claudev2": (0.50, 0.34, 0.79, 0.47, -0.00), "claudev21": (0.52, 0.35, 0.86, 0.50, 0.06),
    "claudev13": (0.53, 0.36, 0.73, 0.48, 0.06), "gpt4": (0.54, 0.36, 0.85, 0.51, 0.10),
    "claude3-opus": (0.58, 0.39, 0.83, 0.53, 0.18),
}
NOTE_TABLE = ("the paper's LLM-judge table (Table 9, per the notebook's comment) and its Fleiss' kappa per test "
              "could not be read offline; this is the notebook's March 2024 table (with Claude 3 Opus and Gemini "
              "Pro), which the notebook says roughly corresponds to Table 9's Average row")
PAPER = "Chakrabarty et al. 2024 (TTCW, CHI)"
PRINTED = (
    *(Printed(PAPER, NOTEBOOK, f"{JUDGES[judge]} vs expert majority, {measure}, 672 items", value,
              "paper_recipes.csv", {"item": f"{judge} {measure}"}, note=NOTE_TABLE, reference="notebook")
      for judge, values in NOTEBOOK_TABLE.items()
      for measure, value in zip(("balanced accuracy", "precision", "recall", "f1", "pearson"), values)),
    Printed(PAPER, "abstract, p. 1", "LLM stories pass 3-10X fewer TTCW tests: lower end (Claude)", 3,
            "paper_recipes.csv", {"item": f"{NEW_YORKER}/Claude pass-rate ratio (all verdicts)"},
            note="printed as the range 3-10X; the ratio of shares of tests passed over every expert verdict, the "
                 "smallest of the three LLMs (GPT-4's is 3.05); by majority labels the ratios are 3.9-38",
            printed_range=(3, 10)),
    Printed(PAPER, "abstract, p. 1", "LLM stories pass 3-10X fewer TTCW tests: upper end (GPT-3.5)", 10,
            "paper_recipes.csv", {"item": f"{NEW_YORKER}/GPT3.5 pass-rate ratio (all verdicts)"},
            note="printed as the range 3-10X; the ratio of shares of tests passed over every expert verdict, the "
                 "largest of the three LLMs", printed_range=(3, 10)),
)

TTCW = Dataset(kind="ttcw", load=load, texts=frozenset({"story", "prompt"}), prompts=True, systems=True,
               raters=True, rater_kind="expert", criteria=CRITERIA, suffixes=(".json",), criteria_map=CRITERIA_MAP,
               source="ttcw",
               inputs=("stories", "annotations"), released=released, released_inputs=tuple(JUDGES),
               recipes=recipes, recipe_inputs=("annotations", *JUDGES), printed=PRINTED,
               description="12 New Yorker plots x GPT-3.5, GPT-4 and Claude stories (the New Yorker texts are not "
                           "released), 14 Yes/No Torrance tests answered by 3 expert writers each and 7 LLM judges",
               licence="BSD-3-Clause (salesforce/creativity_eval)")

KINDS = {"ttcw": fixed(TTCW)}
