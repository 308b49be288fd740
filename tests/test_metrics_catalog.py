"""The catalog: score columns are the slugs of HANNA's released labels; modules keep the interface."""

import inspect
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from storyeval.data.registry import slugify
from storyeval.errors import InputError
from storyeval.metrics import catalog

from conftest import REPO


def tiny_table():
    texts = pd.DataFrame({"story_id": ["a", "b"], "prompt_id": [0, 1], "system": ["x", "x"],
                          "prompt": ["A knight meets a dragon.", "Write about rain."],
                          "story": ["The knight met the dragon and they talked.", "Rain fell all night on the town."],
                          "reference": ["A dragon and a knight became friends.", "It rained on the town."]})
    texts.attrs["dataset"] = "tiny"
    return texts


def test_declared_columns_agree_with_hanna_release(released):
    """A column HANNA released is declared as HANNA labelled it (slug, label, family, reference, direction), by a
    module whose resource fits its family: string-based columns model-free, embedding- and model-based ones with
    a model. Every released column is computed by some module; columns HANNA did not release are free."""
    rows = released.registry.set_index("slug")
    assert set(rows.index) <= set(catalog.registry_rows())  # every column HANNA released is computed by some module
    for entry in catalog.CATALOG.values():
        for slug, column in entry.columns.items():
            if slug not in rows.index:
                continue
            assert (column.label, column.reference, column.family, column.direction) == tuple(
                rows.loc[slug, ["label", "reference", "family", "direction"]]), slug
            assert slugify(column.label) == slug
            assert (entry.resource is None) == (rows.loc[slug, "family"] == "string"), (entry.module, slug)


def test_a_metric_is_one_module(tmp_path, monkeypatch):
    """A module of the package that declares NAME and COLUMNS is in the catalog, with its needs and resource."""
    import storyeval.metrics

    # A name no real metric takes: a contributor following docs/contributing.md adds `wordcount` itself.
    (tmp_path / "catalog_probe.py").write_text(
        'from storyeval.metrics.base import columns\nNAME = "catalogprobe"\nNEEDS = frozenset()\n'
        'COLUMNS = columns("string", "free", "Catalog probe")\n'
        'def compute(texts, *, lowercase: bool = False):\n    raise NotImplementedError\n')
    monkeypatch.setattr(storyeval.metrics, "__path__", [*storyeval.metrics.__path__, str(tmp_path)])
    found = catalog.discover()
    assert found["catalogprobe"].columns["catalog-probe"].label == "Catalog probe"
    assert found["catalogprobe"].needs == frozenset()
    assert set(found) - {"catalogprobe"} == set(catalog.CATALOG)
    monkeypatch.delitem(sys.modules, "storyeval.metrics.catalog_probe")


def test_defaults_are_written_once():
    """signature() takes compute()'s defaults; config.yaml sets only what differs (worker processes)."""
    for name in catalog.CATALOG:
        module = catalog.load(name)
        assert all(p.default is p.empty for p in inspect.signature(module.signature).parameters.values())
    assert catalog.defaults("chrf") == {"char_order": 6, "word_order": 0, "beta": 2}
    assert catalog.defaults("baryscore")["idf"] == "pooled"  # story = reference scores 0, as the release
    config = yaml.safe_load((Path(__file__).parents[1] / "config.yaml").read_text())
    for name, params in config["metric_params"].items():
        assert set(params) == {"processes"}, f"metric_params.{name} repeats a library default"
    assert catalog.load("chrf").signature()["parameters"] == catalog.defaults("chrf")


def test_directions_come_from_the_modules():
    assert catalog.direction("baryscore-sd-0.1") == "lower" and catalog.direction("bleu") == "higher"
    assert catalog.direction("summaqa") == "higher"  # released, computed by no module


def test_catalog_imports_no_heavy_library():
    """The workflow imports every metric module at start-up: torch, numba, transformers, spaCy, scipy wait."""
    code = ("import sys, storyeval.metrics.catalog; "
            "print(sorted(m for m in ('torch', 'numba', 'transformers', 'spacy', 'scipy', 'sacrebleu', 'nltk', 'ot') "
            "if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


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
    if entry.resource:  # neural: scored with tiny models and caches in their own test files
        assert list(compute.parameters)[1] in {"cache", "model", "embeddings", "model_file"}
        return
    scores = module.compute(tiny_table())
    assert list(scores.columns) == list(entry.columns) and list(scores.index) == ["a", "b"]
    assert scores.index.name == "story_id" and np.isfinite(scores.to_numpy()).all()
    info = module.signature()
    json.dumps(info)
    assert info["metric"] == name and isinstance(info["versions"], dict)


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


def test_metric_page_table_lists_hannas_72_columns_as_the_tool_writes_it(released):
    """docs/metrics.md's metric table is tools/metric_table.py's output: every released column once, in HANNA's
    order."""
    import importlib.util

    path = Path(__file__).parents[1] / "tools" / "metric_table.py"
    spec = importlib.util.spec_from_file_location("metric_table", path)
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    table = tool.readme_table((path.parents[1] / "docs/metrics.md").read_text(encoding="utf-8"))
    rows = [line.split(" | ") for line in table.splitlines() if line.startswith("| ") and line[2].isdigit()]
    assert [row[1] for row in rows] == list(released.registry["label"]) and len(rows) == 72
    expected = tool.markdown_table(released.registry, tool.read_config("config.yaml"),
                                   tool.read_config("config/paper.yaml"))
    assert table == expected, ("docs/metrics.md's metric table is stale; fix: python tools/metric_table.py --write "
                               "docs/metrics.md")


def test_parameter_table_covers_every_parameter_and_is_the_schemas():
    """storyeval.parameters gives each parameter a user can set a type and range: every keyword of each metric's
    compute() but what the workflow fills (the model or cache it reads, pinned files), and every judge setting;
    the config schema holds the same fragments, so config and API refuse the same values."""
    from storyeval.judges.rate import Settings
    from storyeval.parameters import JUDGE, METRICS, metric_parameters

    schema = yaml.safe_load((REPO / "workflow/schemas/config.schema.yaml").read_text())["properties"]
    for name, entry in catalog.CATALOG.items():
        filled = {entry.resource[0] if entry.resource else None, *entry.pinned}
        assert set(metric_parameters(name)) == catalog.parameters(name) - filled, name
        if name in METRICS:  # built in: the schema holds the same; an added module declares its PARAMETERS
            assert schema["metric_params"]["properties"][name]["properties"] == METRICS[name], name
    assert set(METRICS) <= set(catalog.CATALOG) and set(METRICS) == set(schema["metric_params"]["properties"])

    def rules(fragment: dict) -> dict:
        return {key: value for key, value in fragment.items() if key not in ("default", "description")}

    from storyeval.metrics.blanc import Settings as BlancOptions

    assert set(METRICS["blanc"]["options"]["properties"]) == set(BlancOptions.__dataclass_fields__)
    assert set(JUDGE) == set(Settings.__dataclass_fields__)
    assert {key: rules(schema["judges"]["properties"][key]) for key in JUDGE} == JUDGE
