"""Hostile and careless input: bounded reads, names that become paths, shared-reference pickles, names that must
exist in the data, resampling counts that must fit, the Python API's arguments, config files as data, absurd values.

Each case's message is the one docs/bad-input.md shows.
"""

import pickle
import re
import time

import pytest

from storyeval.errors import InputError
from storyeval.pickles import load_restricted
from storyeval.text.datasets import load_storyer


def one_line(error: pytest.ExceptionInfo, *pieces: str) -> str:
    message = str(error.value)
    assert "\n" not in message and re.fullmatch(r"\S.*: .+; fix: .+", message), message
    for piece in pieces:
        assert piece in message, message
    return message


# Pickles: each shared container is checked once, so references shared at every level cost the pickle's size.

def shared_references(levels: int = 40, width: int = 10) -> list:
    nested: list = []
    for _ in range(levels):
        nested = [nested] * width
    return nested


def test_shared_reference_pickle_loads_in_linear_time(tmp_path):
    path = tmp_path / "shared.pkl"
    path.write_bytes(pickle.dumps(shared_references(), protocol=4))
    assert path.stat().st_size < 1000
    start = time.process_time()
    loaded = load_restricted(path)
    with pytest.raises(InputError) as error:
        load_storyer(path, "wp200")
    assert time.process_time() - start < 1.0
    assert len(loaded) == 10 and loaded[0] is loaded[1]
    one_line(error, f"dataset wp200: {path} item 0 is not a (story, score) pair: [[[...], [...]")


def test_deep_shared_reference_pickle_is_refused_at_once(tmp_path):
    path = tmp_path / "deep.pkl"
    path.write_bytes(pickle.dumps([shared_references(150, 3)], protocol=4))
    start = time.process_time()
    with pytest.raises(InputError) as error:
        load_restricted(path)
    assert time.process_time() - start < 1.0
    one_line(error, f"{path}: containers nested deeper than 100 levels, in top-level item 0")


def test_pickle_of_a_container_holding_itself(tmp_path):
    loop: list = []
    loop.append(loop)
    path = tmp_path / "loop.pkl"
    path.write_bytes(pickle.dumps([1, loop], protocol=4))
    with pytest.raises(InputError) as error:
        load_restricted(path)
    one_line(error, f"{path}: a container holds itself, in top-level item 1; fix: fetch the released file again")


# Bounded reads: a line, a cell and a name have size limits, checked before anything is derived from them.

CAPPED = """
import resource, sys
resource.setrlimit(resource.RLIMIT_AS, ({cap}, {cap}))
from storyeval.errors import InputError
from storyeval.data.hanna import read_released_scores
from storyeval.text.datasets import load_hanna_llm
try:
    {call}
except InputError as error:
    print("refused:", error)
print("peak_rss_kib:", open("/proc/self/status").read().split("VmHWM:")[1].split()[0])
"""


def run_capped(call: str, cap: int = 2**30) -> tuple[str, int]:
    """Run `call` in a fresh interpreter whose address space is capped at `cap` bytes: (its refusal, peak RSS in
    KiB, VmHWM: getrusage's maxrss would include the forking test process's)."""
    import os
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", CAPPED.format(cap=cap, call=call)], capture_output=True,
                            text=True, timeout=300, env=dict(os.environ))
    assert result.returncode == 0, result.stderr[-2000:]
    refusal = next((line[len("refused: "):] for line in result.stdout.splitlines() if line.startswith("refused:")), "")
    return refusal, int(result.stdout.split("peak_rss_kib:")[1])


def replace_system(path, system: str, name: str) -> None:
    """The released scores with `system`'s row named `name` (the Model column comes first)."""
    raw = path.read_text(encoding="utf-8")
    path.write_text(raw.replace(f"\n{system},", f"\n{name},", 1), encoding="utf-8")


def test_a_50_mb_system_name_is_refused_within_a_memory_cap(tmp_path, hanna_mirror):
    path = tmp_path / "hanna_metric_scores.csv"
    path.write_bytes((hanna_mirror / "hanna_metric_scores.csv").read_bytes())
    replace_system(path, "GPT-2", "G" * 50 * 2**20)
    line = len(path.read_bytes().split(b"\n")[6])
    refusal, peak = run_capped(f"read_released_scores({str(path)!r})")
    assert refusal == (f"{path}: line 7 has {line:,} bytes, over the limit of 16,777,216 bytes a line; "
                       "fix: fetch the released file again (delete the copy; the workflow fetches it from a mirror "
                       "or the pinned URL)")
    assert peak < 400 * 1024  # KiB: the interpreter and pandas, the file, and a byte per byte of the file


