"""Every metric column's direction (which end is better), read from its definition, and config metric_directions.

The list below names each column's direction and, where it is not the obvious "a similarity or likelihood: higher",
the reason; a column added to a metric module without an entry here fails the test. The cheap string metrics are
also computed on a good and a degraded story, where the definition makes the better one clear: the better story
must score better in the declared direction.
"""

from __future__ import annotations

import pandas as pd
import pytest

from storyeval.data.registry import build_registry
from storyeval.errors import InputError
from storyeval.metrics import catalog
from storyeval.metrics.merge import merge_scores

LOWER = {  # lower is better, from the definition
    **{slug: "a Wasserstein or Sinkhorn transport cost between the story's and the reference's embeddings"
       for slug in ["baryscore-w", *(f"baryscore-sd-{eps}" for eps in ("10", "5", "1", "0.5", "0.1", "0.01",
                                                                       "0.001"))]},
    "depthscore": "a distance between the depth regions of the two texts' embeddings (0: story = reference)",
    **{slug: "the Fisher-Rao distance between masked-LM distributions (0: identical texts)"
       for slug in ("infolm-fisherrao", "infolm-r-fisherrao", "infolm-sim-fisherrao")},
    "perplexity": "exp of the mean negative log-likelihood: a fluent story is less surprising",
    **{f"repetition-{n}": "the share of repeated n-grams: a story that repeats itself less is better"
       for n in (1, 2, 3)},
}
CONVENTION = {  # "higher" by convention only: the definition orders no quality (config metric_directions may turn it)
    **{slug: "how much the story copies or leaves its prompt" for slug in
       ("coverage", "density", "novelty-1", "novelty-2", "novelty-3")},
    "compression": "prompt length / story length: length is no quality",
    "text-length": "length is no quality (and the field's best-known confound)",
}
NOT_OBVIOUS_HIGHER = {  # higher, though the name does not say so
    "moverscore": "1 - the earth mover's distance: a similarity (story = reference gives 1), not a distance",
    **{slug: "a log-likelihood of one text given the other: higher is more probable"
       for slug in ("bartscore-ps", "bartscore-sp", "bartscore-sh", "bartscore-hs")},
    **{f"storyer-aspect-{k}": "how strongly the story shows aspect k (StoryER's ratings), even sad or scary ones"
       for k in range(1, 11)},
}


def test_every_column_has_the_direction_its_definition_gives():
    declared = {slug: row[3] for slug, row in catalog.registry_rows().items()}
    expected = {slug: "lower" if slug in LOWER else "higher" for slug in declared}
    assert declared == expected
    assert set(LOWER) | set(CONVENTION) | set(NOT_OBVIOUS_HIGHER) <= set(declared)  # no stale entry
    assert catalog.conventions().keys() == CONVENTION.keys()  # the modules flag exactly these


def _texts(stories: list[str], reference: str) -> pd.DataFrame:
    return pd.DataFrame({"story_id": [f"s{k}" for k in range(len(stories))], "prompt_id": 0, "system": "x",
                         "prompt": "Write about a lighthouse.", "story": stories, "reference": reference})


REFERENCE = ("The old keeper climbed the lighthouse stairs every night. He lit the lamp, watched the dark sea, and "
             "waited for the ships that never came. One winter a small boat finally appeared on the horizon.")
# Against the reference: one word changed (good) or the reference's words reversed and half of them replaced.
CLOSE = REFERENCE.replace("small", "little")
FAR = " ".join(word if k % 2 else "banana" for k, word in enumerate(reversed(REFERENCE.split())))
# Without reference: a story, and one that repeats its phrases.
VARIED = "The keeper lit the lamp. Ships passed in the night while the gulls slept on the rocks below the tower."
REPETITIVE = "The keeper lit the lamp. The keeper lit the lamp. The keeper lit the lamp. The keeper lit the lamp."


@pytest.mark.parametrize("metric, better, worse", [
    ("bleu", CLOSE, FAR), ("chrf", CLOSE, FAR), ("rouge", CLOSE, FAR), ("textstats", VARIED, REPETITIVE),
])
def test_the_better_story_scores_better_in_the_declared_direction(metric, better, worse):
    scores = catalog.load(metric).compute(_texts([better, worse], REFERENCE))
    for slug in scores.columns:
        if slug in CONVENTION:
            continue
        good, bad = scores[slug]
        sign = -1 if catalog.direction(slug) == "lower" else 1
        assert sign * good > sign * bad, (slug, good, bad)


def test_config_overrides_a_direction_by_slug_or_label_into_both_registries(tmp_path):
    directions = catalog.resolve_directions({"Text length": "lower", "repetition-2": "higher"})
    assert directions == {"text-length": "lower", "repetition-2": "higher"}
    released = build_registry(["Text length ¤§", "Repetition-2 ¤§", "Repetition-1 ¤§"], "file.csv", directions)
    assert list(released["direction"]) == ["lower", "higher", "lower"]
    path = tmp_path / "textstats.parquet"
    pd.DataFrame({"story_id": ["a", "b"], "text-length": [3.0, 4.0], "repetition-1": [0.1, 0.2]}).to_parquet(path)
    _, computed = merge_scores([path], catalog.registry_rows(directions))
    assert dict(zip(computed["slug"], computed["direction"])) == {"text-length": "lower", "repetition-1": "lower"}


@pytest.mark.parametrize("overrides, message", [
    ({"Txt length": "lower"}, "metric_directions: unknown metric 'Txt length'; fix: use a metric column's slug"),
    ({"bleu": "down"}, "metric_directions: bleu: direction 'down'; fix: use one of higher, lower"),
])
def test_unknown_names_and_directions_are_refused_in_one_line(overrides, message):
    with pytest.raises(InputError, match=message) as error:
        catalog.resolve_directions(overrides)
    assert "\n" not in str(error.value)
