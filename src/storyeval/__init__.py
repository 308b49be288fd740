"""storyeval: which automatic story-evaluation metrics agree with human judgment."""

import sys

__version__ = "0.1.0"


def _job_log(main) -> str | None:
    log = getattr(getattr(main, "snakemake", None), "log", None)
    return log[0] if isinstance(log, list) and log and isinstance(log[0], str) else None  # snakemake.io.Log


def log_a_jobs_failure(main) -> bool:
    """Log to the job's rule log from here on (storyeval.io.log_to, which also installs its exception hook), where
    `main` is a script job's `__main__` with its `snakemake` object: a job failing before its script's own log_to
    call, at this package's first import (below) or in the job server's child (storyeval.workflow.jobserver).
    False, and nothing done, where `main` has no such object (yet)."""
    log = _job_log(main)
    if log is not None:
        from storyeval.io import log_to

        log_to(log)
    return log is not None


def _log_a_jobs_import_failure() -> None:
    """In a Snakemake script job (its `snakemake` object is a global of the script, __main__), log to the rule's
    log from the first import of this package: a module that fails to import, before the script's own
    io.log_to call, leaves its traceback in the rule's log too, not on the console alone. Where the package is
    first imported while the job's `snakemake` object is being unpickled (a param of one of its classes), the
    object is not there yet: the hook then looks for it when an exception reaches it."""
    main = sys.modules.get("__main__")
    if not log_a_jobs_failure(main) and ".snakemake" in str(getattr(main, "__file__", "")):  # a rule's script
        previous = sys.excepthook

        def hook(kind, error, trace):
            if not log_a_jobs_failure(main):  # when it logs, io's own hook is installed: the traceback to the log,
                return previous(kind, error, trace)  # one line to the console
            return sys.excepthook(kind, error, trace)

        sys.excepthook = hook


_log_a_jobs_import_failure()


def __getattr__(name: str):
    """`storyeval.judge`, `storyeval.score`, `storyeval.correlations` (storyeval.api), imported when first used."""
    if name in {"judge", "score", "correlations"}:
        from storyeval import api

        return getattr(api, name)
    raise AttributeError(f"module 'storyeval' has no attribute {name!r}")
