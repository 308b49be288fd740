# The cross-dataset benchmark (storyeval.benchmark): every rated score set's meta-evaluation side by side, its
# criteria in one vocabulary; per metric and LLM judge, in how many datasets it is in the top significance cluster.
from storyeval.workflow import benchmark as workflow_benchmark

BENCHMARK = workflow_benchmark.BASE
BENCHMARK_TITLE = "Which metrics and LLM judges agree with humans across datasets ({coefficient}; frame: top cluster)"


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
        png=f"{BENCHMARK}/heatmap.png",
        pdf=f"{BENCHMARK}/heatmap.pdf",
        landing=f"{BENCHMARK}/report/benchmark.rst",  # its answer on the landing page (workflow/report/workflow.rst)
        page=report(
            plan.report_page(BENCHMARK, "benchmark"),
            caption="../report/benchmark.rst",
            category="Benchmark across datasets",
            subcategory="Tables",
            labels={"Table": "Benchmark", "Shows": "top clusters per metric across datasets"},
        ),
        figure_page=report(
            plan.report_page(BENCHMARK, "heatmap"),
            caption="../report/benchmark.rst",
            category="Benchmark across datasets",
            subcategory="Figures",
            labels={"Figure": "Benchmark", "Shows": "r per metric x dataset criterion, top cluster framed"},
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
        dpi=config["figures"]["dpi"],
        title=BENCHMARK_TITLE.format(coefficient=startup_check(workflow_benchmark.coefficient, config)),
        summary_title="Per metric and LLM judge across datasets: top clusters and mean normalised rank",
        facts=startup_check(workflow_benchmark.facts, RUN),
    script:
        "../scripts/benchmark.py"


rule benchmark:
    """the cross-dataset benchmark of every rated score set (results/benchmark/)"""
    input:
        startup_check(workflow_benchmark.outputs, RUN),
    localrule: True
