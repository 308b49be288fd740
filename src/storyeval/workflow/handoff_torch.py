"""Imported first by a workflow script that imports torch: hands the job to the run's torch job server, which
holds torch and transformers already (storyeval.workflow.jobserver, pool TORCH); where there is none, returns and
the script runs here."""

import sys

from storyeval.workflow.jobserver import TORCH, hand_off

_status = hand_off(sys.modules["__main__"], TORCH)
if _status is not None:
    sys.exit(_status)
