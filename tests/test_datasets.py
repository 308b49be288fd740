"""The datasets package: kinds discovered from their modules, Dataset built from named fields, each dataset's own
reference system reaching the generic rules, a release's files fetched under their mirror names."""

import dataclasses

import pytest
from test_workflow_plan import checked, in_repository  # noqa: F401 (an autouse fixture)

from storyeval.datasets import KINDS, SOURCES, describe
from storyeval.datasets.base import Dataset, pinned_files
from storyeval.workflow.run import Run
from storyeval.workflow.sources import Pinned, local_name


def test_every_kind_comes_from_a_module_that_declares_it():
    assert {"hanna-annotations", "hanna-llm", "storyer", "table"} <= set(KINDS)
    assert describe({"kind": "storyer"}, "wp200").criteria_map == {"Overall": "overall"}
    with pytest.raises(TypeError):  # named fields only: no five positional booleans
        Dataset("x", None, frozenset({"story"}), True, True, True, ())


def test_a_dataset_s_reference_system_is_its_own():
    run = Run(checked())
    assert run.reference_system("hanna", "released") == run.config["hanna"]["reference_system"] == "Human"
    assert run.reference_system("hanna-llm") == "Human"
    assert run.reference_system("wp200") is None  # StoryER's stories hold no human system
    crowd = Run(checked("config/examples/crowd.yaml"))
    assert crowd.reference_system("crowd") is None  # not HANNA's "Human"
    named = Run(checked("config/examples/crowd.yaml", **{"datasets.crowd.reference_system": "longform"}))
    assert named.reference_system("crowd") == "longform"


def test_a_release_s_files_keep_their_mirror_names():
    # Two corpora's files share a repository name (ant_data.txt): the local name tells them apart.
    source = pinned_files("https://example.org/repo", "c" * 40, {
        "roc": ("Data/ROCStories/ant_data/ant_data.txt", "ROCStories_ant_data_ant_data.txt", "0" * 64),
        "wp": ("Data/WritingPrompts/ant_data/ant_data.txt", "WritingPrompts_ant_data_ant_data.txt", "1" * 64)})
    assert [local_name(entry) for entry in source["files"].values()] == [
        "ROCStories_ant_data_ant_data.txt", "WritingPrompts_ant_data_ant_data.txt"]
    pinned = Pinned(checked())
    pinned.sources["corpus"] = source
    assert pinned.path("corpus", "wp") == "resources/corpus/WritingPrompts_ant_data_ant_data.txt"
    commit = "c" * 40
    assert pinned.url("corpus", "wp") == f"https://example.org/repo/{commit}/Data/WritingPrompts/ant_data/ant_data.txt"
    assert pinned.entry("corpus", "ROCStories_ant_data_ant_data.txt")["key"] == "roc"
    assert set(SOURCES) <= set(Pinned(checked()).sources)


def test_fields_are_replaced_by_name():
    storyer = describe({"kind": "storyer"}, "wp200")
    assert dataclasses.replace(storyer, raters=True).raters and not storyer.raters
