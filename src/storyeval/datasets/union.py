"""UNION (Guan and Huang, "UNION: An Unreferenced Metric for Evaluating Open-ended Story Generation", EMNLP 2020):
generated story continuations, 400 for ROCStories and 200 for WritingPrompts, each judged reasonable (1) or not (0)
by seven annotators, with the outputs of the ten metrics the paper correlates with those judgements (its Tab. 5).
Files of github.com/thu-coai/UNION at commit b43a6db, under Data/<corpus>/:

- ant_data/ant_data.txt: `id ||| story ||| seven 0/1 labels`, one generated story a line. The id is a line number
  of reference*.txt; it may join several ids with `///`, the first being that line (the authors' utils.py
  get_score; no line of the pinned files does). The story is the leading context followed by the generated
  continuation: the context is reference_ipt.txt's line, the continuation what follows it (the authors slice
  `story[len(context):]`, as `continuation` does). The text there matches the context in all 600 stories, except
  in one WritingPrompts story (id 145), where the curly apostrophe ’ reads as '鈥' (its UTF-8 bytes E2 80 read as
  GBK, the third byte lost); five WritingPrompts continuations (ids 121, 124, 135, 154, 276) hold the same '鈥'
  for ’, “ or ” (the byte is lost, so which one cannot be told): kept as released, the released metrics scored
  them so. In one ROCStories story (id 366) the continuation follows the context with no space ("party !she");
  cleaning strips it.
- ant_data/reference_ipt.txt, reference_opt.txt: the human story's leading context (storyeval's prompt) and its
  continuation (the reference), by line number; reference.txt (both joined) is not read.
- ant_data/ant_data_all.txt (ROCStories): the same stories with an error type per annotator instead of the label
  (0 reasonable, 1 repeated plots, 2 poor coherence, 3 conflicting logic, 4 chaotic scenes, 5 others). Its type 0
  falls exactly where ant_data.txt's label is 1, slot by slot: the seven label positions are the same seven slots
  in both files. The loader checks that and says how many stories at least one annotator gave each error type
  (the authors' correlation.py prints the same counts). WritingPrompts' copy equals ant_data.txt (README).
- metric_output/<metric>.txt: one score a line in the order of ant_data.txt (BLEU, BLEURT, MoverScore, RUBER's
  referenced, unreferenced and hybrid scores, perplexity, the discriminator of Kannan and Vinyals 2017, UNION and
  UNION without its reconstruction task). The README: they "replicate the correlation in Table 5", and Tab. 5
  shows minus perplexity (raw perplexity here, direction lower: storyeval's signed r is the printed one negated).
  ROCStories' BLEU, MoverScore and RUBER-ref are scaled to [0, 1] in the release.

The stories have no systems and no prompt grid: they form one group, correlated over all stories at story level.
The human score is the mean of the seven labels (the share of annotators who judged the story reasonable), as
correlation.py computes it. The README and the code do not say whether the same seven people rated every story,
so the ratings name judge slots r1..r7. The repository has no licence: the files are fetched from the pinned commit
and never redistributed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from pathlib import Path

import numpy as np
import pandas as pd

from storyeval.data.csvfile import decode_utf8
from storyeval.data.registry import REGISTRY_COLUMNS
from storyeval.datasets.base import Dataset, Printed, pinned_files
from storyeval.errors import InputError
from storyeval.limits import check_lines
from storyeval.text.datasets import TextDataset, finish

BASE_URL = "https://raw.githubusercontent.com/thu-coai/UNION"
COMMIT = "b43a6db9cdeec85f867a3a3b8671da53c99a1b99"
CORPORA = {"roc": "ROCStories", "wp": "WritingPrompts"}
CRITERION = "Reasonable"
SLOTS = 7  # annotators per story
ERROR_TYPES = ("reasonable", "repeated plots", "poor coherence", "conflicting logic", "chaotic scenes", "others")
MOJIBAKE = "鈥"  # the first two UTF-8 bytes of ’ “ ” read as GBK; the third byte is lost
QUOTES = "‘’“”"
TEXT_FILES = ("ant_data", "reference_ipt", "reference_opt")  # the loader's inputs, in order

# The released metrics, in correlation.py's order (referenced; unreferenced; hybrid): slug, file stem, label,
# reference ("based": it reads the human continuation), family, direction.
METRICS = (
    ("bleu", "bleu", "BLEU", "based", "string", "higher"),
    ("moverscore", "moverscore", "MoverScore", "based", "embedding", "higher"),
    ("ruber-ref", "ruber_ref_score", "RUBER-r", "based", "embedding", "higher"),
    ("perplexity", "ppl", "Perplexity", "free", "model", "lower"),
    ("ruber-unref", "ruber_unref_score", "RUBER-u", "free", "model", "higher"),
    ("dis", "dis", "Discriminator", "free", "model", "higher"),
    ("union", "union", "UNION", "free", "model", "higher"),
    ("union-recon", "union_recon", "UNION w/o Recon", "free", "model", "higher"),
    ("ruber", "ruber_score", "RUBER", "based", "model", "higher"),
    ("bleurt", "bleurt", "BLEURT", "based", "model", "higher"),
)

DIGESTS = {  # corpus -> file under Data/<corpus folder>/ -> sha256
    "roc": {
        "ant_data/ant_data.txt": "cb586843d8ddde0f40081a3e1416787f181dc814e5167541fece94789d7151ac",
        "ant_data/ant_data_all.txt": "62d4e2ccbfc2e6efe87ff3b926440c3d64f0eadbe45828614bf9a079c52cce9f",
        "ant_data/reference_ipt.txt": "33fbc4bb5b98491bc3e54ca9bb59ddc95f7adb4a5fb039802c9c74df07bb88fe",
        "ant_data/reference_opt.txt": "f0c70ac5f12358251fa8785f7746ddcec4b9a30ecf084ab5a9b214cfd0413510",
        "metric_output/bleu.txt": "5c655a43ba1c216a1955bd82fc9de4e81a203175791ebc52c6c6c3e5b44e016d",
        "metric_output/bleurt.txt": "7ea31f9a586dbb1b75093710d147b0e0ae8606a176e6b8af15c4cec5214801ec",
        "metric_output/dis.txt": "9589fa056c7bfe40509e72b0129be0201611e8c0127272ae2a86f82b0fbd765c",
        "metric_output/moverscore.txt": "1df2d628b42d4235620aba330f38b300e798db3e397a03af272a43f51bcb933a",
        "metric_output/ppl.txt": "4b130e48b459578b774a33d3cd54e196eeb63b3fbe307fc6097a6d3572844b94",
        "metric_output/ruber_ref_score.txt": "c2889abc97ed90b382ad10af5c4f6f7c2f454af544307ec4d14086753c09e038",
        "metric_output/ruber_score.txt": "2cfd03c95cd95f81302dc091f9743aeb12067e2153a04cb29663a733256390a7",
        "metric_output/ruber_unref_score.txt": "1292ba3fc3750c02b42b329bd7d41c8b17474385b00486cef9428f5805c8a42f",
        "metric_output/union.txt": "d6ef953b187bae6ddbfdce2f26b3d8e73daa829377d6317ea3e96b76388c71e6",
        "metric_output/union_recon.txt": "ae543774d182408dac11a72b0666d061540fea39360442c1986bc8697cf5f8aa",
    },
    "wp": {
        "ant_data/ant_data.txt": "0549ac0e6ae999d8a2cc512abba4697f683740f9fe9f205f2f9ca698ec337a65",
        "ant_data/reference_ipt.txt": "3e8e0ace59a5c8bc794c94d56fbb976b2c15d298d5a96f3a37b18a8c1907cf34",
        "ant_data/reference_opt.txt": "95870451e51b638728532dbc6fe3ef873684fc84bde78de9a55dcb84a5c23da5",
        "metric_output/bleu.txt": "d586260c8aeb1bd6cf7a70bd1326e42f85fec32589470ebd5f32fe50da39bbda",
        "metric_output/bleurt.txt": "14793e735b5a56cc82ce5b9c809e5438abff519f8484f110129d0daceedcb6fb",
        "metric_output/dis.txt": "cbea48aa287c8f44ab74d55c015f2074062df6dfd2e461e7d860a089716985a8",
        "metric_output/moverscore.txt": "95c5bf938d1192b3cd2ca681ef380b2b2106a66077b59e7eacd36e1bb2150450",
        "metric_output/ppl.txt": "0323f13333ef7e71da75c29bfb0e35b4f0763379b16b4ceb721c9de80ed388e1",
        "metric_output/ruber_ref_score.txt": "54ba926582a077479d5055eb8904ef99ba9a3001a1b32df1b5f1d773cd3f57bd",
        "metric_output/ruber_score.txt": "bf3201d6581a72d00793bbc3cbf4245340da25567c58ef8f3b216fb9730596f4",
        "metric_output/ruber_unref_score.txt": "5fe6f6fe20c46bc1fce0c4cfb429c1bb792bbaa4ef817d2558a2649e9ac03cfe",
        "metric_output/union.txt": "7a9716e6ac9b33933af856c5c9d225826eded301577d6ddca2719ae669606b0f",
        "metric_output/union_recon.txt": "f582348a3592be097104fcb298a751c6257ff1cd1b339ca7f4b6511663cfe31f",
    },
}


def file_key(corpus: str, stem: str) -> str:
    """The SOURCE key of a corpus's file: roc-ant_data, wp-bleu."""
    return f"{corpus}-{stem}"


