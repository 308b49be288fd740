"""Judge prompts as a batch that runs anywhere: exported as OpenAI batch-format JSONL (one request per line, the
body a served judge sends, `storyeval.judges.http`, with one prompt), run by any batch runner (`vllm run-batch`,
OpenAI's Batch API) on any machine, and its results imported into the three results a served run gives (the same
reply reading and `rate.finish`).

Each request's custom_id names its dataset, story (mode pairwise: the pair, "a vs b"), criterion, template and
the stories' order (o0; mode pairwise: o0 the pair as drawn, o1 swapped) and ends in a hash of its body, so the
import rebuilds the job's requests and refuses, in one line naming the results file and line, a results line it
did not send (an unknown id), one whose body hash differs (the texts, template, criteria or settings changed
since the export), a repeated one and a request without a line.
A line with an error or a non-200 status is a parse failure of its prompt, its reason stated, never a stop.

    python -m storyeval.judges.batch export --texts T --dataset D --criteria C... --served M prompts.jsonl
    python -m storyeval.judges.batch import --texts T --dataset D --criteria C... --served M results.jsonl scores.csv
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from urllib.parse import quote

import pandas as pd

from storyeval.errors import InputError, quoted
from storyeval.judges.http import local_tokenizer, rate_replies, request_body, served_prompts
from storyeval.judges.prompts import Template

URL = "/v1/completions"
ORDER = "o0"  # the stories' order in the prompt: one story; mode pairwise asks both orders (o0, o1)
REFUSED_FIX = "fix: export again (python -m storyeval.judges.batch export) and run that batch"


def body_hash(body: dict) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True).encode()).hexdigest()[:16]


def custom_id(dataset: str, story, criterion: str, template: str, body: dict, order: str = ORDER) -> str:
    """dataset/story/criterion/template/order/body hash, each name percent-quoted so that "/" splits them."""
    names = "/".join(quote(str(name), safe=" ") for name in (dataset, story, criterion, template, order))
    return f"{names}/{body_hash(body)}"


def job_requests(texts: pd.DataFrame, criteria: dict[str, str], template: Template, settings, served: str | None,
                 tokenizer: str | None, dataset: str, key: str):
    """((local tokenizer, what each prompt sends, the prompts), {prompt index: its batch request}, the rows asked:
    rate.asked_rows) of the prompts within the window: exactly what a served run of the job asks, one prompt a
    request."""
    from storyeval.judges.rate import asked_rows, check

    check(settings, template, key)
    rows, _ = asked_rows(texts, settings)
    local = local_tokenizer(tokenizer)
    sent, prompts = served_prompts(rows, criteria, template, local, settings, key)
    base = request_body(settings, served)
    requests = {}
    for k in prompts.run:
        body = base | {"prompt": sent[k]}
        name = custom_id(dataset, prompts.story_id[k], prompts.criterion[k], template.name, body,
                         prompts.order[k] or ORDER)
        requests[k] = {"custom_id": name, "method": "POST", "url": URL, "body": body}
    return (local, sent, prompts), requests, rows


def export(path: str | Path, texts: pd.DataFrame, criteria: dict[str, str], template: Template, settings,
           served: str | None = None, tokenizer: str | None = None, dataset: str = "dataset",
           key: str = "judge") -> int:
    """Write the job's requests to `path` (OpenAI batch input JSONL); the number written."""
    _, requests, _ = job_requests(texts, criteria, template, settings, served, tokenizer, dataset, key)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("".join(json.dumps(request) + "\n" for request in requests.values()), encoding="utf-8")
    return len(requests)


def reply(record: dict):
    """A results line's completions reply; an error or a non-200 status as the {"error": ...} body a server's
    failure reads as (`http.reply_choices`: a parse failure of the prompt, the message kept)."""
    response = record.get("response") if isinstance(record.get("response"), dict) else {}
    if record.get("error"):
        return {"error": record["error"]}
    if response.get("status_code") != 200:
        return {"error": f"HTTP {response.get('status_code')}: {json.dumps(response.get('body'), default=str)}"}
    return response.get("body")


