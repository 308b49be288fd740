"""Fetch one pinned file (mirror first, then URL), verify it, record first-download checksums."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from pathlib import Path

from storyeval.data.fetch import fetch
from storyeval.data.recorded import record_checksum, recorded_checksum
from storyeval.io import log_to

log = log_to(snakemake.log[0])
entry = snakemake.params.entry
name = Path(snakemake.output[0]).name
expected = entry["sha256"] or recorded_checksum(snakemake.params.recorded, name)
limits = snakemake.config["data"]  # read here, not as params: a new limit is no reason to fetch a file again
digest = fetch(name, entry["url"], expected, entry["mirrors"], snakemake.output[0], snakemake.params.allow_download,
               size=entry.get("size"), limit=limits["max_download"], seconds=limits["download_seconds"])
if expected is None:
    record_checksum(snakemake.params.recorded, name, digest)
    log.info("recorded the first-download sha256 of %s: %s (pin it in config.yaml)", name, digest)
log.info("%s ok, sha256 %s", name, digest)