SOURCE = pinned_files(BASE_URL, COMMIT, {
    file_key(corpus, Path(path).stem): (f"Data/{CORPORA[corpus]}/{path}", f"{CORPORA[corpus]}_{path.replace('/', '_')}",
                                        digest)
    for corpus, files in DIGESTS.items() for path, digest in files.items()
})

# The authors' correlation.py (thu-coai/UNION@b43a6db, run unmodified on these files; its printout, 4 decimals):
# Pearson r, Spearman rho, Kendall tau of each metric with the mean label over all stories. Tab. 5 of the paper
# holds these correlations (README); its page could not be read offline, so the printout stands in for it.
ORACLE = {
    "roc": {"bleu": (0.0299, 0.0320, 0.0231), "bleurt": (0.2310, 0.2353, 0.1679), "dis": (0.0406, 0.0633, 0.0456),
            "moverscore": (0.1538, 0.1535, 0.1093), "perplexity": (-0.2464, -0.2295, -0.1650),
            "ruber": (0.1412, 0.1395, 0.1015), "ruber-ref": (0.0448, 0.0517, 0.0380),
            "ruber-unref": (0.1477, 0.1434, 0.1018), "union": (0.3687, 0.4599, 0.3386),
            "union-recon": (0.3101, 0.4027, 0.2927)},
    "wp": {"bleu": (0.1213, 0.0941, 0.0704), "bleurt": (0.2229, 0.1602, 0.1180), "dis": (0.0627, -0.0234, -0.0180),
           "moverscore": (0.1613, 0.1450, 0.1031), "perplexity": (0.0705, 0.0479, 0.0345),
           "ruber": (0.1676, 0.1664, 0.1194), "ruber-ref": (0.1502, 0.1357, 0.0986),
           "ruber-unref": (0.1613, 0.1605, 0.1157), "union": (0.3663, 0.4493, 0.3293),
           "union-recon": (0.3292, 0.3786, 0.2836)},
}
PAPER = "Guan and Huang 2020 (UNION), EMNLP"
ORACLE_TABLE = ("authors' correlation.py on the released files (thu-coai/UNION@b43a6db), standing in for Tab. 5, "
                "which could not be read offline")
