"""Gather a dataset's metric files (and its LLM judges' score files) into one long score table and its metric
registry; a judge column with too few ratings for any statistic is left out, said in the log and in a table the
report's landing page reads (storyeval.judges.gaps)."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

import json

import pandas as pd

from storyeval.io import log_to, read_parquet, read_table, write_csv, write_parquet
from storyeval.judges.gaps import LEFT_OUT, left_out, left_out_line
from storyeval.metrics import catalog
from storyeval.metrics.merge import merge_scores

log = log_to(snakemake.log[0])
judges = [read_table(path, ["slug", "label", "judge", "criterion"]) for path in snakemake.input.judge_registries]
gaps = [left_out(read_parquet(scores), read_parquet(details), registry) for scores, details, registry
        in zip(snakemake.input.judge_scores, snakemake.input.judge_details, judges)]
gaps = pd.concat(gaps, ignore_index=True) if gaps else pd.DataFrame(columns=LEFT_OUT)
for row in gaps.itertuples(index=False):
    log.warning("%s", left_out_line(row))
directions = catalog.resolve_directions(snakemake.params.metric_directions)
judged = pd.concat(judges, ignore_index=True) if judges else None
scores, registry = merge_scores(list(snakemake.input.scores) + list(snakemake.input.judge_scores),
                                catalog.registry_rows(directions), judged, leave_out=list(gaps["slug"]))
write_parquet(scores, snakemake.output.scores)
write_csv(registry, snakemake.output.registry)
write_csv(gaps, snakemake.output.left_out)
warned = [(path.rsplit("/", 1)[-1].removesuffix(".signature.json"), message) for path in snakemake.input.signatures
          for message in json.loads(open(path, encoding="utf-8").read()).get("warnings", [])]
write_csv(pd.DataFrame(warned, columns=["metric", "warning"]), snakemake.output.warnings)  # the About page says them
log.info("%d metric columns over %d stories", len(registry), scores["story_id"].nunique())
