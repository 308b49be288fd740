"""Hostile and careless input, round four: unbounded config numbers, YAML alias bombs, downloads without end, stories
over spaCy's limit, absurd values given to the Python API, names in other scripts, markup in names.

Each case's message is the one docs/bad-input.md shows.
"""

import hashlib
import http.server
import re
import signal
import subprocess
import sys
import threading
import time
import warnings
from collections import namedtuple

import numpy as np
import pandas as pd
import pytest
import yaml
from snakemake.utils import update_config
from test_bad_input import SCHEMA, one_line

from storyeval.api import correlations, score
from storyeval.config import ConfigSources, check_config
from storyeval.configfiles import MAX_VALUES, check_config_file
from storyeval.data import fetch as fetching
from storyeval.errors import InputError
from storyeval.examples import write_examples
from storyeval.io import write_markdown
from storyeval.names import check_labels, slugify

from conftest import REPO
from workflow_helpers import make_workdir, run_snakemake

# Numeric config keys: every one bounded above, the bounds one table of docs/configuration.md.


def numeric_keys(node: dict, path: str, definitions: dict) -> dict[str, dict]:
    """{dotted key: schema fragment} of every key that takes a number (`<name>` for a mapping's own names, `[]`
    for a list's items)."""
    found = {}
    if "$ref" in node:
        found |= numeric_keys(definitions[node["$ref"].split("/")[-1]], path, definitions)
    kinds = node.get("type", [])
    if {"integer", "number"} & set([kinds] if isinstance(kinds, str) else kinds):
        found[path] = node
    for key, child in (node.get("properties") or {}).items():
        found |= numeric_keys(child, f"{path}.{key}" if path else key, definitions)
    if isinstance(node.get("additionalProperties"), dict):
        found |= numeric_keys(node["additionalProperties"], f"{path}.<name>", definitions)
    if isinstance(node.get("items"), dict):
        found |= numeric_keys(node["items"], f"{path}[]", definitions)
    for alternative in [*node.get("allOf", []), *node.get("anyOf", [])]:
        found |= numeric_keys(alternative, path, definitions)
    return found


def shown_bound(fragment: dict, side: str) -> str:
    inclusive, exclusive, word = ("minimum", "exclusiveMinimum", "above") if side == "low" else (
        "maximum", "exclusiveMaximum", "below")
    value = fragment.get(inclusive, fragment.get(exclusive))
    text = f"{value:g}" if isinstance(value, float) and abs(value) >= 1e6 else (
        f"{value:,}" if isinstance(value, int) else f"{value:g}")
    return f"{word} {text}" if exclusive in fragment else text


def test_every_numeric_config_key_has_an_upper_bound_in_the_documented_table():
    schema = yaml.safe_load(SCHEMA.read_text())
    keys = numeric_keys(schema, "", schema["definitions"])
    unbounded = [key for key, fragment in keys.items() if "maximum" not in fragment and
                 "exclusiveMaximum" not in fragment]
    assert len(keys) > 140 and unbounded == []
    expected = {}
    for key, fragment in keys.items():
        if key.startswith("metric_params."):  # storyeval.parameters' table (tests/test_metrics_catalog.py)
            continue
        key = re.sub(r"^models\.[a-z0-9_]+\.layers", "models.<role>.layers", key)
        key = re.sub(r"^(hanna|storyer|s3)\.files\.[a-z_<>]+\.size", "<source>.files.<file>.size", key)
        expected.setdefault(key, (shown_bound(fragment, "low"), shown_bound(fragment, "high")))
    section = (REPO / "docs/configuration.md").read_text().split("### Bounds of the numeric keys")[1].split("###")[0]
    documented = {match[0]: (match[1], match[2]) for match in re.findall(r"^\| `([^`]+)` \| ([^|]+) \| ([^|]+) \|$",
                                                                          section, re.M)}
    assert documented == expected


