"""The benchmark's shared vocabulary of criteria: coherence, fluency, relevance, interestingness/engagement,
empathy, complexity, overall, and which criterion of which dataset each term groups (storyeval.benchmark). Apart
from the benchmark's statistics, so that planning a run (storyeval.workflow.benchmark) imports no scipy."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

import pandas as pd

# The shared vocabulary: term -> what the criteria grouped under it rate.
TERMS = {
    "coherence": "the story's events follow from one another (coherence, logical consistency)",
    "fluency": "the sentences read well (grammar, readability, language)",
    "relevance": "the story fits its prompt",
    "interestingness/engagement": "the reader is interested, wants to read on (interestingness, engagement)",
    "empathy": "the reader understands or shares the characters' emotions",
    "complexity": "the story's plot and characters are elaborate",
    "overall": "one overall judgment of quality",
}
# The default map, by criterion name (normalised: lower case, runs of spaces, '_' and '-' as one space). Only names
# whose definitions in their papers fit a term are mapped; a facet no term covers stays unmapped (kept under its
# own name). Decisions:
# - logicality (DeltaScore, Xie et al. 2023: "the story is logically consistent") -> coherence: the same property
#   as HANNA's Coherence ("the story makes sense"); both DeltaScore criteria then stand in the coherence group as
#   two cells of their own.
# - relatedness (DeltaScore: "the story relates to the title") -> relevance (HANNA: "how well the story matches its
#   prompt").
# - interestingness (DeltaScore) and engagement (HANNA, PDS) -> interestingness/engagement.
# - narrative complexity (PDS, Harel-Canada et al. 2024) -> complexity (HANNA's Complexity).
# - reasonable (UNION, Guan & Huang 2020: a binary "is the story reasonable" vote), StoryER's Overall (Chen et al.
#   2022) and TTCW's count of passed tests (Chakrabarty et al. 2024) -> overall.
# - TTCW's Fluency category (Torrance fluency: understandability, pacing, language proficiency) -> fluency.
# Unmapped on purpose: HANNA's Surprise (an unexpected ending, no other dataset rates it), PDS's authenticity,
# emotion provoking (evoking the reader's own emotion, not understanding the characters') and human likeness,
# TTCW's flexibility, originality and elaboration (Torrance categories no other dataset rates).
DEFAULT_MAP = {
    "coherence": "coherence", "logicality": "coherence",
    "fluency": "fluency",
    "relevance": "relevance", "relatedness": "relevance",
    "engagement": "interestingness/engagement", "interestingness": "interestingness/engagement",
    "empathy": "empathy",
    "complexity": "complexity", "narrative complexity": "complexity",
    "overall": "overall", "reasonable": "overall", "tests passed": "overall",
}
TERM_SOURCES = ("config", "dataset", "default", "unmapped")  # where a criterion's term comes from


def normalised(name: str) -> str:
    """A criterion's name as the default map keys it: `Narrative_Complexity` -> `narrative complexity`."""
    return re.sub(r"[\s_\-]+", " ", str(name).strip().lower())


def criterion_term(criterion: str, override: Mapping[str, str] | None = None,
                   dataset_map: Mapping[str, str] | None = None) -> tuple[str, str]:
    """(term, source) of one criterion: the config's override (`benchmark.criteria_map.<dataset>`) first, then the
    dataset kind's own `criteria_map`, then DEFAULT_MAP by name (case-insensitive), else the criterion's own name
    with source "unmapped". Overrides and dataset maps are matched by the exact criterion name."""
    for source, mapping in (("config", override), ("dataset", dataset_map)):
        if mapping and criterion in mapping:
            return str(mapping[criterion]), source
    term = DEFAULT_MAP.get(normalised(criterion))
    return (term, "default") if term else (str(criterion), "unmapped")


def criteria_terms(criteria: Mapping[str, Sequence[str]], overrides: Mapping[str, Mapping[str, str]] | None = None,
                   dataset_maps: Mapping[str, Mapping[str, str]] | None = None) -> pd.DataFrame:
    """dataset, criterion, term, term_source (config, dataset, default, unmapped) of each dataset's criteria
    (`criteria`: dataset -> its criteria; `overrides`, `dataset_maps`: dataset -> {criterion: term})."""
    rows = [(dataset, criterion, *criterion_term(criterion, (overrides or {}).get(dataset),
                                                 (dataset_maps or {}).get(dataset)))
            for dataset, names in criteria.items() for criterion in names]
    return pd.DataFrame(rows, columns=["dataset", "criterion", "term", "term_source"])
