import pandas as pd
import pytest

from storyeval.data.hanna import read_rater_ratings, read_released_scores
from storyeval.data.registry import (
    DEGENERATE_NOTE,
    DEGENERATE_RANGE,
    build_registry,
    parse_label,
    resolve_metrics,
    slugify,
    two_digits,
)
from storyeval.errors import InputError


def test_parse_label_markers():
    info = parse_label("BaryScore-SD-0.001 Ξε")
    assert (info["label"], info["reference"], info["family"], info["direction"]) == (
        "BaryScore-SD-0.001",
        "based",
        "embedding",
        "lower",
    )
    assert info["degenerate_release"]
    info = parse_label("BLANC-Help-PS ¤Δ")
    assert (info["reference"], info["family"], info["direction"]) == ("free", "model", "higher")


def test_slugs_are_readable():
    assert slugify("ROUGE-SU* F-Score") == "rouge-su-star-f-score"
    assert slugify("ROUGE-W-1.2 Recall") == "rouge-w-1.2-recall"
    assert slugify("GPT-2 (tag)") == "gpt-2-tag"


def test_malformed_label_names_the_column():
    with pytest.raises(InputError, match="'BLEU'"):
        build_registry(["BLEU"], "f.csv")


def test_released_file_parses(released):
    assert len(released.registry) == 72
    assert len(released.stories) == 1056
    assert released.stories["system"].nunique() == 11
    assert len(released.scores) == 1056 * 72
    counts = released.registry.groupby("reference").size().to_dict()
    assert counts == {"based": 54, "free": 18}
    assert set(released.registry.loc[released.registry.direction == "lower", "label"].str.split("-").str[0]) == {
        "BaryScore",
        "DepthScore",
        "InfoLM",
        "Repetition",  # the share of repeated n-grams (docs/statistics.md, Orientation)
    }
    # spec check value: the first human story has Text length 248
    first = released.scores[(released.scores.metric == "text-length") & (released.scores.story_id == "p000-human")]
    assert first["value"].item() == pytest.approx(248)


def test_rater_ratings_reproduce_averages(hanna_mirror, released):
    ratings = read_rater_ratings(hanna_mirror / "hanna_metric_scores_llm.csv", released.human_scores)
    assert len(ratings) == 1056 * 6 * 3
    assert set(ratings["rating"].unique()) <= {1.0, 2.0, 3.0, 4.0, 5.0}


def _write(tmp_path, frame):
    path = tmp_path / "scores.csv"
    frame.to_csv(path, index=False)
    return path


def _minimal(extra: dict) -> pd.DataFrame:
    criteria = {
        name: ["[1.0, 2.0]"] for name in ["Relevance", "Coherence", "Empathy", "Surprise", "Engagement", "Complexity"]
    }
    return pd.DataFrame({"Model": ["Human"], **criteria, **extra})


def test_unknown_column_fails_naming_file_and_column(tmp_path):
    path = _write(tmp_path, _minimal({"Mystery score": ["[1.0, 2.0]"]}))
    with pytest.raises(InputError, match=r"scores\.csv.*'Mystery score'"):
        read_released_scores(path)


def test_malformed_cell_fails_naming_column(tmp_path):
    path = _write(tmp_path, _minimal({"BLEU Ξ§": ["[1.0, oops]"]}))
    with pytest.raises(InputError, match=r"'BLEU Ξ§'.*'Human'"):
        read_released_scores(path)


def test_unknown_metric_name_is_refused(released):
    assert resolve_metrics(["chrF", "bleu"], released.registry, "cfg") == ["chrf", "bleu"]
    with pytest.raises(InputError, match=r"unknown metric 'chrF\+\+'"):
        resolve_metrics(["chrF++"], released.registry, "cfg")


def test_the_degenerate_range_stated_is_the_releases(released):
    """The note every table, figure page and caption carries states the release's own extremes."""
    generated = released.stories.loc[released.stories["system"] != "Human", "story_id"]
    for slug in released.registry.loc[released.registry["degenerate_release"], "slug"]:
        values = released.scores[(released.scores["metric"] == slug) & released.scores["story_id"].isin(generated)]
        low, high = values["value"].min(), values["value"].max()
        assert (f"{low:.2g}", f"{high:.2g}") == tuple(f"{bound:.2g}" for bound in DEGENERATE_RANGE)
        assert f"{two_digits(low)} to {two_digits(high)}" in DEGENERATE_NOTE  # 1.2e-178 to 1.1e-9
    assert set(released.registry.loc[released.registry["degenerate_release"], "label"]) == {"BaryScore-SD-0.001"}


def test_the_packaged_column_order_and_headers_are_the_releases(released):
    """Computed score sets order and label their metrics as HANNA's release without reading it."""
    from storyeval.data.registry import RELEASED_ORDER, released_label

    assert tuple(released.registry["slug"]) == RELEASED_ORDER
    assert released_label(released.registry).tolist() == released.registry["column"].tolist()
