"""The pinned third-party files, by source: config hanna, storyer and s3, the built-in dataset kinds' releases
(storyeval.datasets.SOURCES: union, deltascore, pds, ttcw), and "datasets", the user's datasets given by URL.
Rule fetch downloads each (local mirrors first) into data.resources_dir/<source>/."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from storyeval.datasets import SOURCES, describe
from storyeval.errors import InputError


def local_name(entry: Mapping) -> str:
    """The file name of a pinned file's local copy and of its mirror copy: `local`, else the path's last part."""
    return entry.get("local") or Path(entry["path"]).name


class Pinned:
    def __init__(self, config: Mapping):
        self.config = config
        self.resources = config["data"]["resources_dir"]
        self.sources = {
            **SOURCES,
            "hanna": config["hanna"],
            "storyer": config["storyer"],
            "s3": config["s3"],
            "datasets": {
                "files": {
                    key: {"path": key + Path(part["url"]).suffix, "url": part["url"], "sha256": part["sha256"],
                          **({"size": part["size"]} if "size" in part else {})}
                    for name in config["datasets"]
                    for key, part in self.table_parts(name)
                    if "url" in part
                }
            },
        }

    def files(self, source: str) -> Mapping[str, Mapping]:
        return self.sources[source]["files"]

    def mirrors(self, source: str) -> list[str]:
        return self.config["data"]["mirrors"].get(source, [])

    def path(self, source: str, key: str) -> str:
        """Local path of a pinned file (fetched by rule fetch)."""
        return f"{self.resources}/{source}/{local_name(self.files(source)[key])}"

    def url(self, source: str, key: str) -> str:
        entry = self.files(source)[key]
        return entry.get("url") or f"{self.sources[source]['base_url']}/{entry['commit']}/{entry['path']}"

    def entry(self, source: str, file: str) -> dict:
        """What rule fetch needs of the pinned file called `file`: its key, URL, sha256 and the mirrors."""
        for key, entry in self.files(source).items():
            if local_name(entry) == file:
                return {"key": key, "url": self.url(source, key), "sha256": entry["sha256"],
                        "mirrors": self.mirrors(source), **({"size": entry["size"]} if entry.get("size") else {})}
        raise InputError(f"no pinned {source} file is called {file!r}; fix: add it to config.yaml")

    def table_parts(self, dataset: str) -> list[tuple[str, Mapping]]:
        """(key under source "datasets", entry) of each file of a dataset: the entry itself, or each part of its
        `files:` (keys <dataset>-1, <dataset>-2, ...)."""
        entry = self.config["datasets"][dataset]
        return [(f"{dataset}-{index + 1}", part) for index, part in enumerate(entry["files"])] if entry.get(
            "files") else [(dataset, entry)]

    def text_source(self, dataset: str) -> str:
        """A dataset's input file: a pinned release's fetched copy, the user's local file, or its fetched URL."""
        entry = self.config["datasets"][dataset]
        if "file" in entry:
            return self.path(*entry["file"].split("/"))
        if describe(entry, dataset).source:
            return self.text_sources(dataset)[0]
        return entry.get("path") or self.path("datasets", dataset)

    def text_sources(self, dataset: str) -> list[str]:
        """A dataset's input files, in order: `text_source`, or each part's of a table given as `files:`."""
        entry = self.config["datasets"][dataset]
        declared = describe(entry, dataset)
        if declared.source and "file" not in entry:  # a built-in release: the files its loader reads
            return [self.path(declared.source, key) for key in declared.inputs]
        if not entry.get("files"):
            return [self.text_source(dataset)]
        return [part.get("path") or self.path("datasets", key) for key, part in self.table_parts(dataset)]

    def released_sources(self, dataset: str, inputs: str = "released_inputs") -> list[str]:
        """The files of the scores a built-in dataset's authors released beside its texts (metric outputs,
        judges), in the order its `released` reader takes them; `inputs` "recipe_inputs": its paper recipes'."""
        declared = describe(self.config["datasets"][dataset], dataset)
        return [self.path(declared.source, key) for key in getattr(declared, inputs)]