COEFFICIENTS = ("pearson", "spearman", "kendall")
PERPLEXITY_NOTE = ("correlation.py correlates raw perplexity (lower is better), as storyeval's signed r does; the "
                   "README says Tab. 5 prints minus perplexity, i.e. this number negated")


def read_lines(path: str | Path, label: str) -> list[str]:
    """A released text file's lines, each stripped (the authors' utils.read), a final line break ignored."""
    raw = Path(path).read_bytes()
    check_lines(raw, label)
    lines = decode_utf8(raw, label).split("\n")
    return [line.strip() for line in (lines[:-1] if lines[-1] == "" else lines)]


def parse_ant_data(path: str | Path, name: str) -> list[tuple[list[int], str, list[str]]]:
    """(ids, story, seven labels) of each line of ant_data.txt or ant_data_all.txt."""
    rows = []
    for number, line in enumerate(read_lines(path, f"dataset {name}: {path}"), start=1):
        fields = line.split("|||")
        ids = fields[0].strip().split("///") if len(fields) == 3 else []
        labels = fields[2].split() if len(fields) == 3 else []
        if not (ids and all(part.strip().isdigit() for part in ids) and len(labels) == SLOTS):
            raise InputError(f"dataset {name}: {path} line {number} is not 'id ||| story ||| {SLOTS} labels'; fix: "
                             "fetch the released file again")
        rows.append(([int(part) for part in ids], fields[1].strip(), labels))
    return rows


