"""Imported first by a workflow script: hands the job to the run's job server (storyeval.workflow.jobserver) and
ends this process with the job's status; where there is no server, returns and the script runs here.

An import rather than a call, so that it can come before the script's other imports, which are what it saves."""

import sys

from storyeval.workflow.jobserver import hand_off

_status = hand_off(sys.modules["__main__"])
if _status is not None:
    sys.exit(_status)