@pytest.mark.parametrize("key, bound", [("agreement.alt_test.chance_draws", "20000"), ("embedding.batch_size", "4096")])
@pytest.mark.parametrize("written", ["1000000000", "1e9"])
def test_a_billion_is_refused_naming_key_bound_and_fix(tmp_path, key, bound, written):
    section, *middle, last = key.split(".")
    text = f"{section}:\n" + "".join(f"{'  ' * (depth + 1)}{part}:\n" for depth, part in enumerate(middle))
    path = tmp_path / "huge.yaml"
    path.write_text(text + f"{'  ' * (len(middle) + 1)}{last}: {written}\n")
    config = yaml.safe_load((REPO / "config.yaml").read_text())
    update_config(config, yaml.safe_load(path.read_text()))  # as Snakemake layers a --configfile
    with pytest.raises(InputError) as error:
        check_config(config, SCHEMA, ConfigSources(("config.yaml", str(path))))
    one_line(error, f"{path} {key}: config rejected", "fix: use an integer from ", f"to {bound}",
             "Bounds of the numeric keys")
    if written == "1e9":
        one_line(error, "YAML reads 1e9 as text: write the number's digits")


# YAML aliases: a document's values are counted with its aliases expanded, from the composed nodes, before any
# value is built.

def billion_laughs(levels: int = 9, width: int = 10) -> str:
    """9 lists of 10, each item the list before: 10**9 leaves. Its values (`laughs`): the top mapping, its key
    and value, and each list's key, itself and its items' values."""
    lines = ["metric_directions:", f"  l0: &l0 [{', '.join(['lol' * 26] * width)}]"]
    lines += [f"  l{level}: &l{level} [{', '.join([f'*l{level - 1}'] * width)}]" for level in range(1, levels)]
    return "\n".join(lines) + "\n"


def laughs(levels: int = 9, width: int = 10) -> int:
    sizes = [1 + width]
    for _ in range(1, levels):
        sizes.append(1 + width * sizes[-1])
    return 3 + levels + sum(sizes)


