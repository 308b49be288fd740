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
from test_bad_input import SCHEMA, default_config, edit_cell, one_line

from storyeval.api import correlations, score
from storyeval.config import ConfigSources
from storyeval.config_names import COMPUTED_ONLY, check_path_names, check_released
from storyeval.configfiles import check_config_file
from storyeval.data.hanna import read_wide
from storyeval.errors import InputError
from storyeval.limits import check_draws
from storyeval.metrics import catalog
from storyeval.names import absurd_values
from storyeval.pickles import load_restricted
from storyeval.text.datasets import load_storyer, read_table_file

from conftest import REPO
from workflow_helpers import SNAKEMAKE, copy_mirror, make_workdir, run_snakemake

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
                    "Coherence, Empathy, Surprise, Engagement, Complexity, Overall, ")  # then the other datasets'
    assert str(error.value).endswith("; fix: use one of these names")


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


# Metric and judge parameters: one table of types and ranges (storyeval.parameters), checked by the API and held
# by the config schema, before any computation (chrF's char_order=10**9 grew to 2.45 GB; BLEU's
# max_ngram_order=10**6 ran a minute and returned a number).

@pytest.mark.parametrize("call, message", [
    (lambda: score("chrf", ["A tale."], references=["A ref."], char_order=10**9),
     "score: chrf char_order=1000000000: 1000000000 is greater than the maximum of 20; fix: pass an integer from 1 "
     "to 20"),
    (lambda: score("chrf", ["A tale."], references=["A ref."], char_order="x"),
     "score: chrf char_order='x': 'x' is not of type 'integer'; fix: pass an integer from 1 to 20"),
    (lambda: score("bleu", ["A tale."], references=["A ref."], max_ngram_order=10**6),
     "score: bleu max_ngram_order=1000000: 1000000 is greater than the maximum of 20; fix: pass an integer from 1 "
     "to 20"),
    (lambda: score("bleu", ["A tale."], references=["A ref."], tokenize="moses"),
     "score: bleu tokenize='moses': 'moses' is not one of ['none', 'zh', '13a'"),
    (lambda: score("cider", ["A tale."], references=["A ref."], sigma=0),
     "score: cider sigma=0: 0 is less than or equal to the minimum of 0; fix: pass a number above 0"),
    (lambda: score("rouge", ["A tale."], references=["A ref."], stem="yes"),
     "score: rouge stem='yes': 'yes' is not of type 'boolean'; fix: pass true or false"),
    (lambda: score("blanc", ["A tale."], prompts=["P."], references=["R."], options={"finetune_epochs": 10**9}),
     "score: blanc options.finetune_epochs=1000000000: 1000000000 is greater than the maximum of 1000; fix: pass "
     "an integer from 1 to 1000"),
    (lambda: score("supert", ["A tale."], prompts=["P."], references=["R."], variants=["supert-xx"]),
     "score: supert variants[0]='supert-xx': 'supert-xx' is not one of ['supert-ps', 'supert-ss', "
     "'supert-golden']; fix: pass one of supert-ps, supert-ss, supert-golden"),
])
def test_api_metric_parameters_are_bounded(call, message):
    started = time.perf_counter()
    with pytest.raises(InputError) as error:
        call()
    one_line(error, message)
    assert time.perf_counter() - started < 5


def test_api_accepts_numpy_integers_and_tuples():
    assert score("chrf", ["A tale."], references=["A tale."], char_order=np.int64(6)).iloc[0, 0] == 100
    assert list(score("supert", ["A tale."], prompts=["P."], references=["R."], variants=("supert-ps",),
                      model="bundled").columns) == ["supert-ps"]


@pytest.mark.parametrize("key, value, message", [
    ("metric_params", {"chrf": {"char_order": 10**9}},
     "metric_params.chrf.char_order: config rejected, 1000000000 is greater than the maximum of 20; fix:"),
    ("metric_params", {"chrf": {"char_order": "x"}},
     "metric_params.chrf.char_order: config rejected, 'x' is not of type 'integer'; fix:"),
    ("metric_params", {"bleu": {"max_ngram_order": 10**6}},
     "metric_params.bleu.max_ngram_order: config rejected, 1000000 is greater than the maximum of 20; fix:"),
    ("judges", {"max_new_tokens": 10**9},
     "judges.max_new_tokens: config rejected, 1000000000 is greater than the maximum of 4096; fix:"),
])
def test_config_parameters_are_bounded(key, value, message):
    import yaml

    from storyeval.config import check_config

    from conftest import REPO

    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config[key] = {**config.get(key, {}), **value}
    with pytest.raises(InputError) as error:
        check_config(config, REPO / "workflow/schemas/config.schema.yaml")
    one_line(error, f"config.yaml {message}")


