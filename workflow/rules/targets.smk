# The targets of `rule all` (in the Snakefile: an included file cannot set the default target): what each
# dataset and score set supports (structure, common.smk), the figures and tables it wants (figures.smk), and
# the learned evaluator's outputs (storyer.smk).


def stats_tables(shape):
    names = ["correlations", "top_metrics", "borda", "williams", "kemeny", "kemeny_summary"]
    names += REANALYSES * shape["reanalyses"]
    if shape["systems"]:
        names += ["bootstrap_f1", "correlation_ci"] + ["topk"] * shape["topk"]
    if shape["raters"]:
        names += ["icc"] + ["system_means"] * shape["systems"]
    return names


def analysis_targets(dataset, scoreset):
    shape = structure(dataset, scoreset)
    base = f"results/{dataset}/{scoreset}"
    return (
        [f"{base}/{name}.csv" for name in stats_tables(shape)]
        + table_targets(base, shape)
        + figure_targets(base, shape)
    )


def computed_targets(dataset):
    base = f"results/{dataset}/computed"
    targets = [f"{base}/scores.parquet", f"{base}/tables/computation_times.md"]
    if config["datasets"][dataset]["kind"] == "hanna-llm":
        targets.append(f"results/{dataset}/validation.csv")
    if structure(dataset, "computed")["ratings"]:
        targets += analysis_targets(dataset, "computed")
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


def all_targets():
    targets = [hanna_path("license")] + analysis_targets("hanna", "released") + meta_targets("hanna", "released")
    if USE_ANNOTATIONS:
        targets.append("results/hanna/data/worker_ratings.csv")  # also feeds Tab. 3
    for dataset in TEXT_DATASETS:
        if enabled_metrics(dataset) or judge_jobs(dataset):  # judges.smk
            targets += computed_targets(dataset) + judge_targets(dataset)
    return targets + storyer_targets()  # storyer.smk
