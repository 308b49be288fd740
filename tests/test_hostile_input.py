"""Hostile and careless input: bounded reads, names that become paths, shared-reference pickles, names that must
exist in the data, resampling counts that must fit, the Python API's arguments, config files as data, absurd values.

Each case's message is the one docs/bad-input.md shows.
"""

import hashlib
import importlib
import os
import pickle
import re
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
from test_bad_input import default_config, edit_cell, one_line

from storyeval.api import correlations, score
from storyeval.config import ConfigSources
from storyeval.configfiles import check_config_file
from storyeval.data.hanna import read_wide
from storyeval.errors import InputError
from storyeval.limits import check_draws
from storyeval.metrics import catalog
from storyeval.names import COMPUTED_ONLY, absurd_values, check_path_names, check_released
from storyeval.pickles import load_restricted
from storyeval.text.datasets import load_storyer, read_table_file

from workflow_helpers import copy_mirror, make_workdir, run_snakemake

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
    path = tmp_path / "c.yaml"
    path.write_text(content)
    with pytest.raises(InputError) as error:
        check_config_file(path, "c.yaml")
    one_line(error, message)


def test_merge_keys_are_not_repeated_keys(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("base: &base {seed: 1, n_resamples: 10}\nstats:\n  <<: *base\n  seed: 2\n")
    check_config_file(path)


def test_workflow_refuses_a_templated_config_before_running_it(tmp_path, hanna_mirror):
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


# Names that become paths; names that must exist in the data they name.

TABLE = {"kind": "table", "path": "mine.csv", "sha256": "0" * 64, "metrics": ["chrf"],
         "columns": {"story_id": "id", "story": "text", "reference": "ref"}}


def config_with(**changes) -> dict:
    return default_config(**changes)


@pytest.mark.parametrize("datasets, message", [
    ({"../../outside_ds": TABLE}, "datasets.../../outside_ds: '../../outside_ds' is not a safe name (it is the folder "
                                  "results/<name>: letters, digits, _ . -, at most 64, no ..); fix: rename it, e.g. "
                                  "outside_ds"),
    ({"..": TABLE}, "datasets...: '..' is not a safe name"),
    ({"a/b": TABLE}, "datasets.a/b: 'a/b' is not a safe name (it is the folder results/<name>: letters, digits, _ . -, "
                     "at most 64, no ..); fix: rename it, e.g. a-b"),
    ({"my-set": TABLE, "my_set": TABLE}, "datasets.my_set: 'my_set' and 'my-set' map to the same files"),
    ({"Mine": TABLE, "mine": TABLE}, "datasets.mine: 'mine' and 'Mine' map to the same files"),
    ({"mine": {**TABLE, "columns": {**TABLE["columns"], "criteria": ["a/b", "Plot"]}}},
     "datasets.mine.columns.criteria: criterion 'a/b' is not a safe name (no / \\ .. or control characters"),
    ({"mine": {**TABLE, "columns": {**TABLE["columns"], "criteria": ["a-b", "A B"]}}},
     "datasets.mine.columns.criteria: criterion names 'a-b' and 'A B' both become 'a-b' in file names; "
     "fix: rename one, e.g. A B 2"),
])
def test_names_that_become_paths(datasets, message):
    config = config_with()
    config["datasets"].update(datasets)
    with pytest.raises(InputError) as error:
        check_path_names(config, ConfigSources())
    one_line(error, f"config.yaml {message}")


def test_model_names_are_safe_file_names():
    config = config_with(**{"models.encoder": {"name": "..", "path": "bundled"}})
    with pytest.raises(InputError) as error:
        check_path_names(config, ConfigSources())
    one_line(error, "config.yaml models.encoder.name: '..' is not a safe name (part of file names")
    check_path_names(config_with(), ConfigSources())


def released_columns(tmp_path, hanna_mirror, edit=None):


    path = tmp_path / "hanna_metric_scores.csv"
    frame = pd.read_csv(hanna_mirror / "hanna_metric_scores.csv", dtype=str, keep_default_na=False)
    (edit or (lambda frame: frame))(frame).to_csv(path, index=False)
    return read_wide(path), str(path)


def test_the_reference_system_must_exist(tmp_path, hanna_mirror):
    columns, path = released_columns(tmp_path, hanna_mirror)
    assert check_released(columns, path, config_with(), ConfigSources()) is None
    with pytest.raises(InputError) as error:
        check_released(columns, path, config_with(**{"hanna.reference_system": "NoSuchSystem"}), ConfigSources())
    one_line(error, f"config.yaml hanna.reference_system: no system 'NoSuchSystem' in {path}, whose systems are "
                    "Human, BertGeneration, CTRL, GPT, GPT-2 (tag), GPT-2, RoBERTa, XLNet, Fusion, HINT, TD-VAE; fix:")


def test_a_configured_metric_missing_from_the_released_scores(tmp_path, hanna_mirror):
    columns, path = released_columns(tmp_path, hanna_mirror, lambda frame: frame.drop(columns="chrF Ξ§"))
    with pytest.raises(InputError) as error:
        check_released(columns, path, config_with(), ConfigSources())
    message = one_line(error, f"config.yaml figures.representative_metrics: metric 'chrF' is not in {path}, whose "
                              "metrics are BLEU, ROUGE-1 Recall,", "fix: restore the released file")
    assert "METEOR, CIDEr" in message and "chrF" not in message.split("whose metrics are")[1]


def test_configured_criteria_must_exist(tmp_path, hanna_mirror):
    columns, path = released_columns(tmp_path, hanna_mirror)
    with pytest.raises(InputError) as error:
        check_released(columns, path, config_with(**{"reanalysis.top_k_criteria": ["Relevance", "Plot"]}),
                       ConfigSources())
    one_line(error, "config.yaml reanalysis.top_k_criteria: criterion 'Plot' does not exist; there are Relevance, "
                    "Coherence, Empathy, Surprise, Engagement, Complexity, Overall; fix: use one of these names")


def test_released_system_names_whose_story_ids_collide(tmp_path, hanna_mirror):
    columns, path = released_columns(tmp_path, hanna_mirror,
                                     lambda frame: frame.replace({"Model": {"GPT": "GPT 2", "GPT-2": "gpt-2"}}))
    with pytest.raises(InputError) as error:
        check_released(columns, path, config_with(), ConfigSources())
    one_line(error, f"{path}: system names 'GPT 2' and 'gpt-2' both become 'gpt-2' in story ids, column 'Model'")
    columns, path = released_columns(tmp_path, hanna_mirror,
                                     lambda frame: frame.replace({"Model": {"GPT": "../GPT"}}))
    with pytest.raises(InputError) as error:
        check_released(columns, path, config_with(), ConfigSources())
    one_line(error, f"{path}: system '../GPT' is not a safe name", "fix: rename it, e.g. GPT")


def test_released_metric_slugs_are_safe_names(tmp_path, hanna_mirror):
    columns, path = released_columns(tmp_path, hanna_mirror, lambda frame: frame.rename(columns={"BLEU Ξ§": ".. Ξ§"}))
    with pytest.raises(InputError) as error:
        check_released(columns, path, config_with(), ConfigSources())
    one_line(error, f"{path}: metric column '.. Ξ§' has the slug '..', not a safe name")


def test_computed_only_metrics_are_those_the_release_lacks(released):
    assert COMPUTED_ONLY == set(catalog.registry_rows()) - set(released.registry["slug"])


def test_absurd_values_get_one_warning_line(tmp_path, hanna_mirror):
    def edit(frame):
        row = frame.index[frame["Model"] == "GPT-2"][0]
        for column, prompt, value in (("chrF Ξ§", 17, "1e308"), ("Coherence", 3, "40.0")):
            values = frame.at[row, column][1:-1].split(", ")
            values[prompt] = value
            frame.at[row, column] = f"[{', '.join(values)}]"
        return frame

    columns, path = released_columns(tmp_path, hanna_mirror)
    assert absurd_values(columns, path) is None
    columns, path = released_columns(tmp_path, hanna_mirror, edit)
    assert absurd_values(columns, path) == (
        f"warning: {path}: 2 absurd value(s) (beyond 1e+100, or a criterion outside 1-5), the first 40 in column "
        "'Coherence', data row 6 (system 'GPT-2'), prompt 3: correlations and means include them; check the file")


def test_resampling_counts_must_fit_into_memory():
    check_draws(1000, 96, 11, 78, "config.yaml stats.n_resamples", memory=2**30)
    with pytest.raises(InputError) as error:
        check_draws(10**7, 96, 11, 78, "config.yaml stats.n_resamples", memory=16 * 2**30)
    one_line(error, "config.yaml stats.n_resamples: 10,000,000 draws of 96 prompts x 11 systems x 78 columns need "
                    "about 721.0 GiB, over half the 16.0 GiB available; fix: use at most 110,958")


def test_workflow_stops_on_a_name_the_data_lack(tmp_path, hanna_mirror):
    workdir = make_workdir(tmp_path, **{"hanna.reference_system": "NoSuchSystem"})
    result = run_snakemake(workdir, "-n")
    text = result.stdout + result.stderr
    assert result.returncode != 0 and "Job stats" not in text, text[-3000:]
    assert "config.yaml hanna.reference_system: no system 'NoSuchSystem' in " in text, text[-3000:]
    workdir = make_workdir(tmp_path / "other")
    (workdir / "big.yaml").write_text("meta: {n_permutations: 10000000}\n")
    result = run_snakemake(workdir, "-n", "--configfile", "big.yaml")
    text = result.stdout + result.stderr
    assert result.returncode != 0 and "Job stats" not in text, text[-3000:]
    assert re.search(r"big\.yaml meta\.n_permutations: 10,000,000 draws of 96 prompts x 11 systems x 78 columns "
                     r"need about 721\.0 GiB, over half the [\d.,]+ GiB available; fix: use at most [\d,]+", text)


# The Python API checks its arguments; each refusal says what to pass.

@pytest.mark.parametrize("call, message", [
    (lambda score: score("textstats", "abc"), "textstats: stories is one str, not a list (a string would be read as "
                                              "3 one-character stories); fix: pass a list of stories, e.g. [text]"),
    (lambda score: score("textstats", b"abc"), "textstats: stories is one bytes, not a list"),
    (lambda score: score("textstats", None), "textstats: stories is NoneType; fix: pass a list of stories (str)"),
    (lambda score: score("textstats", 3), "textstats: stories is int; fix: pass a list of stories (str)"),
    (lambda score: score("textstats", ["A tale.", None]), "textstats: story 1 is NoneType, not str; fix:"),
    (lambda score: score("textstats", ["A tale.", 7]), "textstats: story 1 is int, not str; fix:"),
    (lambda score: score("textstats", [b"A tale."]), "textstats: story 0 is bytes, not str; fix: pass a list of "
                                                     "stories (str; decode bytes first)"),
    (lambda score: score("chrf", ["A tale."], references="A ref."), "chrf: references is one str, not a list"),
    (lambda score: score("textstats", ["A tale."], n_gram=3), "score: textstats has no parameter 'n_gram'; fix: use"),
    (lambda score: score("textstats", ["A tale.", "B."], story_ids=["a"]),
     "textstats: 1 story_ids for 2 stories; fix: pass one per story"),
    (lambda score: score("textstats", ["A tale."], story_ids="a"), "textstats: story_ids is str; fix: pass a list"),
    (lambda score: score(None, ["A tale."]), "score: metric is NoneType; fix: name it, one of"),
    (lambda score: score("textstats", ["x" * (2**20 + 1)]), "textstats: story 0: 1,048,577 characters, over the "
                                                            "limit of 1,048,576 for a text; fix: shorten it"),
])
def test_api_score_arguments(call, message):
    with pytest.raises(InputError) as error:
        call(score)
    one_line(error, message)


def test_api_correlations_arguments():


    scores = pd.DataFrame({"bleu": [1.0, 2.0, 3.0]}, index=["a", "b", "c"])
    human = pd.DataFrame({"Plot": [1.0, 3.0, 2.0]}, index=scores.index)
    assert len(correlations(scores, human))
    five = pd.DataFrame({"bleu": [1.0, np.nan, 3.0, 2.0, 5.0]}, index=list("abcde"))
    gappy = correlations(five, pd.DataFrame({"Plot": [1.0, 3.0, 2.0, 2.0, 4.0]}, index=five.index))
    assert gappy["missing"].max() == 1  # a missing value is dropped, and counted
    cases = [
        (lambda: correlations(None), "correlations: scores is NoneType, not a DataFrame; fix: pass a story x metric"),
        (lambda: correlations(scores.assign(bleu=[1.0, np.inf, 3.0]), human),
         "correlations: scores holds inf (not a finite number) in column 'bleu', story 'b' (1 such cells); fix:"),
        (lambda: correlations(scores, human.assign(Plot=["n/a", 1.0, 2.0])),
         "correlations: human holds n/a (not a finite number) in column 'Plot', story 'a'"),
        (lambda: correlations(scores, human, systems="abc"), "correlations: systems is str; fix: pass a list"),
        (lambda: correlations(scores, human, systems=["x", "y"]), "correlations: 2 systems for 3 stories; fix:"),
        (lambda: correlations(scores, human, coefficients="pearson"), "correlations: coefficients 'pearson'; fix: "
                                                                      "pass a list of pearson, spearman, kendall"),
    ]
    for call, message in cases:
        with pytest.raises(InputError) as error:
            call()
        one_line(error, message)


@pytest.mark.parametrize("function, key", [("storyeval.stats.pairwise.pairwise_pvalues", "meta.n_permutations"),
                                           ("storyeval.stats.bootstrap.pairwise_labels", "stats.n_resamples")])
def test_a_job_checks_its_draws_fit_before_allocating(function, key):


    module, name = function.rsplit(".", 1)
    values = np.random.default_rng(0).random((4, 3, 2))
    with pytest.raises(InputError) as error:
        getattr(importlib.import_module(module), name)(values, 10**15)
    one_line(error, f"{key}: 1,000,000,000,000,000 draws of 4 prompts x 3 systems x 2 columns need about", "fix: use "
                                                                                                          "at most")


def test_workflow_warns_once_on_an_absurd_released_value(tmp_path, hanna_mirror):



    mirror = copy_mirror(tmp_path)
    edit_cell(mirror / "hanna_metric_scores.csv", "chrF Ξ§", "GPT-2", 17, "1e308")
    pinned = hashlib.sha256((mirror / "hanna_metric_scores.csv").read_bytes()).hexdigest()
    workdir = make_workdir(tmp_path / "work", **{"data.mirrors.hanna": [str(mirror)],
                                                 "hanna.files.scores.sha256": pinned})
    result = run_snakemake(workdir, "--cores", "1", "resources/hanna/LICENSE")
    text = result.stdout + result.stderr
    warning = (f"storyeval: warning: {mirror}/hanna_metric_scores.csv: 1 absurd value(s) (beyond 1e+100, or a "
               "criterion outside 1-5), the first 1e+308 in column 'chrF Ξ§', data row 6 (system 'GPT-2'), prompt 17: "
               "correlations and means include them; check the file")
    assert result.returncode == 0 and text.count(warning) == 1, text[-3000:]


def test_command_line_config_files_snakemake_reads_first(tmp_path, hanna_mirror):
    """Snakemake reads each --configfile before any workflow code: a Python tag it resolves is refused after the
    fact, naming the file; a file its loader refuses, or a target read as a config file, gets Snakemake's own
    message, which names no file (docs/bad-input.md says so)."""
    workdir = make_workdir(tmp_path)
    (workdir / "bad.yaml").write_text("stats: {seed: !!python/name:os.system }\n")
    (workdir / "apply.yaml").write_text("stats: !!python/object/apply:os.getpid []\n")
    (workdir / "x.csv").write_text("story_id,story\na,once\n")
    expected = {
        ("bad.yaml",): "bad.yaml: line 1, the tag !!python/name:os.system makes YAML import or run Python; fix:",
        ("apply.yaml",): "Config file is not valid JSON or YAML.",
        ("config.yaml", "x.csv"): "Config file must be given as JSON or YAML with keys at top level.",
        ("config.yaml", "results/x.csv"): "FileNotFoundError: [Errno 2] No such file or directory: 'results/x.csv'",
    }
    for files, message in expected.items():
        result = run_snakemake(workdir, "-n", "--configfile", *files)
        text = result.stdout + result.stderr
        assert result.returncode != 0 and message in text, text[-2000:]


def test_llm_system_names_become_story_ids(tmp_path, hanna_mirror):
    from storyeval.text.datasets import load_hanna_llm

    frame = pd.read_csv(hanna_mirror / "hanna_llm_stories.csv", dtype=str, keep_default_na=False)
    path = tmp_path / "hanna_llm_stories.csv"
    frame.replace({"Model": {"Llama-7b": "llama 7b", "Mistral-7b": "Llama-7B"}}).to_csv(path, index=False)
    with pytest.raises(InputError) as error:
        load_hanna_llm(path)
    one_line(error, f"dataset hanna-llm: {path}: system names 'llama 7b' and 'Llama-7B' both become 'llama-7b' in "
                    "story ids, column 'Model'; fix: rename one")