# The Makefile checks every config file it passes to Snakemake before Snakemake reads (and YTE-evaluates) it.

YTE = "__use_yte__: true\nprobe: ?__import__('pathlib').Path('ran').touch()\n"


def make_scratch(tmp_path):
    """A folder with the Makefile whose .venv runs the real Snakemake and this checkout's storyeval."""
    import shutil

    from conftest import REPO

    for name in ("Makefile", "requirements.txt", "pyproject.toml"):
        shutil.copy2(REPO / name, tmp_path / name)
    (tmp_path / ".venv/bin").mkdir(parents=True)
    (tmp_path / ".venv/bin/snakemake").symlink_to(REPO / ".venv/bin/snakemake")
    python = tmp_path / ".venv/bin/python"
    python.write_text(f"#!/bin/sh\nPYTHONPATH={REPO / 'src'} exec {REPO / '.venv/bin/python'} \"$@\"\n")
    python.chmod(0o755)
    (tmp_path / ".venv/.storyeval-env").touch()
    (tmp_path / "evil.yaml").write_text(YTE)
    return tmp_path


@pytest.mark.parametrize("target", ["report", "reproduce"])
def test_make_checks_a_config_file_before_snakemake_reads_it(tmp_path, target):
    scratch = make_scratch(tmp_path)
    result = subprocess.run(["make", target, "CONFIG=evil.yaml"], cwd=scratch, capture_output=True, text=True)
    assert result.returncode != 0 and not (scratch / "ran").exists(), result.stdout + result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("storyeval:")]
    assert lines == ["storyeval: evil.yaml: __use_yte__ makes Snakemake evaluate the file's Python expressions (YTE "
                     "templating); fix: remove it and write the values out (a config file is data)"], result.stderr
    direct = subprocess.run([scratch / ".venv/bin/python", "-m", "storyeval.configfiles", "evil.yaml"], cwd=scratch,
                            capture_output=True, text=True)
    assert direct.returncode == 1 and direct.stderr == lines[0] + "\n" and not (scratch / "ran").exists()
    bare = subprocess.run([scratch / ".venv/bin/snakemake", "-n", "--configfile", "evil.yaml"], cwd=scratch,
                          capture_output=True, text=True)
    assert (scratch / "ran").exists(), bare.stderr  # the documented limit: a bare --configfile runs YTE


# Files the workflow wrote that no longer load (a job killed mid-write elsewhere, a full disk, an edit) are
# deleted and refused in one line; the next run rebuilds them.

def cut(path, keep: float = 0.5) -> None:
    content = path.read_bytes()
    path.write_bytes(content[:int(len(content) * keep)])


def test_a_cut_embedding_cache_is_deleted_and_said(tmp_path):
    from storyeval.neural.embeddings import FORMAT, EmbeddingCache, load_cache, save_cache

    path = tmp_path / "results/mine/computed/embeddings/minilm.safetensors"
    path.parent.mkdir(parents=True)
    save_cache(EmbeddingCache(["a b", "c"], np.array([0, 2, 3]), np.array([1, 2, 3]), np.zeros(3, dtype=bool),
                              {1: np.ones((3, 4), np.float32)}, {1: "a", 2: "b", 3: "c"},
                              {"format": FORMAT, "model": "m"}), path)
    for keep in (0, 0.5, 0.99):
        content = path.read_bytes()
        cut(path, keep)
        with pytest.raises(InputError) as error:
            load_cache(path)
        one_line(error, f"embedding cache {path} does not load, damaged or cut (SafetensorError: ",
                 "; deleted it; fix: run the same command again, which rebuilds it")
        assert not path.exists()
        path.write_bytes(content)


