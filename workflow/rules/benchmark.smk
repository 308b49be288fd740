# The cross-dataset benchmark (storyeval.benchmark): every rated dataset's answer (rule dataset_answer: all its score
# sets on the stories they share) side by side, its criteria in one vocabulary; metrics and LLM judges ranked by
# their mean normalised rank where measured.
from storyeval.workflow import benchmark as workflow_benchmark

BENCHMARK = workflow_benchmark.BASE
BENCHMARK_TITLE = (
    "Which metrics and LLM judges agree with humans across datasets (Pearson r; bold: a decided top cluster)"
)


rule benchmark_table:
    """writes the cross-dataset benchmark: table, summary, heatmap, report pages"""
    input:
        startup_check(workflow_benchmark.inputs, RUN),
        caption=caption_file("benchmark"),
    output:
        table_csv=f"{BENCHMARK}/benchmark.csv",
        table_md=f"{BENCHMARK}/benchmark.md",
        summary_csv=f"{BENCHMARK}/summary.csv",
        summary_md=f"{BENCHMARK}/summary.md",
        matrix_csv=f"{BENCHMARK}/matrix.csv",
        matrix_md=f"{BENCHMARK}/matrix.md",
        png=f"{BENCHMARK}/heatmap.png",
        pdf=f"{BENCHMARK}/heatmap.pdf",
        landing=f"{BENCHMARK}/report/benchmark.rst",  # its answer on the landing page (workflow/report/workflow.rst)
        page=report(
            plan.report_page(BENCHMARK, "benchmark"),
            caption="../report/benchmark.rst",
            category="Benchmark across datasets",
            subcategory="Tables",
            labels={"Table": "Benchmark", "Shows": "r [interval] per metric x dataset criterion"},
        ),
        summary_page=report(
            plan.report_page(BENCHMARK, "summary"),
            caption="../report/benchmark.rst",
            category="Benchmark across datasets",
            subcategory="Tables",
            labels={"Table": "Summary", "Shows": "metrics and judges ranked by quality where measured"},
        ),
        figure_page=report(
            plan.report_page(BENCHMARK, "heatmap"),
            caption="../report/benchmark.rst",
            category="Benchmark across datasets",
            subcategory="Figures",
            labels={"Figure": "Benchmark", "Shows": "r per metric x dataset criterion, decided top cluster framed"},
        ),
    log:
        "logs/benchmark.log",
    benchmark:
        "benchmarks/benchmark.tsv"
    conda:
        CORE_ENV
    params:
        sources=script_digest("benchmark.py"),
        sets=startup_check(workflow_benchmark.sets, RUN),
        terms=startup_check(workflow_benchmark.terms, RUN),
        rows=config["benchmark"]["rows"],
        min_studies=config["benchmark"]["min_studies"],
        dpi=config["figures"]["dpi"],
        title=BENCHMARK_TITLE,
        summary_title="Metrics and LLM judges across datasets, ranked by mean normalised rank where measured",
        facts=startup_check(workflow_benchmark.facts, RUN),
    script:
        "../scripts/benchmark.py"


rule benchmark:
    """the cross-dataset benchmark of every rated score set (results/benchmark/)"""
    input:
        startup_check(workflow_benchmark.outputs, RUN),
    localrule: True