def test_a_long_system_name_is_refused_before_story_ids_repeat_it(tmp_path, hanna_mirror):
    path = tmp_path / "hanna_metric_scores.csv"
    path.write_bytes((hanna_mirror / "hanna_metric_scores.csv").read_bytes())
    replace_system(path, "GPT-2", "G" * 5 * 2**20)
    refusal, _ = run_capped(f"read_released_scores({str(path)!r})")
    assert refusal.startswith(f"{path}: 5,242,880 characters in column 'Model', data row 6, over the limit of 200 "
                              "for a name; fix: fetch the released file again"), refusal


def test_a_long_story_is_refused(tmp_path, hanna_mirror):
    path = tmp_path / "hanna_llm_stories.csv"
    raw = (hanna_mirror / "hanna_llm_stories.csv").read_text(encoding="utf-8")
    first_story = raw.index('"', raw.index("\n") + 3)
    path.write_text(raw[: first_story + 1] + "x" * 2 * 2**20 + " " + raw[first_story + 1:], encoding="utf-8")
    refusal, _ = run_capped(f"load_hanna_llm({str(path)!r})")
    assert refusal.startswith(f"dataset hanna-llm: {path}: 2,09"), refusal
    assert "characters in column 'Prompt', data row 1, over the limit of 1,048,576 for a cell; fix:" in refusal


def test_a_50_mb_story_in_your_own_table_is_refused(tmp_path):
    from storyeval.text.datasets import read_table_file

    path = tmp_path / "mine.jsonl"
    path.write_text('{"id": "a", "story": "short"}\n{"id": "b", "story": "' + "x" * 50 * 2**20 + '"}\n')
    with pytest.raises(InputError) as error:
        read_table_file(path, "jsonl", f"dataset mine: {path}")
    line = len(path.read_bytes().split(b"\n")[1])
    one_line(error, f"dataset mine: {path}: line 2 has {line:,} bytes, over the limit of 16,777,216 bytes a line")
    path = tmp_path / "mine.csv"
    path.write_text("id,story\na,short\nb," + "x" * 2 * 2**20 + "\n")
    with pytest.raises(InputError) as error:
        read_table_file(path, "csv", f"dataset mine: {path}")
    one_line(error, f"dataset mine: {path}: 2,097,152 characters in column 'story', data row 2, over the limit of "
                    "1,048,576 for a cell; fix: repair or re-export the file")


# Config files are data.

@pytest.mark.parametrize("content, message", [
    ("__use_yte__: true\nstats: {seed: 1}\n", "c.yaml: __use_yte__ makes Snakemake evaluate the file's Python "
                                              "expressions (YTE templating); fix: remove it"),
    ("stats: {seed: !!python/name:os.system }\n", "c.yaml: line 1, the tag !!python/name:os.system makes YAML import "
                                                  "or run Python; fix: write the value itself"),
    ("stats: !!python/object/apply:os.system [true]\n", "c.yaml: line 1, the tag !!python/object/apply:os.system"),
    ("datasets:\n  mine: {kind: table}\n  wp200: {kind: storyer}\n  mine: {kind: storyer}\n",
     "c.yaml: line 4, key 'mine' is given twice in one mapping (the last would win silently); fix: keep one"),
    ("story_id,story\na,once\n", "c.yaml: holds a str, not a mapping of config keys; fix: give a config file here "
                                 "(`--configfile` takes every word after it until the next option"),
])
def test_config_file_that_is_not_plain_data(tmp_path, content, message):
    from storyeval.configfiles import check_config_file

    path = tmp_path / "c.yaml"
    path.write_text(content)
    with pytest.raises(InputError) as error:
        check_config_file(path, "c.yaml")
    one_line(error, message)


def test_merge_keys_are_not_repeated_keys(tmp_path):
    from storyeval.configfiles import check_config_file

    path = tmp_path / "c.yaml"
    path.write_text("base: &base {seed: 1, n_resamples: 10}\nstats:\n  <<: *base\n  seed: 2\n")
    check_config_file(path)


def test_workflow_refuses_a_templated_config_before_running_it(tmp_path, hanna_mirror):
    from workflow_helpers import make_workdir, run_snakemake

    workdir = make_workdir(tmp_path)
    config = (workdir / "config.yaml").read_text()
    (workdir / "config.yaml").write_text(
        "__use_yte__: true\nprobe: ?__import__('pathlib').Path('ran').touch()\n" + config)
    result = run_snakemake(workdir, "-n")
    text = result.stdout + result.stderr
    assert result.returncode != 0
    assert ("config.yaml: __use_yte__ makes Snakemake evaluate the file's Python expressions (YTE templating); "
            "fix: remove it") in text, text[-2000:]
    assert not (workdir / "ran").exists()