@pytest.mark.parametrize("name", ["scores/chrf.parquet", "judges/tiny@geval.parquet"])
def test_a_cut_score_file_is_deleted_and_said(tmp_path, name):
    """A metric's or a judge's score file cut short: merge_scores (which reads both) says so in one line, never
    pyarrow's bare ArrowInvalid, and deletes it, so the next run makes it again."""
    from storyeval.io import read_parquet, write_parquet
    from storyeval.metrics.merge import merge_scores

    path = tmp_path / "results/mine/computed" / name
    write_parquet(pd.DataFrame({"story_id": ["a", "b"], "chrf": [10.0, 20.0]}), path)
    cut(path)
    with pytest.raises(InputError) as error:
        merge_scores([path], catalog.registry_rows())
    one_line(error, f"workflow file {path} does not load, damaged or cut (ArrowInvalid: ",
             "; deleted it; fix: run the same command again, which rebuilds it")
    assert not path.exists()
    with pytest.raises(FileNotFoundError):  # a file never made is the rule's to make, not damaged
        read_parquet(path)


def test_the_next_run_rebuilds_a_cut_score_file(tmp_path, hanna_mirror):
    from conftest import REPO

    (tmp_path / "config/examples").mkdir(parents=True)
    (tmp_path / "config/examples/long.csv").write_bytes((REPO / "config/examples/long.csv").read_bytes())
    entry = yaml_load(REPO / "config/examples/long.yaml")["datasets"]["example"] | {"metrics": ["chrf"]}
    make_workdir(tmp_path, **{"datasets.example": entry})
    target = "results/example/computed/correlations.csv"
    first = run_snakemake(tmp_path, "--cores", "2", target)
    assert first.returncode == 0, first.stderr[-3000:]
    made = (tmp_path / target).read_bytes()
    scores = tmp_path / "results/example/computed/scores/chrf.parquet"
    cut(scores)
    refused = run_snakemake(tmp_path, "--cores", "2", target)
    assert refused.returncode != 0 and not scores.exists()
    assert ("storyeval: workflow file results/example/computed/scores/chrf.parquet does not load, damaged or cut "
            "(ArrowInvalid: ") in refused.stderr, refused.stderr[-3000:]
    assert "; deleted it; fix: run the same command again, which rebuilds it" in refused.stderr
    healed = run_snakemake(tmp_path, "--cores", "2", target)
    assert healed.returncode == 0 and (tmp_path / target).read_bytes() == made, healed.stderr[-3000:]


def yaml_load(path):
    import yaml

    return yaml.safe_load(path.read_text())


def test_a_damaged_file_outside_results_is_left_alone(tmp_path):
    from storyeval.io import read_parquet

    path = tmp_path / "mine.parquet"
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(InputError) as error:
        read_parquet(path)
    one_line(error, f"workflow file {path} does not load, damaged or cut (", "; fix: delete it and run what wrote it")
    assert path.exists()


# Names a spreadsheet would run (CSV injection, OWASP): a whole run of a table dataset that holds them.
FORMULA_SYSTEM, FORMULA_CRITERION, FORMULA_RATER, FORMULA_ID = '=HYPERLINK("http:x","y")', "=1+1", "@x", "+p00"


def hostile_names(frame: pd.DataFrame) -> pd.DataFrame:
    """`rated_stories` with a system, a rater and a story id that spreadsheets read as formulas."""
    frame = frame.assign(model=frame["model"].replace("alpha", FORMULA_SYSTEM),
                         annotator=frame["annotator"].replace("rater0", FORMULA_RATER))
    return frame.assign(id=frame["id"].str.replace(r"^p00-", f"{FORMULA_ID}-", regex=True))


def unescaped_formulas(path) -> list[str]:
    """The cells of a CSV, TSV or Markdown table that a spreadsheet would evaluate."""
    from storyeval.io import FORMULA_STARTS, NUMBER_TEXT

    if path.suffix == ".md":
        rows = [line.strip().strip("|").split("|") for line in path.read_text().splitlines() if line.startswith("|")]
        cells = [cell.strip(" ") for row in rows for cell in row]
        cells = [cell for cell in cells if not re.fullmatch(r":?-+:?", cell)]  # the header's rule
    else:
        import csv

        with open(path, newline="", encoding="utf-8") as file:
            cells = [cell for row in csv.reader(file, delimiter="\t" if path.suffix == ".tsv" else ",")
                     for cell in row]
    return [cell for cell in cells if cell.startswith(FORMULA_STARTS) and not NUMBER_TEXT.fullmatch(cell)]


