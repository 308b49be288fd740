"""Judge prompts as a batch run elsewhere (storyeval.judges.batch): exported as OpenAI batch JSONL, answered line by
line by a fake served judge (its rating follows the prompt's length), imported back into the table that the same
judge served on the loopback address gives; results that do not answer the export are refused in one line, and a
failed request is a parse failure of its prompt."""

import hashlib
import json
import math
import threading

import pandas as pd
import pytest

from tiny_models import CORPUS, completions_server
from workflow_helpers import make_workdir, run_snakemake

CRITERIA = {"Flow": "how smoothly the story reads", "Plot": "how interesting the plot is"}
PROMPTS = ["Write about a dragon.", "Write about a knight.", "Write about a letter.", "Write about rain."]


def complete(prompt: str, request: dict) -> tuple[dict, int]:
    """The fake served judge: rating 1 + len(prompt) % 5 most likely (its next one after it), as a served model
    answers (text in mode generate, the top next tokens' logprobs in mode expected); a pairwise prompt (text) gets
    A with probability 0.7 where story A is the longer, else 0.3, whichever order."""
    if "Story B:" in prompt:
        first, second = (len(prompt.split(f"Story {label}: ")[1].split("\n")[0]) for label in "AB")
        p = 0.7 if first > second else 0.3
        return {"text": " A", "logprobs": {"top_logprobs": [{" A": math.log(p), " B": math.log(1 - p)}]}}, 1
    rating = 1 + len(prompt) % 5
    choice = {"text": f" {rating}" if request.get("logprobs") else f"Rating: {rating}"}
    if request.get("logprobs"):
        choice["logprobs"] = {"top_logprobs": [{f" {rating}": math.log(0.6), f" {rating % 5 + 1}": math.log(0.3),
                                                " the": math.log(0.1)}]}
    return choice, len(prompt.split())


def answer_batch(prompts, results, edit=lambda number, record: record):
    """The batch runner: each request of the export `prompts` answered by `complete`, written to `results` as
    OpenAI's batch output (`edit(line number, record)` changes a record, None leaves its line out)."""
    lines = []
    for number, line in enumerate(prompts.read_text().splitlines(), 1):
        request = json.loads(line)
        choice, tokens = complete(request["body"]["prompt"], request["body"])
        record = edit(number, {"id": f"req-{number}", "custom_id": request["custom_id"], "error": None, "response": {
            "status_code": 200, "body": {"choices": [choice | {"index": 0}], "usage": {"prompt_tokens": tokens}}}})
        lines += [] if record is None else [json.dumps(record)]
    results.write_text("\n".join(lines) + "\n")
    return results


@pytest.fixture(scope="module")
def server():
    asked = []
    httpd = completions_server(lambda prompt, request: (asked.append((prompt, request)), complete(prompt, request))[1])
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1", asked
    httpd.shutdown()


@pytest.fixture
def job():
    from storyeval.api import texts_table
    from storyeval.judges.prompts import load_template

    texts = texts_table(CORPUS[:4], prompts=PROMPTS, story_ids=["s1", "s/2", "s3", "s 4"])
    return texts, CRITERIA, load_template("tacl-1")


@pytest.fixture
def exported(job, tmp_path):
    from storyeval.judges.batch import export
    from storyeval.judges.rate import Settings

    prompts = tmp_path / "prompts.jsonl"
    assert export(prompts, *job, Settings(), served="judge-7b", dataset="mine") == 8
    return prompts


