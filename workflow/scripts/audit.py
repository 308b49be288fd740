"""The reproduction audit: every number the papers printed beside storyeval's (storyeval.audit)."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

import time

import yaml

from storyeval import audit
from storyeval.data.load import human_cube, load_cubes
from storyeval.io import _atomic, log_to, read_table, write_csv
from storyeval.plots.pages import header, write_table_page

start = time.perf_counter()
log = log_to(snakemake.log[0])
inputs, params = snakemake.input, snakemake.params
stories = read_table(inputs.stories, ["story_id", "prompt_id", "system"])
registry = read_table(inputs.registry, ["slug", "label", "order", "degenerate_release", "direction"])
registry = registry.sort_values("order")
human, metrics = load_cubes(inputs, params.reference_system)
humans = {False: human, True: human_cube(inputs, stories, metrics.systems, exact=True)}
correlations = read_table(inputs.correlations, ["kind", "level", "coefficient", "x", "y", "r"], round_trip=True)
correlations = correlations[correlations["kind"].isin(["criteria", "metric_criterion"])]
data = audit.Inputs(humans, metrics, registry, correlations,
                    read_table(inputs.system_means, ["system", "criterion", "mean"]),
                    read_table(inputs.icc, ["criterion", "form", "icc", "ci_low", "ci_high", "layout"]),
                    params.reference_system, tuple(params.config["reanalysis"]["top_k_criteria"]),
                    stories, read_table(inputs.ratings, ["story_id", "criterion", "rater", "rating"]))
default = audit.schema_defaults(yaml.safe_load(open(inputs.schema, encoding="utf-8")))
profile = audit.switch_values(audit.layered(params.config, inputs.profile))
table = audit.audit(audit.read_paper_values(inputs.paper_values), data, default, profile)
notes = audit.findings(data, table)
write_csv(table, snakemake.output.csv)
text = audit.markdown(table, notes)
_atomic(snakemake.output.md, lambda tmp: open(tmp, "w", encoding="utf-8").write(text))
findings = "".join(f"<p>{line}</p>\n" for line in [f"<b>{audit.headline(table)}</b>", *notes])
findings += "<p>Per table (paper-exact profile):</p>\n" + audit.per_table(table).to_html(index=False, border=0)
shown = table.rename(columns=header).fillna("")  # headers as words; the CSV keeps the column names
write_table_page(snakemake.output.page, shown, "Reproduction audit", [snakemake.output.csv, snakemake.output.md],
                 findings)
_atomic(snakemake.output.landing, lambda tmp: open(tmp, "w", encoding="utf-8").write(audit.landing_text(table)))
log.info("%s; %.1f s", audit.headline(table), time.perf_counter() - start)
