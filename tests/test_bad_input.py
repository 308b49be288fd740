"""What bad input gets: one line naming the file (or config key and its file), where, and the fix; no output.

Package-level checks first; then a few real workflow runs for the start-up checks (runs that must stop before
planning any job).
"""

import hashlib
import pickle
import re
import struct

import pandas as pd
import pytest
import yaml

from storyeval.config import ConfigSources, check_config, check_consistency
from storyeval.data.csvfile import read_csv_strings
from storyeval.data.fetch import local_copy
from storyeval.data.hanna import read_released_scores, released_registry
from storyeval.data.recorded import record_checksum
from storyeval.datasets import metric_names
from storyeval.errors import InputError
from storyeval.pickles import load_restricted
from storyeval.text.datasets import load_hanna_llm

from conftest import HANNA_MIRROR, REPO
from workflow_helpers import copy_mirror, make_workdir, run_snakemake, set_dotted

SCHEMA = REPO / "workflow/schemas/config.schema.yaml"
SCORES = "hanna_metric_scores.csv"
CHRF = "chrF Ξ§"


def one_line(error: pytest.ExceptionInfo, *pieces: str) -> str:
    """The message is one line, of the form '<file or key>: <what>, <where>; fix: <fix>', holding `pieces`."""
    message = str(error.value)
    assert "\n" not in message and re.fullmatch(r"\S.*: .+; fix: .+", message), message
    for piece in pieces:
        assert piece in message, message
    return message


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def mirror(tmp_path, hanna_mirror):
    return copy_mirror(tmp_path)


def edit_cell(path, column: str, system: str, prompt: int, value: str) -> None:
    """Replace one value of a released list (the file stays a valid CSV)."""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    row = frame.index[frame["Model"] == system][0]
    values = frame.at[row, column][1:-1].split(", ")
    values[prompt] = value
    frame.at[row, column] = f"[{', '.join(values)}]"
    frame.to_csv(path, index=False)


# 1. A fetched copy under resources/ is verified on every start, against the pinned or the recorded sha256.

def test_edited_fetched_copy_is_refused(mirror, tmp_path):
    fetched = tmp_path / "resources/hanna" / SCORES
    fetched.parent.mkdir(parents=True)
    fetched.write_bytes((mirror / SCORES).read_bytes())
    pinned = sha(fetched)
    assert local_copy(fetched, [mirror], pinned, tmp_path / "rec.tsv") == fetched
    edit_cell(fetched, CHRF, "GPT-2", 3, "0.99")
    with pytest.raises(InputError) as error:
        local_copy(fetched, [mirror], pinned, tmp_path / "rec.tsv")
    one_line(error, f"{fetched}: sha256 ", f"does not match the pinned {pinned}", "fix: delete it")


def test_fetched_copy_pinned_null_checks_the_recorded_sha256(tmp_path):
    fetched = tmp_path / "resources/hanna/annotations.csv"
    fetched.parent.mkdir(parents=True)
    fetched.write_text("a,b\n1,2\n")
    recorded = tmp_path / "resources/recorded-checksums.tsv"
    with pytest.raises(InputError) as error:
        local_copy(fetched, [], None, recorded)
    one_line(error, f"{fetched}: no sha256 pinned", f"in {recorded}", "fix: delete the file")
    record_checksum(recorded, fetched.name, sha(fetched))
    assert local_copy(fetched, [], None, recorded) == fetched
    fetched.write_text("a,b\n1,3\n")
    with pytest.raises(InputError) as error:
        local_copy(fetched, [], None, recorded)
    one_line(error, "does not match the pinned", "fix: delete it")


# 2. A mirror file is verified before its header is read; the header reader itself refuses damage in one line.

def test_empty_mirror_file_fails_its_checksum_not_a_metric_lookup(mirror, tmp_path):
    (mirror / SCORES).write_bytes(b"")
    with pytest.raises(InputError) as error:
        local_copy(tmp_path / "resources/hanna" / SCORES, [mirror], sha(HANNA_MIRROR / SCORES), tmp_path / "r.tsv")
    one_line(error, f"{mirror / SCORES}: sha256 e3b0c442", "does not match the pinned", "fix: replace it")


@pytest.mark.parametrize("content, where", [(b"", "the file is empty, line 1"),
                                            (b"Model,BLEU \xce\xa7\xff\xfe\n", "line 1 (byte 13) is not UTF-8")])
def test_damaged_header_is_one_line(tmp_path, content, where):
    path = tmp_path / SCORES
    path.write_bytes(content)
    with pytest.raises(InputError) as error:
        released_registry(path)
    one_line(error, f"{path}: {where}", "fix: fetch the released file again")


# 3. Released score lists: finite numbers only; truncated, header-only, empty and non-UTF-8 files.

