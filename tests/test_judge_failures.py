"""A judge in mode generate that cannot answer for some stories never stops a run: its unparsable answers are NaN,
every statistic uses the cells it has and counts the ones it dropped. A served judge (an OpenAI-compatible
completions server on the loopback address) answers "Rating: k" for most prompts and nothing usable for chosen
ones: judge `one` fails on one story and criterion, judge `many` on 30 % of its (story, criterion) prompts, drawn
once with a seed, so the failures are the same on every run; judge `same` always answers 3 (a constant column:
no correlation, and no warning about it); judge `never` answers nothing usable (left out of every statistic,
said on the landing page); judge `broken` is a malformed server: an {"error": ...} body for the request holding
one story, fewer choices than prompts for another's, HTTP 400 for a third's (each a parse failure of the prompts
it concerns)."""

import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pandas as pd
import pytest

from tiny_models import CORPUS
from workflow_helpers import make_workdir, run_snakemake

SYSTEMS = ["alpha", "beta", "gamma", "delta", "epsilon"]
CRITERIA = {"Flow": "how smoothly the story reads", "Plot": "how interesting the plot is"}
PROMPTS = 8
CELLS = [(f"p{prompt}-{system}", criterion)
         for prompt in range(PROMPTS) for system in SYSTEMS for criterion in CRITERIA]
