"""Metric registry parsed from HANNA's released column labels.

A released label is ``<display name> <reference marker><family marker>``,
e.g. ``BLEU Ξ§`` or ``SUPERT-PS ¤ε``: Ξ reference-based, ¤ reference-free;
§ string-based, ε embedding-based, Δ model-based.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import pandas as pd

from storyeval.errors import InputError
from storyeval.names import slugify  # noqa: F401  (re-exported: the registry's slugs)

REFERENCE_MARKERS = {"Ξ": "based", "¤": "free"}
FAMILY_MARKERS = {"§": "string", "ε": "embedding", "Δ": "model"}
# The plain-Sinkhorn release of this column underflowed: flagged, its label marked † wherever it is shown.
DEGENERATE_RELEASED = {"BaryScore-SD-0.001"}
# Its smallest and largest released value over the generated stories, which every analysis compares (a human
# story's reach 1.9e-5; the analyses leave them out). tests/test_hanna_data.py reads them from the release.
DEGENERATE_RANGE = (1.2e-178, 1.1e-9)
DEGENERATE_MARK = "†"


def two_digits(value: float) -> str:
    """1.2e-178, 1.1e-9: two significant digits, the exponent without padding (as the captions write it)."""
    return f"{value:.2g}".replace("e-0", "e-").replace("e+0", "e+")


# Why HANNA's Tab. 3 is out of reach of the released file (the audit's explanation and Tab. 3's caption).
RELEASED_RATERS = ("the paper's judges are mTurk workers from the raw annotation file, which is not available here; "
                   "the released file has rater positions 1-3 only")
DEGENERATE_NOTE = (
    f"{DEGENERATE_MARK} released values degenerate (plain Sinkhorn underflow: {two_digits(DEGENERATE_RANGE[0])} to "
    f"{two_digits(DEGENERATE_RANGE[1])} over the generated stories): numerical noise, not a measurement"
)

# The order of HANNA's 72 released metric columns (hanna_metric_scores.csv), the papers' order: computed score
# sets list their metrics in it (then metrics HANNA did not release, in catalog order).
RELEASED_ORDER = (
    "bleu", *(f"rouge-{n}-{part}" for n in ("1", "2", "3", "4", "l", "w-1.2", "s-star", "su-star")
              for part in ("recall", "precision", "f-score")),
    "meteor", "chrf", "cider", *(f"rouge-we-3-{part}" for part in ("recall", "precision", "f-score")),
    "bertscore-precision", "bertscore-recall", "bertscore-f1", "moverscore", "depthscore", "baryscore-w",
    *(f"baryscore-sd-{eps}" for eps in ("10", "5", "1", "0.5", "0.1", "0.01", "0.001")),
    "s3-pyramid", "s3-responsiveness", "summaqa", "infolm-fisherrao", "infolm-r-fisherrao", "infolm-sim-fisherrao",
    "bartscore-sh", "bartscore-hs", "supert-golden", "blanc-golden", "coverage", "density", "compression",
    "text-length", *(f"{name}-{n}" for name in ("novelty", "repetition") for n in (1, 2, 3)),
    "supert-ps", "supert-ss", "blanc-tune-ps", "blanc-help-ps", "blanc-tune-ss", "blanc-help-ss",
    "bartscore-ps", "bartscore-sp",
)
LABEL_PATTERN = re.compile(r"^(?P<name>\S(?:.*\S)?) (?P<ref>[Ξ¤])(?P<family>[§εΔ])$")
REGISTRY_COLUMNS = ["slug", "label", "column", "reference", "family", "direction", "degenerate_release", "order"]


def released_label(registry: pd.DataFrame) -> pd.Series:
    """The column header HANNA's release would give each row (`BLEU Ξ§`): its label and two markers."""
    markers = {value: key for key, value in {**REFERENCE_MARKERS, **FAMILY_MARKERS}.items()}
    return registry["label"] + " " + registry["reference"].map(markers) + registry["family"].map(markers)


def is_metric_label(column: str) -> bool:
    return LABEL_PATTERN.match(column) is not None


def parse_label(column: str, source: str = "<labels>", directions: Mapping[str, str] | None = None) -> dict:
    match = LABEL_PATTERN.match(column)
    if match is None:
        raise InputError(
            f"{source}: column {column!r} is not a metric label '<name> <Ξ|¤><§|ε|Δ>' nor a known "
            "criterion or rater column; fix: rename it to that pattern or remove it"
        )
    from storyeval.metrics.catalog import direction  # each metric module declares its columns' direction

    name = match["name"]
    return {
        "slug": slugify(name),
        "label": name,
        "column": column,
        "reference": REFERENCE_MARKERS[match["ref"]],
        "family": FAMILY_MARKERS[match["family"]],
        "direction": direction(slugify(name), directions),
        "degenerate_release": name in DEGENERATE_RELEASED,
    }


def build_registry(columns: list[str], source: str = "<labels>", directions: Mapping[str, str] | None = None
                   ) -> pd.DataFrame:
    """The registry of released metric labels; `directions` (slug -> direction: config metric_directions,
    catalog.resolve_directions) overrides the directions the metric modules declare."""
    rows = [parse_label(column, source, directions) for column in columns]
    registry = pd.DataFrame(rows, columns=REGISTRY_COLUMNS[:-1])
    registry["order"] = range(len(registry))
    duplicated = registry["slug"][registry["slug"].duplicated()]
    if not duplicated.empty:
        raise InputError(f"{source}: two metric columns share the slug {duplicated.iloc[0]!r}; fix: rename one")
    return registry


def marked(registry: pd.DataFrame) -> pd.DataFrame:
    """The registry with each degenerate release's label marked †: how figures and tables name it."""
    if "degenerate_release" not in registry:
        return registry
    flagged = registry["degenerate_release"].astype(bool)
    return registry.assign(label=registry["label"].where(~flagged, registry["label"] + DEGENERATE_MARK))


def marked_labels(registry: pd.DataFrame) -> dict[str, str]:
    """slug -> display label, a degenerate release's marked †."""
    return dict(zip(registry["slug"], marked(registry)["label"]))


def present_metrics(names: list[str], registry: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(the `names` (slugs or labels) a score set's registry holds, the others): config lists name metrics
    that a score set may not have computed."""
    known = set(registry["slug"]) | set(registry["label"])
    return [name for name in names if name in known], [name for name in names if name not in known]


def resolve_metrics(names: list[str], registry: pd.DataFrame, where: str) -> list[str]:
    """Map slugs or display labels to slugs; an unknown name stops the run with the fix."""
    by_label = dict(zip(registry["label"], registry["slug"]))
    known = set(registry["slug"])
    slugs = []
    for name in names:
        slug = name if name in known else by_label.get(name)
        if slug is None:
            raise InputError(
                f"{where}: unknown metric {name!r}; fix: use a slug or label from the registry, "
                f"e.g. {', '.join(sorted(known)[:6])} ..."
            )
        slugs.append(slug)
    return slugs
