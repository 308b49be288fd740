# Significance tests, resampling, consensus rankings and the two reanalyses of HANNA (Houairi & Thiounn; Mendras & Nietge).


rule williams:
    input:
        unpack(scoreset_inputs),
    output:
        "results/{dataset}/{scoreset}/williams.csv",
    log:
        "logs/williams/{dataset}/{scoreset}.log",
    benchmark:
        "benchmarks/williams/{dataset}/{scoreset}.tsv"
    priority: STATISTICS_FIRST
    conda:
        CORE_ENV
    params:
        sources=script_digest("williams.py"),
        reference_system=dataset_reference_system,
        levels=dataset_levels,
        story_mode=config["stats"]["williams_story_mode"],
        orientation=config["analysis"]["orientation"],
    script:
        "../scripts/williams.py"


rule confounds:
    input:
        unpack(scoreset_inputs),
    output:
        "results/{dataset}/{scoreset}/confounds.csv",
    log:
        "logs/confounds/{dataset}/{scoreset}.log",
    priority: STATISTICS_FIRST
    conda:
        CORE_ENV
    params:
        sources=script_digest("confounds.py"),
        reference_system=dataset_reference_system,
        coefficients=config["analysis"]["coefficients"],
        margin=config["stats"]["confound_margin"],
        length_limit=config["stats"]["length_confound"],
    script:
        "../scripts/confounds.py"


rule paired_accuracy:
    input:
        unpack(scoreset_inputs),
        caption=caption_file("paired_accuracy"),
    output:
        csv="results/{dataset}/{scoreset}/paired_accuracy.csv",
        md="results/{dataset}/{scoreset}/tables/paired_accuracy.md",
        page=report_entry(
            plan.report_page("results/{dataset}/{scoreset}", "paired_accuracy"),
            "paired_accuracy",
            "Tables",
            table_labels("paired_accuracy"),
        ),
    log:
        "logs/paired_accuracy/{dataset}/{scoreset}.log",
    priority: STATISTICS_FIRST
    conda:
        CORE_ENV
    params:
        sources=script_digest("paired_accuracy.py"),
        reference_system=dataset_reference_system,
        seed=config["stats"]["seed"],
        n_resamples=config["stats"]["n_resamples"],
        confidence=config["analysis"]["confidence"],
    script:
        "../scripts/paired_accuracy.py"


rule bootstrap_f1:
    input:
        unpack(scoreset_inputs),
    output:
        "results/{dataset}/{scoreset}/bootstrap_f1.csv",
    log:
        "logs/bootstrap_f1/{dataset}/{scoreset}.log",
    benchmark:
        "benchmarks/bootstrap_f1/{dataset}/{scoreset}.tsv"
    priority: STATISTICS_FIRST
    conda:
        CORE_ENV
    params:
        sources=script_digest("bootstrap_f1.py"),
        reference_system=dataset_reference_system,
        seed=config["stats"]["seed"],
        n_resamples=config["stats"]["n_resamples"],
        confidence=config["analysis"]["confidence"],
        orient=config["stats"]["bootstrap_orient"],
    script:
        "../scripts/bootstrap_f1.py"


rule correlation_ci:
    input:
        unpack(scoreset_inputs),
    output:
        "results/{dataset}/{scoreset}/correlation_ci.csv",
    log:
        "logs/correlation_ci/{dataset}/{scoreset}.log",
    benchmark:
        "benchmarks/correlation_ci/{dataset}/{scoreset}.tsv"
    priority: STATISTICS_FIRST
    conda:
        CORE_ENV
    params:
        sources=script_digest("correlation_ci.py"),
        reference_system=dataset_reference_system,
        levels=dataset_levels,
        coefficients=config["analysis"]["coefficients"],
        seed=config["stats"]["seed"],
        n_resamples=config["stats"]["n_resamples"],
        confidence=config["analysis"]["confidence"],
    script:
        "../scripts/correlation_ci.py"


rule topk_systems:
    input:
        unpack(scoreset_inputs),
    output:
        "results/{dataset}/{scoreset}/topk.csv",
    log:
        "logs/topk/{dataset}/{scoreset}.log",
    priority: STATISTICS_FIRST
    conda:
        CORE_ENV
    params:
        sources=script_digest("topk.py"),
        reference_system=dataset_reference_system,
        topk=config["stats"]["topk"],
    script:
        "../scripts/topk.py"


rule icc:
    input:
        unpack(lambda wildcards: workflow_analysis.icc_inputs(USE_ANNOTATIONS, wildcards.dataset)),
    output:
        "results/{dataset}/{scoreset}/icc.csv",
    log:
        "logs/icc/{dataset}/{scoreset}.log",
    priority: STATISTICS_FIRST
    conda:
        CORE_ENV
    params:
        sources=script_digest("icc.py"),
        confidence=config["analysis"]["confidence"],
        layout=lambda wildcards: "position" if wildcards.dataset == "hanna" else "rater",
    script:
        "../scripts/icc.py"


rule kemeny:
    input:
        correlations="results/{dataset}/{scoreset}/correlations.csv",
        registry="results/{dataset}/{scoreset}/metrics.csv",
    output:
        consensus="results/{dataset}/{scoreset}/kemeny.csv",
        summary="results/{dataset}/{scoreset}/kemeny_summary.csv",
    log:
        "logs/kemeny/{dataset}/{scoreset}.log",
    benchmark:
        "benchmarks/kemeny/{dataset}/{scoreset}.tsv"
    priority: STATISTICS_FIRST
    conda:
        CORE_ENV
    params:
        sources=script_digest("kemeny.py"),
        kemeny=config["stats"]["kemeny"],
        orientation=config["analysis"]["orientation"],
    script:
        "../scripts/kemeny.py"


rule reanalyses:
    input:
        unpack(lambda wildcards: workflow_analysis.reanalysis_inputs(config, wildcards.dataset, wildcards.scoreset)),
    output:
        sum_of_ranks="results/{dataset}/{scoreset}/reanalysis1_sum_of_ranks.csv",
        top_k="results/{dataset}/{scoreset}/reanalysis2_top_k.csv",
        agreement="results/{dataset}/{scoreset}/reanalysis2_coefficient_agreement.csv",
    log:
        "logs/reanalyses/{dataset}/{scoreset}.log",
    priority: STATISTICS_FIRST
    conda:
        CORE_ENV
    params:
        sources=script_digest("reanalyses.py"),
        reanalysis=config["reanalysis"],
        reference_system=dataset_reference_system,
        coefficients=config["analysis"]["coefficients"],
        system_coefficients=config["analysis"]["system_coefficients"],
    script:
        "../scripts/reanalyses.py"
