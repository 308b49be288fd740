"""The catalog: score columns are the slugs of HANNA's released labels; modules keep the interface."""

import inspect
import json

import numpy as np
import pandas as pd
import pytest

from storyeval.data.registry import slugify
from storyeval.errors import InputError
from storyeval.metrics import catalog


def tiny_table():
    texts = pd.DataFrame({"story_id": ["a", "b"], "prompt_id": [0, 1], "system": ["x", "x"],
                          "prompt": ["A knight meets a dragon.", "Write about rain."],
                          "story": ["The knight met the dragon and they talked.", "Rain fell all night on the town."],
                          "reference": ["A dragon and a knight became friends.", "It rained on the town."]})
    texts.attrs["dataset"] = "tiny"
    return texts


def test_columns_are_slugs_of_released_labels(released):
    labels = set(released.registry["label"])
    for name, entry in catalog.CATALOG.items():
        for column, label in entry.released.items():
            assert slugify(label) == column
            assert label in labels, f"{name}: {label!r} is not a HANNA label"
    covered = {label for entry in catalog.CATALOG.values() if entry.resource is None for label in entry.released.values()}
    string_metrics = set(released.registry.loc[released.registry["family"] == "string", "label"])
    assert covered == string_metrics  # the model-free entries: every string-based HANNA metric, nothing else
    neural = {label for entry in catalog.CATALOG.values() if entry.resource for label in entry.released.values()}
    assert neural and not neural & string_metrics


@pytest.mark.parametrize("name", sorted(catalog.CATALOG))
def test_modules_keep_the_interface(name):
    if name == "meteor":
        pytest.importorskip("nltk")
        from nltk.corpus import wordnet

        try:
            wordnet.ensure_loaded()
        except LookupError:
            pytest.skip("WordNet is not installed for nltk: run tools/install_wordnet.sh")
    module = catalog.load(name)
    entry = catalog.entry(name)
    assert module.NAME == name and module.NEEDS == entry.needs
    compute, signature = inspect.signature(module.compute), inspect.signature(module.signature)
    assert not any(p.kind == p.VAR_KEYWORD for p in compute.parameters.values())
    assert list(compute.parameters)[1:] == list(signature.parameters)
    assert [p.default for p in compute.parameters.values()][1:] == [p.default for p in signature.parameters.values()]
    if entry.resource:  # neural: scored with tiny models and caches in their own test files
        assert list(compute.parameters)[1] in {"cache", "model", "embeddings", "model_file"}
        return
    scores = module.compute(tiny_table())
    assert list(scores.columns) == list(entry.released) and list(scores.index) == ["a", "b"]
    assert scores.index.name == "story_id" and np.isfinite(scores.to_numpy()).all()
    info = module.signature()
    json.dumps(info)
    assert info["metric"] == name and info["versions"]


def test_unknown_metric_and_applicability():
    with pytest.raises(InputError, match="unknown text metric 'bleurt'"):
        catalog.load("bleurt")
    assert catalog.applicable("datastats", {"story", "prompt"}) and not catalog.applicable("rouge", {"story"})


def test_module_sources_follow_storyeval_imports_through_helpers():
    """A metric's rerun trigger covers the helpers under it: BaryScore's transport solver, not chrF's."""
    from storyeval.sources import module_sources

    baryscore, chrf = (module_sources(catalog.entry(name).module) for name in ("baryscore", "chrf"))
    assert {"storyeval.metrics.baryscore", "storyeval.neural.ot", "storyeval.neural.simplex",
            "storyeval.neural.embeddings", "storyeval.metrics.base"} <= set(baryscore)
    assert "storyeval.metrics.chrf" in chrf and not any(module.startswith("storyeval.neural") for module in chrf)
    assert all(path.endswith(".py") for path in baryscore.values())
