# The reproduction audit (storyeval.audit): the papers' printed numbers beside storyeval's under the default
# settings and under the paper-exact profile (audit.profile), from the released-score analysis.

from storyeval.workflow import audit as workflow_audit

# The audit joins the default target when its paper values are there (else one start-up note).
PAPER_VALUES = workflow_audit.audit_file(config, "paper_values", workflow.basedir)
AUDIT_WANTED = Path(PAPER_VALUES).is_file()
AUDIT_OUTPUTS = [f"results/audit/audit.{suffix}" for suffix in ("csv", "md", "html", "rst")]
if not AUDIT_WANTED:
    STARTUP_NOTES.append(
        workflow_startup.DatasetNote(
            f"audit left out: {config_key('audit.paper_values')} ({PAPER_VALUES}) is "
            "not there; fix: point it at the papers' printed numbers",
            rules=["all", "released"],
        )
    )


rule audit:
    input:
        unpack(
            lambda wildcards: startup_check(
                workflow_audit.inputs, config, workflow.basedir, CONFIG_SOURCES.origin("audit.paper_values")
            )
        ),
    output:
        csv="results/audit/audit.csv",
        md="results/audit/audit.md",
        landing="results/audit/audit.rst",  # the landing page's headline (workflow/report/workflow.rst)
        page=report(
            "results/audit/audit.html",
            caption="../report/audit.rst",
            category="Reproduction audit",
            labels={"Table": "Audit", "Shows": "every printed number beside storyeval's"},
        ),
    log:
        "logs/audit.log",
    benchmark:
        "benchmarks/audit.tsv"
    conda:
        CORE_ENV
    params:
        sources=script_digest("audit.py"),
        reference_system=RUN.reference_system("hanna", "released"),
        config={section: config[section] for section in ("analysis", "reanalysis")},
    script:
        "../scripts/audit.py"


# The built-in datasets' papers (storyeval.audit_datasets): the numbers each kind module declares as printed.
PRINTED_DATASETS = workflow_audit.printed_datasets(RUN)
DATASETS_AUDIT = [f"results/audit/datasets.{suffix}" for suffix in ("csv", "md", "html", "rst")]


rule audit_datasets:
    input:
        lambda wildcards: workflow_audit.printed_inputs(RUN),
    output:
        csv="results/audit/datasets.csv",
        md="results/audit/datasets.md",
        landing="results/audit/datasets.rst",  # the landing page's line (workflow/report/workflow.rst)
        page=report(
            "results/audit/datasets.html",
            caption="../report/audit_datasets.rst",
            category="Reproduction audit",
            labels={"Table": "Datasets' papers", "Shows": "each dataset paper's printed numbers beside storyeval's"},
        ),
    log:
        "logs/audit_datasets.log",
    conda:
        CORE_ENV
    params:
        sources=script_digest("audit_datasets.py"),
        datasets=lambda wildcards: {name: config["datasets"][name] for name in PRINTED_DATASETS},
    script:
        "../scripts/audit_datasets.py"