@pytest.mark.parametrize("mode", ["expected", "generate"])
def test_an_imported_batch_is_the_served_run(job, server, tmp_path, mode):
    """Each line is the served request's body with one prompt; the imported table is the served run's."""
    from storyeval.judges.batch import export, rate_batch
    from storyeval.judges.rate import Settings, rate

    url, asked = server
    settings = Settings(mode=mode, batch_size=3)
    served = rate(*job, url, settings, served="judge-7b")
    prompts = tmp_path / "prompts.jsonl"
    export(prompts, *job, settings, served="judge-7b", dataset="mine")
    requests = [json.loads(line) for line in prompts.read_text().splitlines()]
    assert {(r["method"], r["url"]) for r in requests} == {("POST", "/v1/completions")}
    assert requests[2]["custom_id"].startswith("mine/s%2F2/Flow/tacl-1/o0/")
    assert [r["body"]["prompt"] for r in requests] == [prompt for prompt, _ in asked[-8:]]
    assert {json.dumps(r["body"] | {"prompt": None}) for r in requests} == {json.dumps(asked[-1][1] | {"prompt": None})}
    imported = rate_batch(*job, answer_batch(prompts, tmp_path / "results.jsonl"), settings, served="judge-7b",
                          dataset="mine")
    pd.testing.assert_frame_equal(imported[0], served[0])
    pd.testing.assert_frame_equal(imported[1], served[1])
    assert imported[2] | {"device": url} == served[2] and served[2]["parse_failures"] == 0


def test_a_pairwise_batch_is_the_served_run(server, tmp_path):
    """Mode pairwise: each pair in both orders, named in its custom_id (o0 as drawn, o1 swapped); the imported
    verdicts are the served run's, and the fake judge, which prefers the longer story in either order, is
    position-consistent on every pair and picks the first story as often as the second."""
    from storyeval.api import texts_table
    from storyeval.judges.batch import export, rate_batch
    from storyeval.judges.prompts import load_template
    from storyeval.judges.rate import Settings, rate

    texts = texts_table(CORPUS[:5] + ["Rain fell."], prompts=PROMPTS[:2] * 3,
                        story_ids=["s1", "s/2", "s3", "s4", "s5", "s6"])
    job, settings = (texts, CRITERIA, load_template("pairwise")), Settings(mode="pairwise", batch_size=4)
    served = rate(*job, server[0], settings, served="judge-7b")
    prompts = tmp_path / "prompts.jsonl"
    assert export(prompts, *job, settings, served="judge-7b", dataset="mine") == 2 * 3 * 2 * 2  # prompts x pairs
    names = [json.loads(line)["custom_id"] for line in prompts.read_text().splitlines()]
    assert names[0].startswith("mine/s1 vs s3/Flow/pairwise/o0/")
    assert names[2].startswith("mine/s1 vs s3/Flow/pairwise/o1/")
    imported = rate_batch(*job, answer_batch(prompts, tmp_path / "results.jsonl"), settings, served="judge-7b",
                          dataset="mine")
    pd.testing.assert_frame_equal(imported[0], served[0])
    pd.testing.assert_frame_equal(imported[1], served[1])
    assert served[2]["pairs"] == 6 and served[2]["position_consistency"] == 1 and served[2]["first_share"] == 0.5
    longest = texts.set_index("story_id")["story"].str.len().groupby(texts.set_index("story_id")["prompt_id"]).idxmax()
    assert (served[0].loc[list(longest), "Flow"] == 1).all()  # wins both its pairs


def test_the_command_line_exports_and_imports(job, tmp_path, capsys):
    from storyeval.judges.batch import main, rate_batch
    from storyeval.judges.rate import Settings

    texts, _, template = job
    texts[["story_id", "story", "prompt"]].to_csv(tmp_path / "texts.csv", index=False)
    common = ["--texts", str(tmp_path / "texts.csv"), "--dataset", "mine", "--served", "judge-7b", "--criteria",
              *(f"{name}={definition}" for name, definition in CRITERIA.items())]
    assert main(["export", str(tmp_path / "prompts.jsonl"), *common]) == 0
    results = answer_batch(tmp_path / "prompts.jsonl", tmp_path / "results.jsonl")
    assert main(["import", str(results), str(tmp_path / "scores.csv"), *common]) == 0
    assert "8 ratings written" in capsys.readouterr().out
    scores = pd.read_csv(tmp_path / "scores.csv", dtype={"story_id": str}).set_index("story_id")
    expected = rate_batch(texts, CRITERIA, template, results, Settings(), served="judge-7b", dataset="mine")[0]
    pd.testing.assert_frame_equal(scores, expected.rename_axis("story_id"), atol=1e-9)
    assert main(["import", str(tmp_path / "prompts.jsonl"), str(tmp_path / "scores.csv"), *common]) == 1
    assert "prompts.jsonl line 1: neither a response nor an error" in capsys.readouterr().err