def story_id(corpus: str, ids: Sequence[int]) -> str:
    """roc-0151; joined ids (`151///152`) give roc-0151_0152 (reference*.txt have under 10,000 lines)."""
    return f"{corpus}-" + "_".join(f"{number:04d}" for number in ids)


def continuation(story: str, context: str) -> str | None:
    """What follows the leading context in `story` (the authors' `story[len(context):]`), or None where the story
    does not start with it; a '鈥' (MOJIBAKE) in place of a curly quote of the context still matches."""
    head = story[:len(context)]
    if len(head) < len(context) or any(a != b and not (a == MOJIBAKE and b in QUOTES) for a, b in zip(head, context)):
        return None
    return story[len(context):]


def error_note(ant_data: list, path: str | Path, name: str) -> str:
    """How many stories at least one annotator gave each error type (ant_data_all.txt), after checking that its
    type 0 lies where ant_data.txt's label is 1, slot by slot."""
    typed = parse_ant_data(path, name)
    if [(ids, story) for ids, story, _ in typed] != [(ids, story) for ids, story, _ in ant_data]:
        raise InputError(f"dataset {name}: {path} does not list ant_data.txt's stories in its order; fix: fetch the "
                         "released files again")
    types = np.array([[int(label) for label in labels] for *_, labels in typed])
    reasonable = np.array([[label == "1" for label in labels] for *_, labels in ant_data])
    if not np.array_equal(types == 0, reasonable) or types.max() >= len(ERROR_TYPES):
        raise InputError(f"dataset {name}: {path}: error type 0 (reasonable) does not fall where ant_data.txt's "
                         "label is 1; fix: fetch the released files again")
    counts = ", ".join(f"{kind} {int((types == code).any(axis=1).sum())}"
                       for code, kind in enumerate(ERROR_TYPES) if code)
    return f"stories with each error type from at least one annotator (ant_data_all.txt): {counts}"


def load(paths: Sequence[str | Path], name: str, corpus: str) -> TextDataset:
    """ant_data.txt, reference_ipt.txt, reference_opt.txt (and ROCStories' ant_data_all.txt) of one corpus: the
    generated continuations, their leading contexts (prompt), the human continuations (reference), the mean label
    (criterion Reasonable) and the seven labels (judge slots r1..r7)."""
    ant_path, context_path, reference_path, *typed = paths
    rows = parse_ant_data(ant_path, name)
    contexts = read_lines(context_path, f"dataset {name}: {context_path}")
    references = read_lines(reference_path, f"dataset {name}: {reference_path}")
    texts, ratings = [], []
    for number, (ids, story, labels) in enumerate(rows, start=1):
        first = ids[0]
        if first >= min(len(contexts), len(references)):
            raise InputError(f"dataset {name}: {ant_path} line {number}: id {first} is past the {len(contexts)} lines "
                             f"of {context_path}; fix: fetch the released files again")
        generated = continuation(story, contexts[first])
        if generated is None:
            raise InputError(f"dataset {name}: {ant_path} line {number}: the story does not start with its leading "
                             f"context, line {first + 1} of {context_path}; fix: fetch the released files again")
        if set(labels) - {"0", "1"}:
            raise InputError(f"dataset {name}: {ant_path} line {number}: labels {' '.join(labels)} are not 0/1; fix: "
                             "fetch the released files again")
        sid = story_id(corpus, ids)
        texts.append({"story_id": sid, "prompt": contexts[first], "story": generated, "reference": references[first]})
        ratings += [{"story_id": sid, "criterion": CRITERION, "worker": f"r{slot + 1}", "rating": float(label)}
                    for slot, label in enumerate(labels)]
    frame = pd.DataFrame(texts).assign(prompt_id=pd.array([pd.NA] * len(texts), dtype="Int64"),
                                       system=pd.Series(np.nan, index=range(len(texts)), dtype="str"))
    long = pd.DataFrame(ratings)
    scores = long.groupby(["story_id", "criterion"], sort=True)["rating"].mean().rename("score").reset_index()
    notes = (error_note(rows, typed[0], name),) if typed else ()
    return TextDataset(name, finish(name, frame), scores, long.sort_values(["story_id", "worker"], ignore_index=True),
                       notes)


