"""UNION (Guan and Huang 2020): the loader and the released metric outputs on the real mirrored files."""

import shutil

import numpy as np
import pandas as pd
import pytest

from storyeval.datasets import SOURCES, describe, released_scores
from storyeval.datasets.union import CRITERION, METRICS
from storyeval.errors import InputError
from storyeval.limits import check_draws
from storyeval.stats.correlation import correlate

from conftest import mirror_or_skip

FILES = SOURCES["union"]["files"]


@pytest.fixture(scope="module")
def mirror():
    return mirror_or_skip("union", "ROCStories_ant_data_ant_data.txt", "UNION")


def entry(corpus):
    return {"kind": "union", "corpus": corpus}


def paths(mirror, keys):
    return [mirror / FILES[key]["local"] for key in keys]


@pytest.fixture(scope="module")
def corpora(mirror):
    """corpus -> (TextDataset, released scores, registry)."""
    found = {}
    for corpus in ("roc", "wp"):
        declared = describe(entry(corpus), f"union-{corpus}")
        data = declared.load(paths(mirror, declared.inputs), f"union-{corpus}")
        found[corpus] = (data, *released_scores(entry(corpus), f"union-{corpus}",
                                                paths(mirror, declared.released_inputs), data.texts))
    return found


def raw_lines(mirror, name):
    return (mirror / name).read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize(("corpus", "stories"), [("roc", 400), ("wp", 200)])
def test_counts_and_shape(corpora, corpus, stories):
    data, scores, registry = corpora[corpus]
    texts = data.texts
    assert len(texts) == stories and texts["story_id"].str.startswith(f"{corpus}-").all()
    assert texts["system"].isna().all() and texts["prompt_id"].isna().all()  # one group: no systems, no prompts
    assert texts[["prompt", "story", "reference"]].notna().all().all()
    assert list(data.human_scores["criterion"].unique()) == [CRITERION] and len(data.human_scores) == stories
    assert sorted(data.ratings["worker"].unique()) == [f"r{slot}" for slot in range(1, 8)]
    assert len(data.ratings) == 7 * stories and set(data.ratings["rating"]) == {0.0, 1.0}
    assert len(scores) == 10 * stories and set(scores["story_id"]) == set(texts["story_id"])
    assert list(registry["slug"]) == [slug for slug, *_ in METRICS]


def test_story_is_the_text_after_its_leading_context(mirror, corpora):
    """Line 1 of ant_data.txt (id 151): its story is reference_ipt.txt's line 152 and the continuation; its score
    the mean of its seven labels; its reference reference_opt.txt's line 152."""
    data = corpora["roc"][0]
    ids, story, labels = raw_lines(mirror, "ROCStories_ant_data_ant_data.txt")[0].split("|||")
    context = raw_lines(mirror, "ROCStories_ant_data_reference_ipt.txt")[int(ids)].strip()
    row = data.texts.iloc[0]
    assert row["story_id"] == "roc-0151" and row["prompt"] == context
    assert f"{row['prompt']} {row['story']}" == " ".join(story.split())
    assert row["reference"] == raw_lines(mirror, "ROCStories_ant_data_reference_opt.txt")[151].strip()
    score = data.human_scores.set_index("story_id").loc["roc-0151", "score"]
    assert score == pytest.approx(np.mean([float(label) for label in labels.split()]))


def test_quirks_no_space_after_the_context_and_gbk_mojibake(corpora):
    roc, wp = corpora["roc"][0].texts.set_index("story_id"), corpora["wp"][0].texts.set_index("story_id")
    assert roc.loc["roc-0366", "prompt"].endswith("party !") and roc.loc["roc-0366", "story"].startswith("she was")
    # wp id 145: the story's copy of the context reads ’ as 鈥; the prompt is reference_ipt.txt's, intact
    assert "’" in wp.loc["wp-0145", "prompt"] and "鈥" not in wp.loc["wp-0145", "story"]
    assert sorted(wp.index[wp["story"].str.contains("鈥")]) == ["wp-0121", "wp-0124", "wp-0135", "wp-0154", "wp-0276"]


def test_error_types_match_the_labels_slot_by_slot(corpora):
    """ROCStories' ant_data_all.txt: the stories each error type was given by an annotator at least once; the
    authors' correlation.py prints 168, 214, 257, 192 and 49 on these files (thu-coai/UNION@b43a6db)."""
    (note,) = corpora["roc"][0].notes
    assert note.endswith("repeated plots 168, poor coherence 214, conflicting logic 257, chaotic scenes 192, "
                         "others 49")
    assert corpora["wp"][0].notes == ()  # WritingPrompts' ant_data_all.txt is ant_data.txt


