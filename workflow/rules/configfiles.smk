# Config files are data (storyeval.configfiles): config.yaml is checked here, before the Snakefile's
# `configfile:` reads it (Snakemake would evaluate a YTE template's expressions); the command line's
# --configfile files Snakemake reads before any workflow code, so they are refused only after the fact.
import sys
from pathlib import Path

from snakemake.exceptions import WorkflowError

sys.path.insert(0, str(Path(workflow.basedir) / "src"))
from storyeval.config import shown
from storyeval.configfiles import check_config_file
from storyeval.errors import InputError

for given in [*(["config.yaml"] if Path("config.yaml").is_file() else []), *workflow.overwrite_configfiles]:
    try:
        check_config_file(given, shown(given))
    except InputError as error:
        raise WorkflowError(str(error)) from None
