"""HANNA (Chhun et al., COLING 2022): 1,056 stories, 96 WritingPrompts prompts x the human story and 10 systems,
rated 1-5 by three mTurk workers on six criteria. Its files are pinned in config.yaml's `hanna:` section (the
paper's analysis reads the released per-system scores, rule normalise_hanna). Kinds: the raw annotations
(`hanna-annotations`) and the TACL 2024 stories of six LLMs, unrated (`hanna-llm`)."""

from __future__ import annotations

from storyeval.criteria import CRITERIA
from storyeval.datasets.base import Dataset, fixed
from storyeval.text import datasets as loaders

TEXTS = frozenset({"story", "prompt", "reference"})
HUMAN = "Human"  # the human stories' "system": the references of the generated ones
# Surprise (how surprising the ending is) fits no shared term: left out (storyeval.benchmark).
CRITERIA_MAP = {"Relevance": "relevance", "Coherence": "coherence", "Empathy": "empathy",
                "Engagement": "interestingness/engagement", "Complexity": "complexity"}
DESCRIPTION = ("96 WritingPrompts prompts, the human story and 10 systems' stories each, rated 1-5 by three mTurk "
               "workers on six criteria")

# HANNA's released per-system scores, read by rule normalise_hanna, not a text loader.
# The raters are mTurk workers (Chhun et al. 2022): crowd, for the alt-test's margin (untested here all the same:
# the release keeps positions, not workers).
RELEASED = Dataset(kind="hanna-released", load=None, texts=TEXTS, prompts=True, systems=True, raters=True,
                   rater_layout="position", rater_kind="crowd", criteria=tuple(CRITERIA), suffixes=(".csv",),
                   reference_system=HUMAN, criteria_map=CRITERIA_MAP, description=DESCRIPTION)
ANNOTATIONS = Dataset(kind="hanna-annotations", load=loaders.load_hanna_annotations, texts=TEXTS, prompts=True,
                      systems=True, raters=True, rater_layout="position", rater_kind="crowd", criteria=tuple(CRITERIA),
                      suffixes=(".csv",), reference_system=HUMAN, criteria_map=CRITERIA_MAP, description=DESCRIPTION)
LLM = Dataset(kind="hanna-llm", load=loaders.load_hanna_llm, texts=TEXTS, prompts=True, systems=True,
              suffixes=(".csv",), reference_system=HUMAN,
              description="HANNA's 96 prompts, the human story and six LLMs' stories each, unrated")

KINDS = {"hanna-annotations": fixed(ANNOTATIONS), "hanna-llm": fixed(LLM)}