def read_results(path: str | Path, wanted: dict[int, str], partial: bool = False) -> dict[int, object]:
    """{prompt index: its reply} from the OpenAI batch output file at `path` answering the requests `wanted`
    ({prompt index: custom_id}); `partial`: lines of requests not wanted are skipped (a shard's job reads the
    whole dataset's results). Refused in one line: an unreadable line, an unknown, changed or repeated custom_id,
    a line without a response or error, a wanted request without a line."""
    index = {name: k for k, name in wanted.items()}
    unhashed = {name.rsplit("/", 1)[0] for name in index}  # the ids without their body hash
    replies, seen = {}, {}
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"{path}: cannot read the batch results ({error}); fix: name the batch runner's output "
                         "file (judges.models.<name>.batch_results)") from error
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path} line {number}"
        try:
            record = json.loads(line)
        except ValueError as error:
            raise InputError(f"{where}: not JSON ({error}); fix: give the batch runner's output file unchanged, one "
                             "JSON object a line") from error
        name = record.get("custom_id") if isinstance(record, dict) else None
        if not isinstance(name, str):
            raise InputError(f"{where}: no custom_id; fix: give the batch runner's output file unchanged (each line "
                             "holds its request's custom_id)")
        if not isinstance(record.get("response"), dict) and not record.get("error"):
            raise InputError(f"{where}: neither a response nor an error (a request, not its result?); fix: give the "
                             "batch runner's output file (-o of vllm run-batch), not its input")
        if name in seen:
            raise InputError(f"{where}: custom_id {quoted(name, 200)} repeats line {seen[name]}; fix: keep one "
                             "line per request (two runs' outputs joined?)")
        seen[name] = number
        if name not in index:
            if name.rsplit("/", 1)[0] in unhashed:
                raise InputError(f"{where}: custom_id {quoted(name, 200)} answers another request than this job "
                                 "sends (its body hash differs: the texts, template, criteria or judge settings "
                                 f"changed since the export); {REFUSED_FIX}")
            if partial:
                continue
            raise InputError(f"{where}: custom_id {quoted(name, 200)} is not one of this job's {len(index)} requests "
                             f"(another dataset's, template's or judge's batch?); {REFUSED_FIX}")
        replies[index[name]] = reply(record)
    missing = [name for name in index if name not in seen]
    if missing:
        raise InputError(f"{path}: no line for {len(missing)} of the job's {len(index)} requests (first: "
                         f"{quoted(missing[0], 200)}); fix: run the whole batch (a runner writes a line for each "
                         "request, a failed one with its error)")
    return replies


def rate_batch(texts: pd.DataFrame, criteria: dict[str, str], template: Template, results: str | Path, settings,
               served: str | None = None, tokenizer: str | None = None, dataset: str = "dataset",
               key: str = "judge", partial: bool = False) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """`storyeval.judges.http.rate_http`'s three results from the batch results file `results` (module docstring)
    instead of a server: the same table a served run with the same replies gives."""
    from storyeval.judges.rate import scored

    built, requests, rows = job_requests(texts, criteria, template, settings, served, tokenizer, dataset, key)
    replies = read_results(results, {k: request["custom_id"] for k, request in requests.items()}, partial)
    details, run = rate_replies(criteria, template, settings, built, lambda todo: (([k], replies[k]) for k in todo),
                                f"batch {results}", key)
    return scored(texts, criteria, details, run, settings, key, rows)


