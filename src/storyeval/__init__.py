"""storyeval: which automatic story-evaluation metrics agree with human judgment."""

import sys

__version__ = "0.1.0"


def _log_a_jobs_import_failure() -> None:
    """In a Snakemake script job (its `snakemake` object is a global of the script, __main__), log to the rule's
    log from the first import of this package: a module that fails to import, before the script's own
    io.log_to call, leaves its traceback in the rule's log too, not on the console alone."""
    log = getattr(getattr(sys.modules.get("__main__"), "snakemake", None), "log", None)
    if isinstance(log, list) and log and isinstance(log[0], str):  # snakemake.io.Log: a list of paths
        from storyeval.io import log_to

        log_to(log[0])


_log_a_jobs_import_failure()


def __getattr__(name: str):
    """`storyeval.judge`, `storyeval.score`, `storyeval.correlations` (storyeval.api), imported when first used."""
    if name in {"judge", "score", "correlations"}:
        from storyeval import api

        return getattr(api, name)
    raise AttributeError(f"module 'storyeval' has no attribute {name!r}")
