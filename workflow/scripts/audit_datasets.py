"""The built-in datasets' papers: every printed number beside storyeval's (storyeval.audit_datasets), each paper
table's counts first."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from storyeval.audit_datasets import audit, counts, landing_text
from storyeval.datasets import describe
from storyeval.io import _atomic, log_to, markdown_table, read_table, write_csv
from storyeval.plots.pages import header, write_table_page

log = log_to(snakemake.log[0])
printed = {name: describe(entry, name).printed for name, entry in snakemake.params.datasets.items()}
table = audit(printed, lambda path: read_table(path, [], round_trip=True))
write_csv(table, snakemake.output.csv)
tally = counts(table)
per_table = counts(table, ("dataset", "table", "reference"))
text = (f"# The datasets' papers\n\n{markdown_table(tally)}\n\n## Each paper table\n\n{markdown_table(per_table)}"
        f"\n\n## Every printed number\n\n{markdown_table(table)}\n")
_atomic(snakemake.output.md, lambda tmp: open(tmp, "w", encoding="utf-8").write(text))
summary = per_table.rename(columns=header).to_html(index=False, border=0)
write_table_page(snakemake.output.page, table.rename(columns=header).fillna(""), "The datasets' papers",
                 [snakemake.output.csv, snakemake.output.md],
                 f"<p><b>{landing_text(table)}</b></p>\n<p>Each paper table:</p>\n{summary}\n")
_atomic(snakemake.output.landing, lambda tmp: open(tmp, "w", encoding="utf-8").write(landing_text(table)))
for _, row in tally.iterrows():
    log.info("%s", ", ".join(f"{key} {value}" for key, value in row.items()))