def test_text_that_is_a_number_stays_and_every_escape_reads_back(tmp_path):
    from storyeval.io import escape_cell, markdown_table, read_table, write_csv

    assert escape_cell("\rx") == "'\rx"  # (a carriage return inside a CSV cell ends the row: no CSV here)
    cells = ["-0.5", "-0.50 [-0.62, -0.30]", "+1e-05", "-1+2", "-cmd|' /C calc'!A0", "'quoted", "=1+1", "@x", "\tx",
             "plain"]
    frame = pd.DataFrame({"text": cells, "number": np.linspace(-0.5, 0.5, len(cells)), "=1+1": "a"})
    write_csv(frame, tmp_path / "t.csv")
    written = pd.read_csv(tmp_path / "t.csv", keep_default_na=False)
    assert list(written["text"]) == ["-0.5", "-0.50 [-0.62, -0.30]", "+1e-05", "'-1+2", "'-cmd|' /C calc'!A0",
                                     "''quoted", "'=1+1", "'@x", "'\tx", "plain"]
    assert list(written.columns) == ["text", "number", "'=1+1"] and written["number"].iloc[0] == -0.5
    pd.testing.assert_frame_equal(read_table(tmp_path / "t.csv", ["text"]), frame)
    write_csv(frame, tmp_path / "t.tsv", sep="\t")
    pd.testing.assert_frame_equal(read_table(tmp_path / "t.tsv", ["text"], sep="\t"), frame)
    table = markdown_table(frame)
    assert "| -0.50 [-0.62, -0.30] |" in table and "| '=1+1 " in table and "| -0.5 " in table


def test_formula_names_reach_no_table_unescaped(tmp_path, hanna_mirror):
    from storyeval.examples import rated_stories
    from storyeval.io import read_table

    path = tmp_path / "mine.csv"
    hostile_names(rated_stories(prompts=6)).to_csv(path, index=False)
    entry = {"kind": "table", "path": "mine.csv", "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
             "columns": {"story_id": "id", "prompt": "prompt", "system": "model", "story": "text",
                         "reference": "human_story", "rater": "annotator",
                         "criteria": {FORMULA_CRITERION: "fluency", "Plot": "plot_score", "Delight": "delight"}},
             "metrics": ["textstats", "bleu"]}
    make_workdir(tmp_path, **{"datasets.mine": entry, "stats.n_resamples": 100, "meta.n_permutations": 100,
                              "meta.n_resamples": 100})
    result = run_snakemake(tmp_path, "--cores", "2", "dataset_mine")
    assert result.returncode == 0, result.stderr[-3000:]
    tables = [path for suffix in ("csv", "tsv", "md") for path in (tmp_path / "results/mine").rglob(f"*.{suffix}")]
    assert len(tables) > 30
    assert {path.name: unescaped_formulas(path) for path in tables if unescaped_formulas(path)} == {}
    escaped = {name: "'" + name for name in (FORMULA_SYSTEM, FORMULA_CRITERION)}
    tab4 = (tmp_path / "results/mine/computed/tables/tab4_system_means.csv").read_text()
    assert all(text in tab4 for text in ['"\'=HYPERLINK(""http:x"",""y"")"', "'=1+1"]), tab4[:300]
    assert escaped[FORMULA_SYSTEM] in (tmp_path / "results/mine/computed/tables/tab4_system_means.md").read_text()
    # Read back, the names are the users' again.
    means = read_table(tmp_path / "results/mine/computed/system_means.csv", ["system", "criterion"])
    assert FORMULA_SYSTEM in set(means["system"]) and FORMULA_CRITERION in set(means["criterion"])
    ratings = read_table(tmp_path / "results/mine/data/rater_ratings.csv", ["story_id", "rater"])
    assert FORMULA_RATER in set(ratings["rater"]) and any(ratings["story_id"].str.startswith(f"{FORMULA_ID}-"))


# Careless own tables: each message names the real cause, the file, the row and a fix that works.
OWN = {"story_id": "id", "prompt": "prompt", "system": "model", "story": "text", "reference": "human_story",
       "rater": "annotator", "criteria": {"Fluency": "fluency", "Plot": "plot_score", "Delight": "delight"}}


def own_table(tmp_path, frame, name="mine.csv", columns=OWN, **entry):
    """`frame` written as `name` (CSV unless `sep`), read as dataset mine."""
    from storyeval.datasets import describe

    frame.to_csv(tmp_path / name, index=False, sep=entry.pop("sep", ","))
    return describe({"kind": "table", "columns": columns, **entry}, "mine").load(tmp_path / name, "mine")


def with_rating(value, column="fluency", row=3):
    from storyeval.examples import rated_stories

    frame = rated_stories(prompts=4).astype({column: object})
    frame.loc[row, column] = value
    return frame


