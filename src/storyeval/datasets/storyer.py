"""StoryER (Chen et al., EMNLP 2022): WP200 and SCARY200, stories with one averaged human preference score in
[0, 1] (8 raters), no prompt, system or reference. Files pinned in config.yaml's `storyer:` section."""

from __future__ import annotations

from storyeval.datasets.base import Dataset, fixed
from storyeval.text import datasets as loaders

STORYER = Dataset(kind="storyer", load=loaders.load_storyer, texts=frozenset({"story"}),
                  criteria=(loaders.STORYER_CRITERION,), suffixes=(".pkl",),
                  criteria_map={loaders.STORYER_CRITERION: "overall"},
                  description="200 stories with one averaged human preference score in [0, 1] (8 raters)")

KINDS = {"storyer": fixed(STORYER)}
