# storyeval: which automatic metrics agree with human judgment of stories.
# Thin entry point: configuration, rule files, and the default target (its targets: storyeval.workflow.targets).
from snakemake.utils import min_version

min_version("9.0")


include: "workflow/rules/configfiles.smk"  # before Snakemake reads config.yaml


configfile: "config.yaml"


report: "workflow/report/workflow.rst"


include: "workflow/rules/common.smk"
include: "workflow/rules/data.smk"
include: "workflow/rules/metrics.smk"
include: "workflow/rules/neural.smk"
include: "workflow/rules/shards.smk"
include: "workflow/rules/judges.smk"
include: "workflow/rules/released_judges.smk"
include: "workflow/rules/storyer.smk"
include: "workflow/rules/analysis.smk"
include: "workflow/rules/stats.smk"
include: "workflow/rules/answer.smk"
include: "workflow/rules/agreement.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/audit.smk"
include: "workflow/rules/meta.smk"
include: "workflow/rules/benchmark.smk"
include: "workflow/rules/targets.smk"
include: "workflow/rules/localrules.smk"


rule all:
    default_target: True
    input:
        startup_check(workflow_targets.all_targets, RUN),
        AUDIT_OUTPUTS if AUDIT_WANTED else [],
        DATASETS_AUDIT if PRINTED_DATASETS else [],


# HANNA's released scores alone, with the reproduction audit: `make report-released` (minutes, no metric computed).
rule released:
    input:
        startup_check(workflow_targets.released_targets, RUN),
        AUDIT_OUTPUTS if AUDIT_WANTED else [],
    localrule: True


# Script jobs run in forks of an interpreter that imported their modules once (storyeval.workflow.jobserver): one
# for the light jobs, one for the torch jobs where they run on the CPU; Snakemake sends them there itself, without a
# shell and an interpreter of their own (storyeval.workflow.scriptjobs). A local run's scheduler runs a round when a
# job ends, not also each second per job ended (storyeval.workflow.scheduling).
onstart:
    scheduling.lift_default_rate_limit(workflow)
    jobserver.start(
        Path(workflow.basedir, "workflow/scripts"),
        workflow.local_exec,
        [job.rule.script for job in workflow.dag.needrun_jobs()],
        jobserver.torch_forks_safely(config["device"]),
    )
    if workflow.local_exec:
        scriptjobs.submit_script_jobs()


onsuccess:
    jobserver.stop()


onerror:
    jobserver.stop()
