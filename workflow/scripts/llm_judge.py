"""Rate one dataset's stories (or one shard of them) with one LLM judge and one prompt template."""

import json
from pathlib import Path

from storyeval.io import log_to, read_parquet, write_csv, write_parquet
from storyeval.judges import judge_registry
from storyeval.judges.batch import rate_batch
from storyeval.judges.config import served
from storyeval.judges.prompts import load_template
from storyeval.judges.rate import Settings, rate
from storyeval.neural.models import identity

log = log_to(snakemake.log[0])
judge, model = snakemake.wildcards.judge, snakemake.params.model
template = load_template(snakemake.params.template)
settings = Settings(**snakemake.params.settings)
texts = read_parquet(snakemake.input.texts)
device = None if snakemake.params.device == "auto" else snakemake.params.device
key = f"judges.models.{judge}"
batch = snakemake.params.batch_results
if batch:  # a batch run elsewhere: its results answer this job's requests (a shard's job, some of them)
    scores, details, run = rate_batch(texts, snakemake.params.criteria, template, batch, settings,
                                      model.get("served"), model.get("tokenizer"), snakemake.wildcards.dataset, key,
                                      partial=hasattr(snakemake.wildcards, "shard"))
else:
    scores, details, run = rate(texts, snakemake.params.criteria, template, model["path"], settings,
                                model.get("revision"), device, key, model.get("served"), model.get("tokenizer"),
                                snakemake.params.cache)
registry = judge_registry(judge, template, list(scores.columns), settings.mode)
write_parquet(scores.set_axis(registry["slug"], axis=1).rename_axis("story_id").reset_index(), snakemake.output.scores)
write_parquet(details, snakemake.output.details)
write_csv(registry, snakemake.output.registry)
if served(model):  # a served judge: its URL (or batch results), the name it serves and the local tokenizer
    loaded = {"url": model["path"], "served": model.get("served"), "tokenizer": model.get("tokenizer")}
    loaded |= {"batch_results": batch} if batch else {}
else:
    loaded = identity(model["path"], model.get("revision"))
signature = {"judge": judge, "model": loaded, "template": template.name,
             "template_text": template.user + "\n" + template.answer, "criteria": snakemake.params.criteria,
             "settings": snakemake.params.settings, "dataset": snakemake.wildcards.dataset, "stories": len(texts),
             **run}
Path(snakemake.output.signature).write_text(json.dumps(signature, indent=2, sort_keys=True, default=str) + "\n")
log.info("%s with %s on %s: %d stories x %d criteria, %d parse failures", judge, template.name,
         snakemake.wildcards.dataset, *scores.shape, run["parse_failures"])
