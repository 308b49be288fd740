# The targets of `rule all` (in the Snakefile: an included file cannot set the default target): what each
# dataset and score set supports (structure, common.smk), the figures and tables it wants (figures.smk), and
# the learned evaluator's outputs (storyer.smk).


def analysis_targets(dataset, scoreset):
    shape = structure(dataset, scoreset)
    base = f"results/{dataset}/{scoreset}"
    return (
        [f"{base}/{name}.csv" for name in plan.stats_tables(shape)]
        + table_targets(base, shape)
        + figure_targets(base, shape)
    )


def computed_targets(dataset):
    base = f"results/{dataset}/computed"
    targets = [f"{base}/scores.parquet", f"{base}/tables/computation_times.md"]
    if config["datasets"][dataset]["kind"] == "hanna-llm":
        targets.append(f"results/{dataset}/validation.csv")
    if structure(dataset, "computed")["ratings"]:
        targets += analysis_targets(dataset, "computed") + meta_targets(dataset, "computed")
    else:
        targets += unrated_targets(dataset)  # analysis.smk: metric x metric heatmaps, systems ranked by metric
    return targets


def unrated_targets(dataset):
    """Metric x metric heatmaps and the systems' ranking by each metric, for a computed set without ratings."""
    base = f"results/{dataset}/computed"
    shape = structure(dataset, "computed")
    ranking = [
        f"{base}/tables/system_ranking.md",
        *[f"{base}/figures/system_ranking.{ext}" for ext in ("pdf", "png")],
        *[report_page(base, name) for name in ("system_ranking", "system_ranking_table")],
    ]
    return [f"{base}/correlations.csv", *ranking * shape["systems"], *figure_targets(base, shape, ["metric_metric"])]


def released_targets():
    """HANNA's released scores: the paper's analysis, the meta-evaluation and the raw annotations' ratings."""
    targets = [hanna_path("license")] + analysis_targets("hanna", "released") + meta_targets("hanna", "released")
    if USE_ANNOTATIONS:
        targets.append("results/hanna/data/worker_ratings.csv")  # also feeds Tab. 3
    return targets


def dataset_targets(dataset):
    """Everything of one dataset (rule dataset_<name>): its computed scores and analyses, and for hanna also the
    released scores' analysis; nothing of another dataset's files."""
    scored = dataset in TEXT_DATASETS and (enabled_metrics(dataset) or judge_jobs(dataset))  # judges.smk
    targets = computed_targets(dataset) + judge_targets(dataset) if scored else []
    return targets + (released_targets() if dataset == "hanna" else [])


def all_targets():
    targets = released_targets()
    for dataset in TEXT_DATASETS:
        targets += dataset_targets(dataset)
    return list(dict.fromkeys(targets + storyer_targets()))  # storyer.smk


# One target per configured dataset: `snakemake --cores N dataset_<name>`.
for dataset_name in config["datasets"]:

    rule:
        f"everything of dataset {dataset_name}: its scores, analyses, meta-evaluation, figures and tables"
        name:
            f"dataset_{dataset_name}"
        input:
            dataset_targets(dataset_name),
        localrule: True
