"""Run the real workflow in a temporary directory, data from the local mirror."""

from __future__ import annotations

import compileall
import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import yaml

import snakemake_server
from conftest import HANNA_MIRROR, REPO

SNAKEMAKE = str(snakemake_server.SNAKEMAKE)
# The default profile's job selection; the tests' runs leave the rest of that profile out (--workflow-profile none)
SCHEDULER = yaml.safe_load((REPO / "profiles/default/config.yaml").read_text())["scheduler"]


def set_dotted(config: dict, changes: dict) -> dict:
    """`config` with each dotted key of `changes` ("data.allow_download") set, missing levels created."""
    for dotted, value in changes.items():
        node = config
        *parents, last = dotted.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[last] = value
    return config


def make_workdir(tmp: Path, without: tuple[str, ...] = (), **overrides) -> Path:
    """A work directory whose config.yaml is the default one with absolute mirrors, its datasets less those named
    in `without`, and `overrides` merged."""
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config["data"]["mirrors"] = {source: [str((REPO / path).resolve()) for path in paths]  # ../shared/data/<source>
                                 for source, paths in config["data"]["mirrors"].items()}
    for name in without:
        del config["datasets"][name]
    set_dotted(config, overrides)
    tmp.mkdir(parents=True, exist_ok=True)
    (tmp / "config.yaml").write_text(yaml.safe_dump(config, allow_unicode=True))
    return tmp


def run_snakemake(workdir: Path, *args: str, timeout: int = 1800, repository: Path = REPO, **env: str
                  ) -> subprocess.CompletedProcess:
    env = dict(os.environ, MPLBACKEND="Agg", **env)
    command = [SNAKEMAKE, "-s", str(repository / "Snakefile"), "--directory", str(workdir),
               "--workflow-profile", "none", "--scheduler", SCHEDULER, *args]
    return snakemake_server.run(command, workdir, env, timeout)


def copy_checkout(target: Path) -> Path:
    """The repository's tracked and untracked-unignored files, copied to `target`, with its package's bytecode (as
    `make test` leaves it: where PYTHONDONTWRITEBYTECODE is set, each process would compile the package again)."""
    files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO, capture_output=True,
                           text=True, check=True).stdout.splitlines()
    for name in files:
        if (REPO / name).is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO / name, target / name)
    compileall.compile_dir(target / "src", quiet=1)
    return target


def clone_alone(tmp: Path) -> Path:
    """The repository's files, copied where no ../shared lies beside them: a clone anywhere else."""
    clone = copy_checkout(tmp / "clone")
    assert not (clone.parent / "shared").exists()
    return clone


def copy_mirror(tmp: Path) -> Path:
    mirror = tmp / "mirror"
    shutil.copytree(HANNA_MIRROR, mirror)
    for path in mirror.iterdir():
        path.chmod(0o644)
    return mirror


@contextmanager
def comment_appended(module: Path) -> Iterator[None]:
    """`module` of a package with a comment line appended, restored after: what an edit does to the rerun
    triggers. Edit a copy of the checkout (copy_checkout), not the one other tests (pytest -n) run: their runs
    would compute the edited digests meanwhile and rerun jobs. Each version replaces the file whole (os.replace)."""
    original = module.read_bytes()

    def put(content: bytes) -> None:
        temporary = module.with_name(f".{module.name}.{os.getpid()}.tmp")
        temporary.write_bytes(content)
        os.replace(temporary, module)

    try:
        put(original + b"\n# edited by a test\n")
        yield
    finally:
        put(original)