def test_a_semicolon_file_with_decimal_commas_says_so_and_reads_with_its_keys(tmp_path):
    frame = with_rating("4,5")
    with pytest.raises(InputError) as error:
        own_table(tmp_path, frame, sep=";")
    assert one_line(error, "dataset mine: ", "mine.csv: the delimiter is ';', not ',' (line 1, the header, has 9 "
                    "columns at ';' and 1 at ','); fix: add delimiter: \";\" to datasets.mine, or re-export the file "
                    "with ',' between cells")
    with pytest.raises(InputError) as error:
        own_table(tmp_path, frame, sep=";", delimiter=";")
    assert one_line(error, "mine.csv: '4,5' in column 'fluency', data row 4, has a decimal comma (1 such cells); "
                    "fix: add decimal: \",\" to the dataset's entry, or re-export the file with decimal points")
    data = own_table(tmp_path, frame, sep=";", delimiter=";", decimal=",")
    rated = data.ratings.set_index(["story_id", "criterion", "worker"])["rating"]
    assert rated[(frame.loc[3, "id"], "Fluency", frame.loc[3, "annotator"])] == 4.5
    with pytest.raises(InputError, match=r"the delimiter is '\\t', not ',' .*fix: add delimiter: \"\\t\" to "):
        own_table(tmp_path, frame, sep="\t")  # a TSV named .csv


def test_the_delimiter_and_decimal_keys_are_checked_by_the_schema():
    import yaml

    from storyeval.config import check_config

    for key, value in (("delimiter", ";;"), ("decimal", "'")):
        config = yaml.safe_load((REPO / "config.yaml").read_text())
        config["datasets"]["mine"] = {"kind": "table", "path": "mine.csv", "sha256": "0" * 64,
                                      "columns": {"story_id": "id", "story": "text"}, key: value}
        with pytest.raises(InputError, match=rf"config.yaml datasets.mine.{key}: config rejected, {value!r} is not "
                                             "one of"):
            check_config(config, SCHEMA, ConfigSources())


@pytest.mark.parametrize("value, what", [("inf", "is non-finite, which no rating is"),
                                         ("-Infinity", "is non-finite, which no rating is"),
                                         ("1e308", "is beyond 1e+100 in size, which no rating is")])
def test_non_finite_and_absurd_ratings_are_refused_without_a_numpy_warning(tmp_path, value, what):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a numpy RuntimeWarning fails the test
        for integer in (False, True):
            with pytest.raises(InputError) as error:
                own_table(tmp_path, with_rating(value), integer=integer)
            assert one_line(error, f"mine.csv: '{value}' in column 'fluency', data row 4, {what} (1 such cells); fix: ")


def test_ratings_without_a_scale_are_stated_and_an_outlier_warned(tmp_path):
    from storyeval.text.fit import fit_to_data

    frame = with_rating("2e6")
    data = own_table(tmp_path, frame)
    _, notes = fit_to_data(data)
    ratings = frame[["fluency", "plot_score", "delight"]].astype(float)
    ranges = ", ".join(f"{name} {ratings[column].min():g} to {ratings[column].max():g}"
                       for name, column in OWN["criteria"].items())
    assert notes[-1] == (f"ratings with no declared scale: {ranges} (declare datasets.mine.scale: [min, max] to have "
                        "every rating checked)")
    low, high = np.percentile(ratings["fluency"], [25, 75])
    assert ratings["fluency"].max() == 2e6 and high + 1000 * (high - low) < 2e6  # the bulk is 1-5
    assert data.warning == (
        f"warning: dataset mine: {tmp_path / 'mine.csv'} data row 4: rating 2e+06 on 'Fluency' lies over 1,000 "
        f"interquartile ranges outside the bulk of its ratings (quartiles {low:g} and {high:g}; 1 such ratings): "
        "correlations and means include it; fix: correct it, or declare datasets.mine.scale: [min, max] to have "
        "ratings outside it refused")
    assert own_table(tmp_path, with_rating("500")).warning is None  # far, but within 1,000 ranges of the bulk
    declared = own_table(tmp_path, with_rating("5"), scale=[1, 5])
    assert declared.notes == () and declared.warning is None