FAILS = {"one": {("p1-gamma", "Flow")},
         "many": {CELLS[k] for k in np.random.default_rng(0).choice(len(CELLS), len(CELLS) * 3 // 10, replace=False)}}
BATCH = 8  # judges.batch_size's default: prompts a request
MALFORMED = {"p2-alpha": "error", "p5-beta": "short", "p6-gamma": "400"}  # in three different requests
BROKEN = 2 * BATCH + 1  # two whole requests (error body, HTTP 400) and one prompt without its choice


def answer(served: str, prompt: str) -> str:
    """The served judge's answer: a rating from a hash of the prompt, or none for the (story, criterion) in
    FAILS[served] (the story's id closes its text, the criterion's name is in the prompt)."""
    story = re.search(r"\(story (p\d+-\w+)\)", prompt).group(1)
    criterion = re.search(r"story.s (\w+) \(", prompt).group(1)
    digest = int(hashlib.sha256(prompt.encode()).hexdigest(), 16)
    if served == "same":
        return "Rating: 3"
    if served == "never":
        return "No answer."
    if served == "broken":
        return f"Rating: {1 + digest % 5}"
    return "No answer." if (story, criterion) in FAILS[served] else f"Rating: {1 + digest % 5}"


@pytest.fixture(scope="module")
def server():
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            choices = [{"index": k, "text": answer(request["model"], prompt)}
                       for k, prompt in enumerate(request["prompt"])]
            body, status = {"choices": choices, "usage": {"prompt_tokens": 0}}, 200
            held = {MALFORMED.get(re.search(r"\(story (p\d+-\w+)\)", prompt).group(1)) for prompt in request["prompt"]}
            if request["model"] == "broken" and "error" in held:
                body = {"error": {"message": "CUDA out of memory", "type": "InternalServerError"}}
            elif request["model"] == "broken" and "short" in held:
                body["choices"] = choices[:-1]
            elif request["model"] == "broken" and "400" in held:
                body, status = {"object": "error", "message": "This model's maximum context length is 2048"}, 400
            body = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    httpd.shutdown()


def stories(prompts: int = PROMPTS) -> pd.DataFrame:
    rng = np.random.default_rng(5)
    rows = []
    for prompt in range(prompts):
        for rank, system in enumerate(SYSTEMS):
            text = " ".join(CORPUS[(prompt + k) % len(CORPUS)] for k in range(rank % 3 + 1))
            for rater in range(2):
                rows.append({"id": f"p{prompt}-{system}", "prompt": f"Write about topic {prompt}.", "model": system,
                             "text": f"{text} (story p{prompt}-{system})", "rater": f"r{rater}",
                             "flow": int(rng.integers(1, 6)), "plot": int(rng.integers(1, 6))})
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def failing(tmp_path_factory, server, hanna_mirror):
    workdir = tmp_path_factory.mktemp("failing")
    stories().to_csv(workdir / "mine.csv", index=False)
    columns = {"story_id": "id", "prompt": "prompt", "system": "model", "story": "text", "rater": "rater",
               "criteria": {"Flow": "flow", "Plot": "plot"}}
    digest = hashlib.sha256((workdir / "mine.csv").read_bytes()).hexdigest()
    mine = {"kind": "table", "path": "mine.csv", "sha256": digest, "columns": columns, "metrics": ["textstats"]}
    models = {name: {"path": server, "served": name} for name in ("one", "many", "same", "never", "broken")}
    make_workdir(workdir, **{
        "datasets.mine": mine, "judges.models": models, "judges.mode": "generate", "judges.templates": ["tacl-1"],
        "judges.datasets.mine": {"criteria": CRITERIA}, "device": "cpu",  # config.yaml's hanna-llm stays judged
        "stats.topk.metrics": ["Text length"],  # Fig. 8's statistic runs on this set's cubes too
    })
    start = time.perf_counter()
    result = run_snakemake(workdir, "--cores", "2", "dataset_mine")
    print(f"dataset_mine with failing judges: rc {result.returncode}, {time.perf_counter() - start:.0f} s")
    return workdir, result


def test_parse_failures_never_stop_a_run(failing):
    workdir, result = failing
    assert result.returncode == 0, result.stderr[-3000:]
    judges = workdir / "results/mine/computed/judges"
    failures = {name: json.loads((judges / f"{name}@tacl-1.signature.json").read_text())["parse_failures"]
                for name in ("one", "many", "broken")}
    assert failures == {"one": 1, "many": 24, "broken": BROKEN}  # 1 and 30 % of 40 stories x 2 criteria
    registry = pd.read_csv(workdir / "results/mine/computed/metrics.csv").set_index("slug")
    missing = {slug: int(pd.read_parquet(judges / f"{name}@tacl-1.parquet")[slug].isna().sum())
               for name in ("one", "many", "broken") for slug in registry.index if slug.startswith(f"judge-{name}-")}
    assert sum(missing.values()) == sum(failures.values())
    print("parse failures", failures, "missing cells per judge column", missing)
    # each statistic says what it dropped: the failures of the judge column (and none of the metrics')
    for name, column in (("correlations", "x"), ("topk", "metric"), ("bootstrap_f1", "metric")):
        table = pd.read_csv(workdir / f"results/mine/computed/{name}.csv")
        counted = table.drop_duplicates(column).set_index(column)["missing"]
        assert {slug: counted[slug] for slug in missing if slug in counted.index} == \
            {slug: n for slug, n in missing.items() if slug in counted.index}, name
        assert (table.loc[~table[column].isin(list(missing)), "missing"] == 0).all() or name == "correlations"
    meta = pd.read_csv(workdir / "results/mine/computed/meta/correlations.csv")
    assert set(meta.loc[meta["missing"] > 0, "metric"]) == {slug for slug, n in missing.items() if n}
    logs = "".join(path.read_text() for path in (workdir / "logs").rglob("*.log"))
    assert "cells without a value (NaN), each statistic uses the cells it has" in logs
    # and the report's pages say it beside the figure or table
    page = (workdir / "results/mine/computed/report/fig26_bootstrap_f1.html").read_text()
    assert "Stories without a value, left out of the statistic" in page and "many Flow (tacl-1) " in page
    meta_pages = [path.read_text() for path in (workdir / "results/mine/computed/report").glob("*meta_best*.html")]
    assert meta_pages and all("Stories without a value" in text for text in meta_pages)


def test_no_runtime_warnings_and_the_signature_names_dtype_and_device(failing):
    workdir, result = failing
    logs = "".join(path.read_text() for path in (workdir / "logs").rglob("*.log"))
    assert "RuntimeWarning" not in logs + result.stderr
    signature = json.loads((workdir / "results/mine/computed/judges/many@tacl-1.signature.json").read_text())
    assert signature["dtype"] == "served" and signature["device"].startswith("http://127.0.0.1")


def test_startup_plans_only_the_asked_datasets_judges(failing):
    """config.yaml's judges.datasets keeps hanna-llm; the run asked for dataset_mine, so start-up plans mine's."""
    _, result = failing
    said = result.stdout + result.stderr
    assert "judge many with template tacl-1 on mine" in said
    assert "on hanna-llm" not in said and "on hanna:" not in said


def test_a_layered_config_judges_only_the_datasets_it_names(failing, tmp_path):
    """config.yaml judges hanna, hanna-llm and mine; a --configfile naming judges.datasets mine replaces that list:
    the dry run of `all` plans mine's judge jobs and no other dataset's."""
    workdir, _ = failing
    layer = tmp_path / "mine-only.yaml"
    layer.write_text(json.dumps({"judges": {"datasets": {"mine": {"criteria": CRITERIA}}}}))
    dry = run_snakemake(workdir, "-n", "--forceall", "--configfile", str(layer))
    assert dry.returncode == 0, dry.stderr[-2000:]
    assert "results/mine/computed/judges/many@tacl-1.parquet" in dry.stdout
    assert "results/hanna-llm/computed/judges" not in dry.stdout and "results/hanna/computed/judges" not in dry.stdout


def test_a_judge_that_never_answers_is_left_out_and_said(failing):
    """Judge `never` parses on none of its 80 prompts: the run finishes, its columns are left out of every
    statistic with one log line each and a note on the landing page (ratings, three raw answers, the fix)."""
    workdir, result = failing
    assert result.returncode == 0, result.stderr[-3000:]
    signature = json.loads((workdir / "results/mine/computed/judges/never@tacl-1.signature.json").read_text())
    assert signature["parse_failures"] == len(CELLS)
    registry = pd.read_csv(workdir / "results/mine/computed/metrics.csv")
    assert not registry["slug"].str.startswith("judge-never-").any()
    assert registry["slug"].str.startswith("judge-broken-").sum() == len(CRITERIA)
    left = pd.read_csv(workdir / "results/mine/computed/left_out_judges.csv")
    assert sorted(left["slug"]) == [f"judge-never-tacl-1-{name.lower()}" for name in sorted(CRITERIA)]
    assert (left["rated"] == 0).all() and (left["stories"] == len(CELLS) // len(CRITERIA)).all()
    assert (left["answers"].str.count("No answer.") == 3).all() and left["fix"].str.contains("mode expected").all()
    merge_log = (workdir / "logs/merge/mine.log").read_text()
    assert merge_log.count("stories rated, fewer than the 3 any statistic needs") == len(CRITERIA)
    about = (workdir / "results/mine/computed/report/about.rst").read_text()
    assert "never Flow (tacl-1): 0 of 40 stories rated" in about and "No answer." in about
    print(about.strip().splitlines()[-1][-400:])


def test_malformed_server_answers_are_parse_failures_of_their_prompts(failing):
    """An {"error": ...} body, a reply one choice short and HTTP 400 each fail the prompts they concern; the
    details name the reason and keep the server's message."""
    workdir, _ = failing
    details = pd.read_parquet(workdir / "results/mine/computed/judges/broken@tacl-1.details.parquet")
    reasons = details.loc[details["failure"] != "", "failure"].value_counts().to_dict()
    assert reasons == {"server error": 2 * BATCH, "no usable answer for this prompt in the server's reply": 1}
    errors = details.loc[details["failure"] == "server error", "answer"]
    assert errors.str.contains("CUDA out of memory").sum() == BATCH and errors.str.contains("HTTP 400").sum() == BATCH
    logs = (workdir / "logs/judges/mine/broken@tacl-1.log").read_text()
    assert f"{BROKEN} of {len(CELLS)} prompts without a rating" in logs


def test_the_api_counts_a_malformed_servers_failures(server, caplog):
    """storyeval.judge() against the malformed server: NaN where the server failed, counted in one logged line and
    in the frame's attrs."""
    import storyeval

    table = stories().drop_duplicates("id")
    with caplog.at_level("WARNING"):
        ratings = storyeval.judge(list(table["text"]), criteria=CRITERIA, model=server, served="broken",
                                  mode="generate", prompts=list(table["prompt"]), story_ids=list(table["id"]))
    assert int(ratings.isna().sum().sum()) == ratings.attrs["parse_failures"] == BROKEN
    lines = [record.getMessage() for record in caplog.records if "prompts without a rating" in record.getMessage()]
    assert len(lines) == 1 and lines[0].startswith(f"judge: {BROKEN} of {len(CELLS)} prompts without a rating")
    assert "2 server error" not in lines[0] and f"{2 * BATCH} server error" in lines[0]


def test_a_servers_errors_are_not_cached(server, tmp_path):
    """The answer cache keeps the malformed server's good and unparsable answers, not its errors: a second call asks
    again exactly the prompts the server failed."""
    from storyeval.api import texts_table
    from storyeval.judges.prompts import load_template
    from storyeval.judges.rate import Settings, rate

    table = stories().drop_duplicates("id")
    texts = texts_table(list(table["text"]), prompts=list(table["prompt"]), story_ids=list(table["id"]))
    runs = [rate(texts, CRITERIA, load_template("tacl-1"), server, Settings(mode="generate"), served="broken",
                 cache=tmp_path / "answers.sqlite")[2] for _ in range(2)]
    assert [(run["forward_passes"], run["cached"]) for run in runs] == [(len(CELLS), 0),
                                                                       (BROKEN, len(CELLS) - BROKEN)]
    # (asked in other batches, some of them now succeed: the server fails whole requests by what they hold)
