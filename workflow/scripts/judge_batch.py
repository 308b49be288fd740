"""Write one judge job's prompts as an OpenAI batch (storyeval.judges.batch): the requests its served run sends."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.io import log_to, read_parquet
from storyeval.judges.batch import export
from storyeval.judges.prompts import load_template
from storyeval.judges.rate import Settings

log = log_to(snakemake.log[0])
judge, model = snakemake.wildcards.judge, snakemake.params.model
written = export(snakemake.output[0], read_parquet(snakemake.input.texts), snakemake.params.criteria,
                 load_template(snakemake.params.template), Settings(**snakemake.params.settings), model.get("served"),
                 model.get("tokenizer"), snakemake.wildcards.dataset, f"judges.models.{judge}")
log.info("%s: %d requests written to %s", judge, written, snakemake.output[0])