def test_joined_ids_index_the_first_and_a_wrong_context_is_refused(mirror, tmp_path):
    declared = describe(entry("roc"), "union-roc")
    files = [shutil.copy(path, tmp_path) for path in paths(mirror, declared.inputs[:3])]
    lines = raw_lines(mirror, "ROCStories_ant_data_ant_data.txt")
    (tmp_path / "ROCStories_ant_data_ant_data.txt").write_text(
        "\n".join(["151///152" + lines[0][3:], *lines[1:]]) + "\n", encoding="utf-8")
    texts = declared.load(files, "union-roc").texts
    assert texts["story_id"].iloc[0] == "roc-0151_0152"
    assert texts["prompt"].iloc[0].startswith("we were looking for something fun")  # line 152: id 151's context
    (tmp_path / "ROCStories_ant_data_ant_data.txt").write_text(
        "\n".join(["152" + lines[0][3:], *lines[1:]]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match=r"line 1: the story does not start with its leading context, line 153"):
        declared.load(files, "union-roc")


def test_released_values_and_registry(mirror, corpora):
    _, scores, registry = corpora["roc"]
    ppl = scores[scores["metric"] == "perplexity"].set_index("story_id")["value"]
    assert ppl["roc-0151"] == float(raw_lines(mirror, "ROCStories_metric_output_ppl.txt")[0])
    rows = registry.set_index("slug")
    assert rows.loc["perplexity", "direction"] == "lower" and (rows.drop("perplexity")["direction"] == "higher").all()
    assert set(rows.index[rows["reference"] == "based"]) == {"bleu", "moverscore", "ruber-ref", "ruber", "bleurt"}


def test_a_short_metric_file_is_refused(mirror, corpora, tmp_path):
    declared = describe(entry("wp"), "union-wp")
    files = [shutil.copy(path, tmp_path) for path in paths(mirror, declared.released_inputs)]
    bleu = tmp_path / "WritingPrompts_metric_output_bleu.txt"
    bleu.write_text("\n".join(bleu.read_text().splitlines()[:-1]) + "\n")
    with pytest.raises(InputError, match="bleu.txt has 199 lines for the 200 stories"):
        released_scores(entry("wp"), "union-wp", files, corpora["wp"][0].texts)


@pytest.mark.parametrize("corpus", ["roc", "wp"])
def test_story_level_correlations_reproduce_correlation_py(corpora, corpus):
    """storyeval's correlation over all stories (one group) against the numbers the authors' correlation.py
    prints on the released files (the dataset's `printed`); UNION on ROCStories: 0.3687, 0.4599, 0.3386."""
    data, scores, _ = corpora[corpus]
    wide = scores.pivot(index="story_id", columns="metric", values="value")
    human = data.human_scores.set_index("story_id").loc[wide.index, ["score"]]
    found = {(slug, coefficient): correlate(wide[[slug]].to_numpy(), human.to_numpy(), coefficient)[0, 0]
             for slug in wide.columns for coefficient in ("pearson", "spearman", "kendall")}
    printed = describe(entry(corpus), f"union-{corpus}").printed
    assert len(printed) == 30
    for number in printed:
        assert round(found[(number.where["x"], number.where["coefficient"])], 4) == pytest.approx(number.value)
    if corpus == "roc":
        assert [round(found[("union", c)], 4) for c in ("pearson", "spearman", "kendall")] == [0.3687, 0.4599, 0.3386]


def test_unknown_corpus_is_one_error():
    with pytest.raises(InputError, match=r"datasets.union-x.corpus: 'x'; fix: use one of roc, wp"):
        describe({"kind": "union", "corpus": "x"}, "union-x")
    with pytest.raises(InputError, match=r"datasets.union-y.corpus: None"):
        describe({"kind": "union"}, "union-y")


def test_human_scores_are_sevenths(corpora):
    scores = pd.concat([corpora[corpus][0].human_scores["score"] for corpus in ("roc", "wp")])
    assert np.allclose(scores * 7, np.round(scores * 7))


def test_chunked_draws_of_one_large_group_fit():
    """PERM-BOTH and BOOT-BOTH hold no story-pair arrays: 1,000 draws of 400 stories x 40 columns fit into 4 GiB,
    which the paired bootstrap's 80,000 pairs a draw would not."""
    check_draws(1000, 1, 400, 40, "meta.n_permutations", memory=4 * 2**30, pairs=False)
    with pytest.raises(InputError, match="meta.n_permutations: 1,000 draws of 1 prompts x 400 systems"):
        check_draws(1000, 1, 400, 40, "meta.n_permutations", memory=4 * 2**30)
