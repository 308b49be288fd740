# The targets of `rule all` (in the Snakefile: an included file cannot set the default target) and of each
# dataset: what each dataset and score set supports, the figures and tables it wants, its meta-evaluation and the
# learned evaluator's outputs (storyeval.workflow.targets).
from storyeval.workflow import targets as workflow_targets

# One target per configured dataset: `snakemake --cores N dataset_<name>`.
for dataset_name in config["datasets"]:

    rule:
        f"everything of dataset {dataset_name}: its scores, analyses, meta-evaluation, figures and tables"
        name:
            f"dataset_{dataset_name}"
        input:
            startup_check(workflow_targets.dataset_targets, RUN, dataset_name),
        localrule: True


# One target per built-in kind configured under other names: `dataset_union` runs union-roc and union-wp.
for kind_name, kind_inputs in startup_check(workflow_targets.kind_targets, RUN).items():

    rule:
        f"everything of the datasets of kind {kind_name}"
        name:
            f"dataset_{kind_name}"
        input:
            kind_inputs,
        localrule: True
