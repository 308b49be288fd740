"""Human agreement beside the metrics: Krippendorff's alpha and the human ceiling per criterion (agreement.csv),
the Alternative Annotator Test of every metric and judge at the dataset's margin (alt_test.csv)."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.data.load import analysis_grid
from storyeval.io import log_to, read_table, write_csv
from storyeval.stats.agreement import agreement_table
from storyeval.stats.alttest import Margin, alt_test_table
from storyeval.stats.meta import load_meta

log = log_to(snakemake.log[0])
params, settings = snakemake.params, snakemake.params.agreement
ratings = read_table(snakemake.input.ratings, ["story_id", "criterion", "rater", "rating"])
stories, systems = analysis_grid(read_table(snakemake.input.stories, ["story_id", "prompt_id", "system"]),
                                 params.reference_system)
table = agreement_table(ratings, stories, systems, params.levels, params.coefficients, params.layout,
                        tuple(settings["alpha_levels"]), params.system_ties, params.system_backend)
write_csv(table, snakemake.output.agreement)
for criterion, rows in table.groupby("criterion", sort=False):
    alphas = ", ".join(f"{name} {rows[name].iloc[0]:.3f}" for name in rows.columns if name.startswith("alpha_"))
    ceilings = ", ".join(f"{row.level} {row.coefficient} {row.ceiling:.3f}" for row in rows.itertuples())
    note = rows["note"].iloc[0]
    log.info("%s: %s; ceiling %s%s", criterion, alphas, ceilings, f" ({note})" if note else "")
test = settings["alt_test"]
margin = Margin.of(*params.rater_kind, test["epsilon"])
alt, notes = alt_test_table(ratings, stories, load_meta(snakemake.input, params.reference_system), margin,
                            params.layout, test["q"], test["min_instances"], test["min_annotators"],
                            draws=test["chance_draws"], seed=test["seed"])
write_csv(alt, snakemake.output.alt_test)
for line in notes:
    log.info("%s", line)