def released(paths: Sequence[str | Path], name: str, texts: pd.DataFrame, corpus: str):
    """(scores: story_id, metric, value; registry) of the ten metric_output files (after ant_data.txt, whose line
    order they follow), on the stories of `texts`."""
    ant_path, *metric_paths = paths
    ids = [story_id(corpus, row[0]) for row in parse_ant_data(ant_path, name)]
    frames = []
    for (slug, *_), path in zip(METRICS, metric_paths):
        lines = read_lines(path, f"dataset {name}: {path}")
        if len(lines) != len(ids):
            raise InputError(f"dataset {name}: {path} has {len(lines)} lines for the {len(ids)} stories of {ant_path}; "
                             "fix: fetch the released files again")
        try:
            values = [float(line) for line in lines]
        except ValueError as error:
            raise InputError(f"dataset {name}: {path}: {error}; fix: fetch the released files again") from error
        frames.append(pd.DataFrame({"story_id": ids, "metric": slug, "value": values}))
    scores = pd.concat(frames, ignore_index=True)
    registry = pd.DataFrame([{"slug": slug, "label": label, "column": f"{stem}.txt", "reference": reference,
                              "family": family, "direction": direction, "degenerate_release": False, "order": order}
                             for order, (slug, stem, label, reference, family, direction) in enumerate(METRICS)])
    return scores[scores["story_id"].isin(texts["story_id"])].reset_index(drop=True), registry[REGISTRY_COLUMNS]


def printed(corpus: str) -> tuple[Printed, ...]:
    """correlation.py's r, rho and tau of each released metric with the mean label (ORACLE) and where storyeval's
    lie: released/correlations.csv, story level over all stories."""
    return tuple(
        Printed(paper=PAPER, table=ORACLE_TABLE, item=f"{label} {coefficient} with {CRITERION}, {CORPORA[corpus]}",
                value=value, result="released/correlations.csv",
                where={"kind": "metric_criterion", "level": "story", "coefficient": coefficient, "x": slug,
                       "y": CRITERION},
                column="r", note=PERPLEXITY_NOTE if slug == "perplexity" else "", reference="code")
        for slug, _, label, *_ in METRICS for coefficient, value in zip(COEFFICIENTS, ORACLE[corpus][slug]))


def dataset(entry: Mapping, name: str) -> Dataset:
    """The corpus the entry names (`corpus: roc` or `wp`) as a Dataset."""
    corpus = entry.get("corpus")
    if corpus not in CORPORA:
        raise InputError(f"datasets.{name}.corpus: {corpus!r}; fix: use one of {', '.join(CORPORA)} (UNION's "
                         f"{' and '.join(CORPORA.values())})")
    typed = (file_key(corpus, "ant_data_all"),) if file_key(corpus, "ant_data_all") in SOURCE["files"] else ()
    return Dataset(
        kind="union", load=partial(load, corpus=corpus), texts=frozenset({"story", "prompt", "reference"}),
        raters=True, rater_layout="position", criteria=(CRITERION,), suffixes=(".txt",),
        criteria_map={CRITERION: "overall"}, source="union",
        inputs=tuple(file_key(corpus, stem) for stem in TEXT_FILES) + typed,
        released=partial(released, corpus=corpus),
        released_inputs=(file_key(corpus, "ant_data"), *(file_key(corpus, stem) for _, stem, *_ in METRICS)),
        printed=printed(corpus),
        description=(f"{'400' if corpus == 'roc' else '200'} generated {CORPORA[corpus]} continuations of a human "
                     "leading context, each judged reasonable or not by seven annotators (score: the share who "
                     "judged it reasonable)"),
        licence="none: the repository has no licence; fetched from the pinned commit, never redistributed")


KINDS = {"union": dataset}