@pytest.mark.parametrize("value", ["inf", "-inf", "nan"])
def test_non_finite_released_score(mirror, value):
    edit_cell(mirror / SCORES, CHRF, "GPT-2", 17, value)
    with pytest.raises(InputError) as error:
        read_released_scores(mirror / SCORES)
    one_line(error, f"{mirror / SCORES}: non-finite value {float(value)} (1 in this list), column '{CHRF}', "
                    "system 'GPT-2', prompt 17; fix: fetch the released file again")


def test_non_numeric_released_score(mirror):
    edit_cell(mirror / SCORES, CHRF, "GPT-2", 5, "0.1x")
    with pytest.raises(InputError) as error:
        read_released_scores(mirror / SCORES)
    one_line(error, "non-numeric value '0.1x'", f"column '{CHRF}', system 'GPT-2', prompt 5", "fix:")


@pytest.mark.parametrize("cut, message", [
    (lambda text: text[: text.index("[", len(text) // 2) + 20], "not a well-formed CSV file, truncated or damaged "
                                                               "(Error tokenizing data. C error: EOF inside string"),
    (lambda text: text[: text.index('",', len(text) // 2) + 1], "an empty cell (a cut-off row?), column"),
    (lambda text: text[: text.index("\n") + 1], "a header and no data rows, line 2"),
    (lambda text: "", "the file is empty, line 1"),
])
def test_truncated_released_file(mirror, cut, message):
    path = mirror / SCORES
    path.write_text(cut(path.read_text(encoding="utf-8")), encoding="utf-8")
    with pytest.raises(InputError) as error:
        read_released_scores(path)
    one_line(error, f"{path}: {message}", "fix: fetch the released file again")


def test_non_utf8_released_file(mirror):
    path = mirror / SCORES
    raw = path.read_bytes()
    second_line = raw.index(b"\n") + 1
    path.write_bytes(raw[:second_line] + b"\xff" + raw[second_line:])
    with pytest.raises(InputError) as error:
        read_released_scores(path)
    one_line(error, f"{path}: line 2 (byte {second_line}) is not UTF-8 (invalid start byte): 0xff; fix:")


def test_header_only_stories_file(tmp_path):
    path = tmp_path / "hanna_llm_stories.csv"
    path.write_text("Prompt,Human,Story,Model\n")
    with pytest.raises(InputError) as error:
        load_hanna_llm(path)
    one_line(error, f"dataset hanna-llm: {path}: a header and no data rows, line 2", "fix:")


def test_annotation_ratings_must_be_finite_numbers(tmp_path):
    path = tmp_path / "annotations.csv"
    path.write_text("Story ID,Relevance\n0,3\n1,inf\n2,\n")
    with pytest.raises(InputError) as error:
        read_csv_strings(path, numbers=["Story ID", "Relevance"])
    one_line(error, f"{path}: 'inf' is not a finite number (2 such cells), column 'Relevance', data row 2", "fix:")


# 4. Constraints between config keys, named with the file the key came from.

CROWD = {"kind": "table", "layout": "long", "columns": {"story_id": "id", "story": "text", "score": "rating"},
         "files": [{"path": "a.csv", "sha256": "0" * 64, "criterion": "Coherence"}]}


def default_config(overrides: dict | None = None, **changes) -> dict:
    """config.yaml, `overrides` merged as a config file would be, the schema's defaults filled, then `changes`
    (dotted keys) set."""
    from snakemake.utils import update_config, validate

    config = yaml.safe_load((REPO / "config.yaml").read_text())
    update_config(config, overrides or {})
    validate(config, str(SCHEMA))
    for name, entry in config["datasets"].items():  # `metrics: all`, as the workflow expands it at start-up
        entry["metrics"] = metric_names(entry, name)
    return set_dotted(config, changes)


@pytest.mark.parametrize("changes, message", [
    ({"stats.topk.k_min": 6, "stats.topk.k_max": 5},
     "stats.topk.k_min: 6 is larger than stats.topk.k_max (5); fix: set k_min <= k_max"),
    ({"embedding.stride": 64},
     "embedding.stride: set, but embedding.policy is truncate; fix: set stride: null, or policy: sliding"),
    ({"embedding.stride": 64, "embedding.policy": "sliding", "embedding.max_length": 64},
     "embedding.stride: 64 is not below embedding.max_length (64); fix:"),
    ({"data.mirrors.storyr": ["x"]}, "data.mirrors.storyr: not a data source, its mirrors are never searched; fix:"),
    ({"models.sentence_encoder": {"name": "all-minilm-l6-v2", "path": "/elsewhere"}},
     "models.sentence_encoder.name: 'all-minilm-l6-v2' also names models.encoder, a different model"),
    ({"datasets.wp200.file": "storyer/train_rate"},
     "datasets.wp200.file: storyer/train_rate is data/train_rate_reason_data_small.json, but a storyer dataset "
     "reads a .pkl file; fix:"),
    ({"datasets.wp200.file": "storyer/wp100"}, "datasets.wp200.file: no pinned file 'wp100' under storyer.files"),
    ({"datasets.hanna.kind": "hanna-llm", "datasets.hanna.file": "hanna/stories_llm"},
     "datasets.hanna.kind: hanna-llm, but results/hanna holds HANNA's released scores"),
    ({"metric_params.chrf": {"order": 6}}, "metric_params.chrf: unknown parameter(s) ['order']; fix: use"),
    ({"datasets.crowd": {**CROWD, "path": "crowd.csv"}}, "datasets.crowd.files: given beside path:, url: or "
     "sha256: of the entry; fix: give each file's path: (or url:) and sha256: under files:, or use path: alone"),
    ({"datasets.crowd": {**CROWD, "files": [CROWD["files"][0], {"path": "b.csv", "criterion": "Plot"}]}},
     "datasets.crowd.files[1].sha256: missing: your file is checked against its sha256 before any job; fix: add "
     "sha256: <the output of `sha256sum b.csv`>"),
    ({"datasets.crowd": {**CROWD, "files": [{**CROWD["files"][0], "url": "https://example.org/a.csv"}]}},
     "datasets.crowd.files[0].path: both path and url given; fix: give the file's local path: or its pinned url:"),
    ({"metric_directions": {"Txt length": "lower"}},
     "metric_directions: unknown metric 'Txt length'; fix: use a metric column's slug or label"),
])
def test_inconsistent_config(changes, message):
    with pytest.raises(InputError) as error:
        check_consistency(default_config(**changes))
    one_line(error, f"config.yaml {message}")


def test_the_default_configs_are_consistent():
    check_consistency(default_config())
    check_consistency(default_config(yaml.safe_load((REPO / "config/paper.yaml").read_text())))


def test_no_two_score_files_write_one_column(tmp_path):
    """Under config.yaml and config/paper.yaml every dataset's metric jobs write distinct files of distinct
    columns (what merge_scores joins); two files that do write one column are named, both, in one line."""
    from storyeval.metrics import catalog
    from storyeval.metrics.merge import merge_scores
    from storyeval.workflow import metrics

    for config in (default_config(), default_config(yaml.safe_load((REPO / "config/paper.yaml").read_text()))):
        for dataset in config["datasets"]:
            enabled = metrics.enabled(config, dataset)
            stems = [metrics.stem(config, metric) for metric in enabled]
            columns = [slug for metric in enabled for slug in catalog.entry(metric).columns]
            assert len(set(stems)) == len(stems) and len(set(columns)) == len(columns), dataset
    scores = pd.DataFrame({"story_id": ["a", "b"], "text-length": [3.0, 4.0]})
    for name in ("datastats.parquet", "textstats.parquet"):
        scores.to_parquet(tmp_path / name)
    with pytest.raises(InputError) as error:
        merge_scores([tmp_path / "datastats.parquet", tmp_path / "textstats.parquet"], catalog.registry_rows())
    one_line(error, f"{tmp_path}/textstats.parquet: score column 'text-length' is also written by {tmp_path}/"
                    "datastats.parquet; fix: let one metric or judge write it")


# Console: a config error names the file (or --config) that set the key.

def test_origin_is_the_last_source_that_sets_the_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "config.yaml").write_text("stats: {topk: {k_min: 4, k_max: 10}}\n")
    (tmp_path / "other.yaml").write_text("stats: {topk: {k_max: 3}}\nfigures: {dpi: 10}\n")
    sources = ConfigSources.from_workflow([tmp_path / "other.yaml", "config.yaml"], [tmp_path / "other.yaml"],
                                          {"analysis": {"top_k": 2}})
    assert sources.files == ("config.yaml", "other.yaml")
    assert sources.origin("stats.topk.k_min") == "config.yaml"
    assert sources.origin("stats.topk.k_min", "stats.topk.k_max") == "other.yaml"
    assert sources.origin("analysis.top_k") == "--config"
    assert sources.origin("analysis.levels") == "other.yaml"  # set nowhere: the last file
    with pytest.raises(InputError) as error:
        check_config({"figures": {"dpi": 10}}, SCHEMA, sources)
    one_line(error, "other.yaml figures.dpi: config rejected, 10 is less than the minimum of 50; fix:")
    with pytest.raises(InputError) as error:
        check_consistency(default_config(**{"stats.topk.k_max": 3}), sources)
    one_line(error, "other.yaml stats.topk.k_min: 4 is larger than stats.topk.k_max (3)")


# 5. Malformed pickles: every one is a single InputError line.

@pytest.mark.parametrize(
    "payload, message",
    [
        (b"\x80\x04\x8d" + struct.pack("<Q", 1 << 62) + b"abc.", "not a readable pickle (pickle data was truncated)"),
        (
            b"\x80\x04\x8e" + struct.pack("<Q", 1 << 62) + b"abc.",
            "not a readable pickle (it declares a length beyond memory)",
        ),
        (b"\x80\x04\x95" + struct.pack("<Q", 1 << 62) + b"K\x01.", "not a readable pickle (pickle data was truncated)"),
        (
            b"\x80\x04" + b"]" * 100_000 + b"a" * 99_999 + b".",
            "containers nested deeper than 100 levels, in top-level item 0",
        ),
        (b"\x80\x04K\x01" + b"\x85" * 100_000 + b".", "containers nested deeper than 100 levels, in top-level item 0"),
        (b"\x80\x04h\x05.", "not a readable pickle (Memo value not found at index 5), near byte"),
        (b"", "not a readable pickle (Ran out of input), near byte 0 of 0"),
    ],
)
def test_malformed_pickle_is_one_line(tmp_path, payload, message):
    path = tmp_path / "bad.pkl"
    path.write_bytes(payload)
    with pytest.raises(InputError) as error:
        load_restricted(path)
    one_line(error, f"{path}: {message}", "fix: fetch the released file again")


def test_shallow_released_layout_still_loads(tmp_path):
    path = tmp_path / "ok.pkl"
    data = [["prompt", "story a", "story b", 1, 1]] * 3 + [{"k": [("v", 1.0)]}]
    path.write_bytes(pickle.dumps(data, protocol=4))
    assert load_restricted(path) == data


# The workflow: start-up checks stop a dry run before any job; a job's content check fails that job alone.


def refused_at_startup(result, workdir, message: str) -> None:
    text = result.stdout + result.stderr
    assert result.returncode != 0 and message in text, text[-3000:]
    line = next(line for line in text.splitlines() if message in line)
    assert re.fullmatch(r"\S.*: .+; fix: .+", line), line
    assert "Job stats" not in text and not (workdir / "results").exists()


def test_workflow_reverifies_fetched_copy(tmp_path, hanna_mirror):
    workdir = make_workdir(tmp_path)
    fetched = workdir / "resources/hanna" / SCORES
    fetched.parent.mkdir(parents=True)
    fetched.write_bytes((hanna_mirror / SCORES).read_bytes())
    edit_cell(fetched, CHRF, "GPT-2", 3, "0.99")
    refused_at_startup(run_snakemake(workdir, "-n"), workdir, f"resources/hanna/{SCORES}: sha256 ")


def test_workflow_checks_mirror_before_reading_its_header(tmp_path, hanna_mirror):
    mirror = copy_mirror(tmp_path)
    (mirror / SCORES).write_bytes(b"")
    workdir = make_workdir(tmp_path / "work", **{"data.mirrors.hanna": [str(mirror)]})
    refused_at_startup(
        run_snakemake(workdir, "-n"),
        workdir,
        f"{mirror / SCORES}: sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    )


def test_workflow_names_the_configfile_of_a_bad_key(tmp_path, hanna_mirror):
    workdir = make_workdir(tmp_path)
    (workdir / "other.yaml").write_text("stats: {topk: {k_min: 9, k_max: 5}}\n")
    result = run_snakemake(workdir, "-n", "--configfile", "config.yaml", "other.yaml")
    refused_at_startup(result, workdir, "other.yaml stats.topk.k_min: 9 is larger than stats.topk.k_max (5); fix:")
    result = run_snakemake(workdir, "-n", "--config", "figures={representative_metrics: [chrF, BLEURT]}")
    refused_at_startup(result, workdir, "--config figures.representative_metrics: unknown metric 'BLEURT'; fix:")


def test_workflow_refuses_inf_in_a_pinned_released_file_at_startup(tmp_path, hanna_mirror):
    """A released file whose pin was changed to a copy holding inf: refused before any job (the start-up checks
    read the verified file), one line, no output."""
    mirror = copy_mirror(tmp_path)
    edit_cell(mirror / SCORES, CHRF, "GPT-2", 17, "inf")
    workdir = make_workdir(
        tmp_path / "work", **{"data.mirrors.hanna": [str(mirror)], "hanna.files.scores.sha256": sha(mirror / SCORES)}
    )
    refused_at_startup(
        run_snakemake(workdir, "--cores", "1", "results/hanna/data/stories.csv"),
        workdir,
        f"{mirror / SCORES}: non-finite value inf (1 in this list), column '{CHRF}', system 'GPT-2', prompt 17; "
        "fix: fetch the released file again",
    )