def unknown(number, record):
    return record if number != 3 else record | {"custom_id": "other/s1/Flow/tacl-1/o0/0123456789abcdef"}


def tampered(number, record):
    return record if number != 2 else record | {"custom_id": record["custom_id"][:-4] + "beef"}


def missing(number, record):
    return None if number == 5 else record


def repeated(number, record):
    return record | {"custom_id": "x"} if number == 1 else record


@pytest.mark.parametrize("edit, message", [
    (unknown, r"results.jsonl line 3: custom_id 'other/s1/Flow/tacl-1/o0/0123456789abcdef' is not one of this job's "
              r"8 requests .*; fix: export again"),
    (tampered, r"results.jsonl line 2: custom_id 'mine/s1/Plot/tacl-1/o0/\w+beef' answers another request than this "
               r"job sends \(its body hash differs.*; fix: export again"),
    (missing, r"results.jsonl: no line for 1 of the job's 8 requests \(first: 'mine/s3/Flow/tacl-1/o0/\w+'\); fix: "),
])
def test_results_that_do_not_answer_the_export_are_refused(job, exported, tmp_path, edit, message):
    from storyeval.errors import InputError
    from storyeval.judges.batch import rate_batch
    from storyeval.judges.rate import Settings

    results = answer_batch(exported, tmp_path / "results.jsonl", edit)
    with pytest.raises(InputError, match=message):
        rate_batch(*job, results, Settings(), served="judge-7b", dataset="mine")


def test_repeated_lines_and_changed_prompts_are_refused(job, exported, tmp_path):
    """A line twice, and results of an export whose criteria definitions changed since (another prompt)."""
    from storyeval.errors import InputError
    from storyeval.judges.batch import rate_batch
    from storyeval.judges.rate import Settings

    results = answer_batch(exported, tmp_path / "results.jsonl")
    twice = tmp_path / "twice.jsonl"
    twice.write_text(results.read_text() + results.read_text().splitlines()[2] + "\n")
    with pytest.raises(InputError, match=r"twice.jsonl line 9: custom_id '.*' repeats line 3; fix: keep one line"):
        rate_batch(*job, twice, Settings(), served="judge-7b", dataset="mine")
    texts, criteria, template = job
    with pytest.raises(InputError, match=r"results.jsonl line 1: .*its body hash differs"):
        rate_batch(texts, criteria | {"Flow": "how well it flows"}, template, results, Settings(), served="judge-7b",
                   dataset="mine")
    with pytest.raises(InputError, match=r"results.jsonl line 1: .*its body hash differs"):
        rate_batch(*job, results, Settings(top_logprobs=5), served="judge-7b", dataset="mine")


def test_a_shard_reads_its_lines_of_the_whole_batch(job, exported, tmp_path):
    """A sharded judge job (partial) takes its stories' lines of the dataset's results and skips the others'."""
    from storyeval.errors import InputError
    from storyeval.judges.batch import rate_batch
    from storyeval.judges.rate import Settings

    texts, criteria, template = job
    results = answer_batch(exported, tmp_path / "results.jsonl")
    whole = rate_batch(*job, results, Settings(), served="judge-7b", dataset="mine")[0]
    shard = rate_batch(texts.iloc[1:3], criteria, template, results, Settings(), served="judge-7b", dataset="mine",
                       partial=True)[0]
    pd.testing.assert_frame_equal(shard, whole.iloc[1:3])
    with pytest.raises(InputError, match=r"results.jsonl line 1: .* is not one of this job's 4 requests"):
        rate_batch(texts.iloc[1:3], criteria, template, results, Settings(), served="judge-7b", dataset="mine")