def test_yaml_alias_bomb_is_refused_in_milliseconds(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text(billion_laughs())
    assert 1200 < path.stat().st_size < 1400 and laughs() > 10**9  # 1.3 kB
    start = time.process_time()
    with pytest.raises(InputError) as error:
        check_config_file(path)
    assert time.process_time() - start < 0.5
    one_line(error, f"{path}: its aliases (*name) expand it to {laughs():,} values, over the limit of "
                    f"{MAX_VALUES:,} (an alias bomb?); fix: write the values out")
    # what `make reproduce CONFIG=...` runs before Snakemake: one line, status 1, within seconds
    run = subprocess.run([sys.executable, "-m", "storyeval.configfiles", str(path)], capture_output=True, text=True,
                         timeout=60, cwd=REPO)
    assert run.returncode == 1 and run.stdout == "" and len(run.stderr.strip().splitlines()) == 1, run.stderr
    assert f"expand it to {laughs():,} values" in run.stderr


def test_recursive_alias_and_bounded_sharing(tmp_path):
    path = tmp_path / "loop.yaml"
    path.write_text("metric_directions: &loop\n  again: *loop\n")
    with pytest.raises(InputError) as error:
        check_config_file(path)
    one_line(error, "an alias refers to a node that holds it (a recursive structure, which expands without end)")
    shared = tmp_path / "shared.yaml"  # aliases that expand to little are data as before
    shared.write_text("base: &base {higher: higher}\nmetric_directions: {BLEU: higher}\nother: [*base, *base]\n")
    check_config_file(shared)
    for name in ("config.yaml", "config/paper.yaml", "config/paper-exact.yaml", "config/judges.yaml"):
        check_config_file(REPO / name)


def test_judge_template_alias_bomb_is_refused(tmp_path):
    from storyeval.judges.prompts import read_template

    path = tmp_path / "bomb-template.yaml"
    path.write_text("user: 'Rate {story} on {criterion}.'\nanswer: 'Rating:'\n" + billion_laughs())
    with pytest.raises(InputError) as error:
        read_template(path)
    one_line(error, f"{path}: line 1, not YAML (its aliases (*name) expand it to {laughs() + 4:,} values")


# Downloads: a loopback server (127.0.0.1 only) that streams without end, or trickles.

class Endless(http.server.BaseHTTPRequestHandler):
    """GET: 64 KiB blocks without end (`trickle`: one byte every 0.2 s); `announce`: a Content-Length header."""

    trickle = False
    announce = None

    def do_GET(self):  # noqa: N802 (http.server's name)
        self.send_response(200)
        if self.announce is not None:
            self.send_header("Content-Length", str(self.announce))
        self.end_headers()
        try:
            while True:
                self.wfile.write(b"x" if self.trickle else b"x" * 65536)
                self.wfile.flush()
                if self.trickle:
                    time.sleep(0.2)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def log_message(self, *args):
        pass


@pytest.fixture
def endless():
    """The URL of a loopback server of `Endless` with settings of the test's choosing."""
    servers = []

    def start(**settings):
        handler = type("Handler", (Endless,), settings)
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        threading.Thread(target=server.serve_forever, daemon=True).start()
        servers.append(server)
        return f"http://127.0.0.1:{server.server_address[1]}/data.csv"

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def test_endless_download_stops_at_the_cap_and_leaves_nothing(tmp_path, endless):
    dest = tmp_path / "resources" / "datasets" / "mine.csv"
    start = time.monotonic()
    with pytest.raises(InputError) as error:
        fetching.fetch("mine.csv", endless(), "0" * 64, [], dest, limit=2**20)
    assert time.monotonic() - start < 10
    one_line(error, "mine.csv: the download of http://127.0.0.1:", "passed 1,048,576 bytes, data.max_download; "
             "fix: correct the URL, or raise data.max_download")
    assert list(dest.parent.iterdir()) == []
    with pytest.raises(InputError) as error:  # a pinned size stops it there
        fetching.fetch("mine.csv", endless(), "0" * 64, [], dest, size=100_000)
    one_line(error, "passed 100,000 bytes, the pinned size (size: in its entry); fix: the URL serves another file")
    with pytest.raises(InputError) as error:  # an announced length over the limit: refused before reading
        fetching.fetch("mine.csv", endless(announce=10**12), "0" * 64, [], dest, limit=2**20)
    one_line(error, "announces 1,000,000,000,000 bytes, over 1,048,576, data.max_download")
    assert list(dest.parent.iterdir()) == []


def test_trickling_download_stops_at_the_time_limit(tmp_path, endless):
    dest = tmp_path / "datasets" / "mine.csv"
    start = time.monotonic()
    with pytest.raises(InputError) as error:
        fetching.fetch("mine.csv", endless(trickle=True), "0" * 64, [], dest, seconds=1)
    assert 1 <= time.monotonic() - start < 5
    one_line(error, "took over 1 s (data.download_seconds)", "fix: raise data.download_seconds, or put the file "
             "in a mirror directory")
    assert list(dest.parent.iterdir()) == []


def test_full_disk_is_named_with_a_fix(tmp_path, endless, monkeypatch):
    dest = tmp_path / "datasets" / "mine.csv"
    usage = namedtuple("usage", "total used free")
    monkeypatch.setattr(fetching.shutil, "disk_usage", lambda path: usage(10**6, 10**6 - 4096, 4096))
    with pytest.raises(InputError) as error:  # announced: refused before a byte is written
        fetching.fetch("mine.csv", endless(announce=10**6), "0" * 64, [], dest)
    message = one_line(error, f"mine.csv: no space left on the disk of {dest.parent} (4,096 bytes free, the file "
                       "needs 1,000,000); fix: free space there, or set data.resources_dir to a folder on a disk")
    assert "reachable" not in message
    monkeypatch.setattr(fetching, "open", lambda path, mode: open("/dev/full", mode), raising=False)
    with pytest.raises(InputError) as error:  # not announced: the write that fills the disk
        fetching.fetch("mine.csv", endless(), "0" * 64, [], dest, limit=2**20)
    one_line(error, "no space left on the disk of", "set data.resources_dir to a folder on a disk with room")
    assert list(dest.parent.iterdir()) == []


def test_interrupted_download_leaves_no_file(tmp_path, endless):
    dest = tmp_path / "datasets" / "mine.csv"
    code = (f"from storyeval.data.fetch import fetch; fetch('mine.csv', {endless()!r}, '0' * 64, [], {str(dest)!r}, "
            "limit=10**12)")
    job = subprocess.Popen([sys.executable, "-c", code], cwd=REPO)
    partial = dest.parent / ".mine.csv.part"
    deadline = time.monotonic() + 30
    while not (partial.exists() and partial.stat().st_size > 2**20) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert partial.exists()
    job.send_signal(signal.SIGTERM)  # as Snakemake or a cluster cancels a job
    assert job.wait(timeout=30) == 128 + signal.SIGTERM
    assert list(dest.parent.iterdir()) == []
    partial.write_bytes(b"left by a SIGKILL")  # which no process can clean up: the next fetch does
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    (mirror / "mine.csv").write_text("a,b\n")
    fetching.fetch("mine.csv", "http://127.0.0.1:9/x", None, [mirror], dest)
    assert sorted(path.name for path in dest.parent.iterdir()) == ["mine.csv"]


# Long stories: every text storyeval accepts (up to 1,048,576 characters) reaches every metric.

UNIT = "The knight met the dragon. "  # 6 spaCy tokens, one sentence
UNITS = 1_040_000 // len(UNIT)


@pytest.fixture(scope="module")
def long_story() -> str:
    story = UNIT * UNITS
    assert 1_000_000 < len(story) <= 1_040_000  # over spaCy's 1,000,000, under storyeval's 1,048,576
    return story


def test_long_story_through_the_api_and_the_workflow(long_story, tmp_path):
    import logging

    from storyeval.api import texts_table
    from storyeval.metrics import datastats
    from storyeval.metrics.run import score_and_write

    short = score("textstats", [UNIT * 2, UNIT * 3])["text-length"].tolist()
    per_unit = short[1] - short[0]
    assert per_unit == 6
    long = score("textstats", [long_story])  # was: [E088] Text of length 1040001 exceeds maximum of 1000000
    assert long["text-length"].iloc[0] == short[0] + per_unit * (UNITS - 2)
    texts = texts_table([long_story], prompts=["A knight meets a dragon."], name="long")
    written = score_and_write(datastats, texts, {}, tmp_path / "scores.parquet", tmp_path / "signature.json", {},
                              logging.getLogger("test"))
    assert written["text-length"].iloc[0] == long["text-length"].iloc[0]


def test_long_story_reaches_the_sentence_and_word_tokenisers(long_story, tmp_path):
    from storyeval.metrics import blanc, summaqa, supert
    from storyeval.text.tokenize import words

    assert len(words([long_story])[0]) == 6 * UNITS  # METEOR's and CIDEr's tokens
    assert len(supert.split_sentences([long_story])[long_story]) == UNITS
    assert len(blanc.sentences(long_story)) == UNITS
    spacy = pytest.importorskip("spacy")  # SummaQA's statistical pipeline keeps spaCy's limit: parsed in parts
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    nlp.add_pipe("entity_ruler").add_patterns([{"label": "PERSON", "pattern": "dragon"}])
    nlp.to_disk(tmp_path / "pipeline")
    find = summaqa.recogniser(f"spacy:{tmp_path / 'pipeline'}")
    assert find(UNIT * 2) == [("The knight met the dragon.", [(19, 25)])] * 2  # a short text: one part, as before
    questions, answers = summaqa.cloze_questions(long_story, find)
    assert len(answers) == UNITS and set(answers) == {"dragon"} and questions[-1] == "The knight met the MASKED."


# The Python API applies the workflow's value checks.

def rated(n: int = 40) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    rng = np.random.default_rng(7)
    human = pd.DataFrame({"Coherence": rng.integers(1, 6, n).astype(float)}, index=[f"s{k}" for k in range(n)])
    scores = pd.DataFrame({"bleu": human["Coherence"] * 10 + rng.normal(0, 5, n)}, index=human.index)
    return scores, human, {"prompts": [k // 4 for k in range(n)], "systems": ["a", "b", "c", "d"] * (n // 4),
                           "coefficients": ["pearson"]}


def test_api_correlations_refuses_absurd_and_warns_on_far_values():
    scores, human, design = rated()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # clean data: no warning
        clean = correlations(scores, human, **design)
    system = clean.query("kind == 'metric_criterion' and level == 'system'")["r"].iloc[0]
    assert system > 0.9
    for frame, what in ((human, "human"), (scores, "scores")):
        bad = frame.copy()
        bad.iloc[5, 0] = 1e308
        with pytest.raises(InputError) as error:
            correlations(bad if what == "scores" else scores, bad if what == "human" else human, **design)
        one_line(error, f"correlations: {what} holds 1e+308 in column {frame.columns[0]!r}, story 's5', beyond "
                 "1e+100 in size, which no score or rating is (1 such cells); fix: correct it")
    far = human.copy()
    far.iloc[5, 0] = 2e6
    with pytest.warns(UserWarning, match=r"correlations: human rating 2e\+06 on 'Coherence', story 's5', lies over "
                      r"1,000 interquartile ranges outside the bulk of its ratings .*: the correlations include it"):
        moved = correlations(scores, far, **design)
    assert moved.query("kind == 'metric_criterion' and level == 'system'")["r"].iloc[0] < system


# Names in any script: slugs keep their letters; Markdown tables escape markup as HTML does.

CHINESE, ARABIC = ["流畅性", "连贯性", "趣味性"], ["الطلاقة", "التماسك"]


def test_chinese_and_arabic_names_are_safe_names_with_their_own_slugs():
    check_labels([*CHINESE, *ARABIC, "Fluency"], "criterion", "datasets.mine.columns.criteria",
                 source="mine.csv")  # was: not a safe name (... some letter or digit)
    slugs = [slugify(name) for name in [*CHINESE, *ARABIC]]
    assert slugs == [*CHINESE, *ARABIC]
    assert slugify("ROUGE-SU* F-Score") == "rouge-su-star-f-score" and slugify("a_b C") == "a-b-c"  # ASCII as before
    assert slugify("Kohärenz") == "kohärenz" and slugify("ｆｌｕｅｎｃｙ") == "fluency"  # NFKC: one name, one slug
    with pytest.raises(InputError) as error:
        check_labels(["流畅性", "流畅性 "], "criterion", "datasets.mine.columns.criteria", source="mine.csv")
    one_line(error, "both become '流畅性' in file names")
    from storyeval.judges import column_slug

    assert len({column_slug("judge", "tacl-1", name) for name in CHINESE}) == len(CHINESE)


def test_markdown_table_escapes_names_as_html(tmp_path):
    path = tmp_path / "table.md"
    name = '<img src=x onerror="alert(1)">'
    write_markdown(pd.DataFrame({name: ["a|b", "R&D", "=1+1"], "r": [0.5, 0.25, 0.125]}), path, f"Top {name}")
    text = path.read_text(encoding="utf-8")
    assert "<img" not in text and "&lt;img src=x onerror=\"alert(1)\"&gt;" in text
    assert "a\\|b" in text and "R&amp;D" in text and "'=1+1" in text
    rows = [line for line in text.splitlines() if line.startswith("|")]
    assert {line.count("|") - line.count("\\|") for line in rows} == {3}  # a pipe in a name ends no cell


@pytest.mark.slow
def test_workflow_with_chinese_arabic_and_markup_names(tmp_path):
    """A dataset whose criteria and raters are named in Chinese and Arabic, and one criterion is markup, runs
    through every output of its target (4.5 minutes on 2 busy cores)."""
    workdir = make_workdir(tmp_path / "work")
    (tmp_path / "examples").mkdir()
    write_examples(tmp_path / "examples")
    table = pd.read_csv(tmp_path / "examples" / "wide.csv")
    raters = {rater: f"评审员{k}" if k % 2 else f"مقيم{k}"
              for k, rater in enumerate(sorted(table["annotator"].unique()))}
    table = table.assign(annotator=table["annotator"].map(raters))
    table.loc[table["id"] == table["id"].iloc[0], "text"] = "猫坐在垫子上。"  # no ASCII word: ROUGE scores it 0
    table.to_csv(workdir / "intl.csv", index=False)
    markup = "<img src=x onerror=alert(1)>"
    (workdir / "intl.yaml").write_text(yaml.safe_dump({"datasets": {"intl": {
        "kind": "table", "path": "intl.csv", "sha256": hashlib.sha256((workdir / "intl.csv").read_bytes()).hexdigest(),
        "scale": [1, 5], "integer": True, "metrics": ["bleu", "rouge", "chrf"],
        "columns": {"story_id": "id", "prompt": "prompt", "system": "model", "story": "text",
                    "reference": "human_story", "rater": "annotator",
                    "criteria": {CHINESE[0]: "fluency", ARABIC[0]: "plot_score", markup: "delight"}}}}},
        allow_unicode=True))
    run = run_snakemake(workdir, "--cores", "2", "--configfile", "intl.yaml", "--", "dataset_intl")
    assert run.returncode == 0, run.stderr[-3000:]
    results = workdir / "results" / "intl"
    assert (results / "computed" / "report" / f"williams_story_{CHINESE[0]}.html").is_file()
    assert (results / "computed" / "report" / f"williams_story_{ARABIC[0]}.html").is_file()
    tables = list(results.rglob("*.md"))
    assert tables and not [path for path in tables if "<img" in path.read_text(encoding="utf-8")]
    assert any("&lt;img" in path.read_text(encoding="utf-8") for path in tables)
    assert set(raters.values()) <= set(pd.read_csv(results / "data" / "rater_ratings.csv")["rater"])
    about = (results / "computed" / "report" / "about.rst").read_text(encoding="utf-8")
    assert "Metric warnings: rouge: dataset intl, metric rouge: 1 of" in about


def test_a_metric_that_scores_0_for_a_script_it_cannot_read_says_so_in_its_signature(tmp_path):
    """ROUGE-1.5.5 reads ASCII words only: a Chinese story scores 0, which the signature (and from it the About
    paragraph, rule merge_scores' metric_warnings.csv) says, not only the rule's log."""
    import json
    import logging

    from storyeval.metrics import rouge
    from storyeval.metrics.run import score_and_write

    texts = pd.DataFrame({"story_id": ["a", "b", "c"], "story": ["the cat sat", "猫坐在垫子上", "a dog ran"],
                          "reference": ["the cat sat down", "猫坐下了", "the dog ran"]})
    texts.attrs["dataset"] = "intl"
    scores = score_and_write(rouge, texts, {}, tmp_path / "s.parquet", tmp_path / "s.json", {},
                             logging.getLogger("test"))
    assert scores.loc[scores.index[1]].eq(0).all() and scores.loc[scores.index[0]].gt(0).any()
    warnings = json.loads((tmp_path / "s.json").read_text())["warnings"]
    assert warnings == ["dataset intl, metric rouge: 1 of 3 stories or their references have no ROUGE token (ASCII "
                        "word): scored 0 as ROUGE-1.5.5 does"]
