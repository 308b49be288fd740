"""What the rule files (workflow/rules/*.smk) plan, as plain functions of the checked config and of what a run
found at start-up (`Run`): targets, input lists and parameters, tested without Snakemake
(tests/test_workflow_plan.py). The figures and tables of a score set are planned in storyeval.plan.

Paths are the rule files' patterns, relative to the working directory."""