def test_failed_requests_are_parse_failures_of_their_prompts(job, exported, tmp_path):
    from storyeval.judges.batch import rate_batch
    from storyeval.judges.rate import Settings

    def fail(number, record):
        if number == 2:
            return record | {"response": None, "error": {"code": "batch_expired", "message": "not run in time"}}
        if number == 7:
            return record | {"response": {"status_code": 400, "body": {"error": {"message": "maximum context"}}}}
        return record

    results = answer_batch(exported, tmp_path / "results.jsonl", fail)
    scores, details, counts = rate_batch(*job, results, Settings(), served="judge-7b", dataset="mine")
    failed = details[details["failure"] != ""]
    assert list(failed["failure"]) == ["server error"] * 2 and counts["parse_failures"] == 2
    assert "not run in time" in failed["answer"].iloc[0] and "HTTP 400" in failed["answer"].iloc[1]
    assert int(scores.isna().sum().sum()) == 2 and scores.notna().sum().sum() == 6


def test_the_workflow_exports_a_job_and_reads_its_results(tmp_path, hanna_mirror):
    """Rule judge_batch writes a judge job's requests; with the runner's output as the judge's batch_results, rule
    llm_judge reads it instead of a server: the ratings rate_batch gives on the job's texts."""
    from storyeval.judges.batch import rate_batch
    from storyeval.judges.prompts import load_template
    from storyeval.judges.rate import Settings

    rows = [{"id": f"s{k}", "prompt": PROMPTS[k % 4], "model": f"m{k % 2}", "text": CORPUS[k % 5], "rater": "r0",
             "flow": 1 + k % 5, "plot": 1 + k * 2 % 5} for k in range(6)]
    pd.DataFrame(rows).to_csv(tmp_path / "mine.csv", index=False)
    columns = {"story_id": "id", "prompt": "prompt", "system": "model", "story": "text", "rater": "rater",
               "criteria": {"Flow": "flow", "Plot": "plot"}}
    digest = hashlib.sha256((tmp_path / "mine.csv").read_bytes()).hexdigest()
    make_workdir(tmp_path, **{
        "datasets.mine": {"kind": "table", "path": "mine.csv", "sha256": digest, "columns": columns, "metrics": []},
        "judges.models": {"big": {"path": "vllm run-batch", "served": "judge-7b",
                                  "batch_results": "ran/{dataset}-{judge}@{template}.jsonl"}},
        "judges.templates": ["geval"], "judges.datasets.mine": {"criteria": CRITERIA}, "device": "cpu"})
    job = "results/mine/computed/judges/big@geval"
    exported = run_snakemake(tmp_path, "--cores", "1", f"{job}.batch.jsonl")
    assert exported.returncode == 0, exported.stderr[-3000:]
    (tmp_path / "ran").mkdir()
    results = answer_batch(tmp_path / f"{job}.batch.jsonl", tmp_path / "ran/mine-big@geval.jsonl")
    judged = run_snakemake(tmp_path, "--cores", "1", f"{job}.parquet")
    assert judged.returncode == 0, judged.stderr[-3000:]
    texts = pd.read_parquet(tmp_path / "results/mine/data/texts.parquet")
    scores = rate_batch(texts, CRITERIA, load_template("geval"), results, Settings(),
                        served="judge-7b", dataset="mine")[0]
    written = pd.read_parquet(tmp_path / f"{job}.parquet").set_index("story_id")
    assert written.to_numpy().tolist() == scores.to_numpy().tolist() and scores.notna().all().all()
    signature = json.loads((tmp_path / f"{job}.signature.json").read_text())
    assert signature["model"]["batch_results"] == "ran/mine-big@geval.jsonl"


def test_a_batch_results_pattern_with_other_fields_is_refused():
    from storyeval.errors import InputError
    from storyeval.judges.config import check_judges

    config = {"judges": {"templates": ["geval"], "datasets": {}, "models": {
        "big": {"path": "vllm run-batch", "batch_results": "ran/{story}.jsonl"}}}}
    with pytest.raises(InputError, match=r"judges.models.big.batch_results: 'ran/\{story\}.jsonl' does not format "
                                         r"\(KeyError\('story'\)\); fix: use only the fields \{dataset\}"):
        check_judges(config)