def test_the_workflow_states_the_range_and_warns_once(tmp_path, hanna_mirror):
    path = tmp_path / "mine.csv"
    with_rating("2e6").to_csv(path, index=False)
    entry = {"kind": "table", "path": "mine.csv", "sha256": hashlib.sha256(path.read_bytes()).hexdigest(),
             "columns": OWN, "metrics": ["textstats"]}
    make_workdir(tmp_path, **{"datasets.mine": entry})
    result = run_snakemake(tmp_path, "--cores", "1", "results/mine/data/texts.parquet")
    assert result.returncode == 0, result.stderr[-3000:]
    said = [line for line in result.stderr.splitlines() if line.startswith("storyeval: ")]
    assert sum("ratings with no declared scale: " in line and "Fluency 1 to 2e+06" in line for line in said) == 1
    assert sum(line.startswith("storyeval: warning: dataset mine: mine.csv data row 4: rating 2e+06") for line in
               said) == 1


def test_an_empty_own_file_is_named_as_empty(tmp_path):
    from storyeval.datasets import describe

    for suffix in ("csv", "parquet"):
        (tmp_path / f"mine.{suffix}").write_bytes(b"")
        with pytest.raises(InputError) as error:
            describe({"kind": "table", "columns": OWN}, "mine").load(tmp_path / f"mine.{suffix}", "mine")
        assert one_line(error, f"mine.{suffix}: the file is empty (0 bytes); fix: export the rated stories into it, "
                        "a header row first, or correct datasets.mine.path")
        assert "fetch" not in str(error.value)


def test_a_story_id_given_twice_names_the_id_and_both_rows(tmp_path):
    from storyeval.examples import rated_stories

    frame = rated_stories(prompts=2).drop_duplicates("id").drop(columns="annotator")
    twice = pd.concat([frame, frame.iloc[[1]].assign(text="Another text.")], ignore_index=True)
    with pytest.raises(InputError) as error:
        own_table(tmp_path, twice, columns={key: value for key, value in OWN.items() if key != "rater"})
    assert one_line(error, "mine.csv: story id 'p00-beta' is on data rows 2 and 11; fix: one row per story, or name "
                    "the rater column under datasets.mine.columns.rater")


@pytest.mark.parametrize("criteria, fix", [(["a/b", "a-b"], "criterion 'a/b' is not a safe name (no / \\ .. or "
                                            "control characters, at most 200 characters, some letter or digit), "
                                            "datasets.mine.columns.criteria; fix: rename it, e.g. a-b 2"),
                                           (["a-b", "A B", "a b 2"], "criterion names 'a-b' and 'A B' both become "
                                            "'a-b' in file names, datasets.mine.columns.criteria; fix: rename one, "
                                            "e.g. A B 3")])
def test_a_suggested_rename_collides_with_no_other_criterion(tmp_path, criteria, fix):
    from storyeval.examples import rated_stories

    frame = rated_stories(prompts=2).assign(**{name: 3 for name in criteria})
    frame.loc[0, criteria] = 4
    with pytest.raises(InputError) as error:
        own_table(tmp_path, frame, columns={**OWN, "criteria": criteria})
    assert one_line(error, fix)


def test_a_read_only_results_folder_is_one_line_before_any_job(tmp_path, hanna_mirror):
    """Start-up names the folder and the fix (root runs without the capability to write past permissions)."""
    import shutil

    from storyeval.examples import rated_stories

    rated_stories(prompts=2).to_csv(tmp_path / "mine.csv", index=False)
    entry = {"kind": "table", "path": "mine.csv", "columns": OWN, "metrics": ["textstats"],
             "sha256": hashlib.sha256((tmp_path / "mine.csv").read_bytes()).hexdigest()}
    make_workdir(tmp_path, **{"datasets.mine": entry})
    (tmp_path / "results").mkdir()
    (tmp_path / "results").chmod(0o555)
    unprivileged = []
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("root writes past permissions, and setpriv is absent to drop that capability")
        unprivileged = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]
    result = subprocess.run([*unprivileged, SNAKEMAKE, "-s", str(REPO / "Snakefile"), "--directory", str(tmp_path),
                             "--workflow-profile", "none", "--cores", "1", "results/mine/data/texts.parquet"],
                            cwd=tmp_path, env=dict(os.environ, MPLBACKEND="Agg"), capture_output=True, text=True,
                            timeout=600)
    said = result.stdout + result.stderr
    assert result.returncode != 0
    assert ("results: results is not writable (Permission denied), and the run writes its outputs under results; "
            "fix: make it writable (chmod -R u+w results), or run in a directory you can write (snakemake "
            "--directory DIR)") in said, said[-3000:]
    assert "OSError" not in said and not (tmp_path / "logs").exists()
    (tmp_path / "results").chmod(0o755)
