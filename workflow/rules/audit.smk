# The reproduction audit (storyeval.audit): the papers' printed numbers beside storyeval's under the default
# settings and under the paper-exact profile (audit.profile), from the released-score analysis.

AUDIT_BASE = "results/hanna"


def audit_file(key):
    """A file named by config audit.<key>: relative to the working directory, else to the repository."""
    path = Path(config["audit"][key])
    if not path.is_absolute() and not path.exists() and (Path(workflow.basedir) / path).exists():
        path = Path(workflow.basedir) / path
    return str(path)


def audit_wanted():
    """The audit joins the default target when its paper values are there (else one start-up note)."""
    if Path(audit_file("paper_values")).is_file():
        return True
    STARTUP_NOTES.append(
        f"audit left out: {config_key('audit.paper_values')} ({audit_file('paper_values')}) is "
        "not there; fix: point it at the papers' printed numbers"
    )
    return False


def audit_inputs(wildcards):
    paper_values = audit_file("paper_values")
    if not Path(paper_values).is_file():
        raise WorkflowError(
            f"{config_key('audit.paper_values')}: {paper_values} is not there; fix: point it at the "
            "papers' printed numbers (src/storyeval/printed_numbers.yaml in the repository)"
        )
    return {
        "paper_values": paper_values,
        "profile": audit_file("profile"),
        "schema": str(Path(workflow.basedir) / "workflow/schemas/config.schema.yaml"),
        "stories": f"{AUDIT_BASE}/data/stories.csv",
        "ratings": f"{AUDIT_BASE}/data/rater_ratings.csv",
        "human": f"{AUDIT_BASE}/data/human_scores.csv",
        "scores": f"{AUDIT_BASE}/released/scores.parquet",
        "registry": f"{AUDIT_BASE}/released/metrics.csv",
        "correlations": f"{AUDIT_BASE}/released/correlations.csv",
        "system_means": f"{AUDIT_BASE}/released/system_means.csv",
        "icc": f"{AUDIT_BASE}/released/icc.csv",
    }


rule audit:
    input:
        unpack(audit_inputs),
    output:
        csv="results/audit/audit.csv",
        md="results/audit/audit.md",
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
        reference_system=HANNA["reference_system"],
        config={section: config[section] for section in ("analysis", "reanalysis")},
    script:
        "../scripts/audit.py"
