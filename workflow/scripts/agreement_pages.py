"""The report's pages of human agreement: alpha and the human ceiling (agreement.csv), the Alternative Annotator
Test with why a criterion went untested (alt_test.csv), and the landing page's paragraph on both."""

import storyeval.workflow.handoff  # noqa: F401 (first: the job runs in the run's job server)

from pathlib import Path

from storyeval.io import log_to, read_table
from storyeval.plots.agreement_pages import (
    agreement_answer,
    alt_test_sentences,
    layout_note,
    settings_note,
    write_agreement_page,
    write_alt_test_page,
)
from storyeval.plots.pages import caption_html

log = log_to(snakemake.log[0])
inputs, out, wildcards, params = snakemake.input, snakemake.output, snakemake.wildcards, snakemake.params
agreement = read_table(inputs.agreement, ["criterion", "level", "coefficient", "ceiling"])
alt = read_table(inputs.alt_test, ["metric", "criterion", "omega", "rho", "passed", "epsilon", "annotators",
                                   "chance_p", "chance_q", "chance_draws", "beats_chance"])
name = f"{wildcards.dataset}, {wildcards.scoreset} scores"
write_agreement_page(out.agreement, agreement, f"{name}: how far the raters agree (Krippendorff's alpha) and the "
                     "human ceiling", [inputs.agreement],
                     caption_html(inputs.agreement_caption, wildcards, params.facts))
note = " ".join(filter(None, [settings_note(params.alt_test, alt), layout_note(agreement)]))
write_alt_test_page(out.alt_test, alt, f"{name}: may a metric replace a rater? The Alternative Annotator Test",
                    [inputs.alt_test], caption_html(inputs.alt_test_caption, wildcards, params.facts), note,
                    params.alt_test["min_instances"])
Path(out.landing).write_text(agreement_answer(agreement, alt, name, params.alt_test["min_instances"]), encoding="utf-8")
for sentence in alt_test_sentences(alt, params.alt_test["min_instances"]):
    log.info("alt-test %s", sentence)