def read_texts(path: str) -> pd.DataFrame:
    """The workflow's text table (results/<dataset>/data/texts.parquet), or a CSV of story_id, story and
    optionally prompt and reference, cleaned as storyeval.judge cleans its texts."""
    from storyeval.api import texts_table
    from storyeval.io import read_parquet

    if not Path(path).is_file():
        raise InputError(f"{path}: no such file; fix: name the text table (results/<dataset>/data/texts.parquet "
                         "once the workflow normalised the dataset, or a CSV)")
    if path.endswith(".parquet"):
        return read_parquet(path)
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    if not {"story_id", "story"} <= set(table):
        raise InputError(f"{path}: columns {', '.join(table)}; fix: give story_id and story (and prompt, reference "
                         "where the template reads them)")
    columns = {name: list(table[name]) for name in ("prompt", "reference") if name in table}
    return texts_table(list(table["story"]), story_ids=list(table["story_id"]), name=path, **{
        name + "s": values for name, values in columns.items()})


def main(argv: list[str] | None = None) -> int:
    from storyeval.api import named_criteria
    from storyeval.io import write_csv
    from storyeval.judges.prompts import default_template, load_template
    from storyeval.judges.rate import Settings
    from storyeval.parameters import JUDGE
    from storyeval.parameters import check as check_parameters

    parser = argparse.ArgumentParser(prog="python -m storyeval.judges.batch", description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=["export", "import"])
    parser.add_argument("files", nargs="+", help="export: PROMPTS.jsonl; import: RESULTS.jsonl SCORES.csv")
    parser.add_argument("--texts", required=True, help="results/<dataset>/data/texts.parquet, or a CSV (story_id, "
                        "story, prompt)")
    parser.add_argument("--dataset", required=True, help="the dataset's name (part of each custom_id)")
    parser.add_argument("--criteria", nargs="+", required=True, help="HANNA's names, or NAME=definition")
    parser.add_argument("--template", help="default: tacl-1 where the texts have prompts, else geval")
    parser.add_argument("--served", help="the model name the batch runner serves (each request's model)")
    parser.add_argument("--tokenizer", help="a local copy of its tokenizer: prompts as token ids")
    for name, kind, default in (("mode", str, "expected"), ("max_new_tokens", int, 32), ("top_logprobs", int, 20),
                                ("truncate", str, "none"), ("max_length", int, None), ("ties", str, "flip"),
                                ("pair_score", str, "win_rate"), ("seed", int, 20221012)):  # the judges section's
        parser.add_argument("--" + name.replace("_", "-"), type=kind, default=default)
    parser.add_argument("--pairs", type=lambda text: int(text) if text.isdigit() else text, default="auto",
                        help="mode pairwise: auto, all or a number of random cycles per prompt")
    args = parser.parse_args(argv)
    try:
        if len(args.files) != {"export": 1, "import": 2}[args.action]:
            raise InputError(f"{args.action}: files {' '.join(args.files)}; fix: " + (
                "export PROMPTS.jsonl" if args.action == "export" else "import RESULTS.jsonl SCORES.csv"))
        settings = {name: getattr(args, name) for name in ("mode", "max_new_tokens", "top_logprobs", "truncate",
                                                           "max_length", "pairs", "ties", "pair_score", "seed")}
        check_parameters(settings, JUDGE, f"judge {args.action}:")
        own = dict(item.split("=", 1) for item in args.criteria if "=" in item)
        criteria = named_criteria([item for item in args.criteria if "=" not in item]) | own
        texts = read_texts(args.texts)
        prompted = "prompt" in texts and texts["prompt"].notna().all()
        template = load_template(args.template or default_template(prompted, args.mode))  # as storyeval.judge
        job = (texts, criteria, template)
        options = {"served": args.served, "tokenizer": args.tokenizer, "dataset": args.dataset}
        if args.action == "export":
            written = export(args.files[0], *job, Settings(**settings), **options)
            print(f"storyeval: {written} requests written to {args.files[0]}")
        else:
            scores, _, counts = rate_batch(*job, args.files[0], Settings(**settings), **options)
            write_csv(scores.rename_axis("story_id").reset_index(), args.files[1])
            print(f"storyeval: {scores.size} ratings written to {args.files[1]}, {counts['parse_failures']} parse "
                  "failures")
    except InputError as error:
        print(f"storyeval: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
