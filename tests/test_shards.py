"""Sharded neural jobs: the shard split, the gather, idf over the dataset in a shard, a text's vectors whatever
shares its pass, the cache's storage dtype and layers, and (slow) the workflow with three shards against one job."""

import json

import numpy as np
import pandas as pd
import pytest

from storyeval.errors import InputError
from storyeval.metrics import bertscore, moverscore
from storyeval.neural.embeddings import (
    document_frequencies,
    encode_texts,
    idf_weights,
    layers_read,
    load_cache,
    save_cache,
    storage_dtype,
)
from storyeval.neural.shards import (
    IdfScope,
    gather_benchmarks,
    gather_scores,
    gather_signatures,
    idf_texts,
    shard_count,
    split_rows,
    text_ids,
)

from tiny_models import one_thread, tiny_bert
from workflow_helpers import make_workdir, run_snakemake

NEURAL_METRICS = ["bertscore", "moverscore", "baryscore", "depthscore", "supert"]


@pytest.fixture(scope="module")
def encoder(tmp_path_factory):
    """A tiny random BERT (2 layers, 128-token window): fast, and its inputs vary in length."""
    yield tiny_bert(tmp_path_factory.mktemp("tiny-bert"))


@pytest.fixture(scope="module", autouse=True)
def torch_one_thread():
    yield from one_thread()


@pytest.fixture(scope="module")
def table(hanna_mirror):
    from storyeval.text.datasets import load_hanna_llm

    texts = load_hanna_llm(hanna_mirror / "hanna_llm_stories.csv").texts
    shortest = texts.assign(length=texts["story"].str.len() + texts["reference"].str.len())
    chosen = shortest.groupby("prompt_id")["length"].sum().nsmallest(2).index
    return texts[texts["prompt_id"].isin(chosen)].reset_index(drop=True)  # 2 prompts x 7 systems


def test_split_rows_and_shard_count():
    texts = pd.DataFrame({"story_id": [f"s{i}" for i in range(7)]})
    shards = split_rows(texts, 3)
    assert [len(shard) for shard in shards] == [3, 3, 1] and shard_count(7, 3) == 3
    assert pd.concat(shards, ignore_index=True).equals(texts)
    assert len(split_rows(texts, None)) == 1 and len(split_rows(texts, 100)) == 1
    with pytest.raises(InputError, match="at least 1"):
        shard_count(7, 0)


def test_gather_joins_in_order_and_refuses_mixed_shards():
    first = pd.DataFrame({"x": [1.0, 2.0]}, index=pd.Index(["a", "b"], name="story_id"))
    second = pd.DataFrame({"x": [3.0]}, index=pd.Index(["c"], name="story_id"))
    assert gather_scores([first, second])["x"].tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(InputError, match="story id a is in two shards"):
        gather_scores([first, first])
    with pytest.raises(InputError, match="columns"):
        gather_scores([first, second.rename(columns={"x": "y"})])
    one = {"metric": "m", "stories": 2, "encoder": {"n_texts": 4, "cache_bytes": 400, "bytes_per_text": 100}}
    two = {"metric": "m", "stories": 1, "encoder": {"n_texts": 1, "cache_bytes": 300, "bytes_per_text": 300}}
    joined = gather_signatures([one, two])
    assert joined == {"metric": "m", "stories": 3, "shards": 2,
                      "encoder": {"n_texts": 5, "cache_bytes": 700, "bytes_per_text": 140}}
    with pytest.raises(InputError, match="differ at metric"):
        gather_signatures([one, two | {"metric": "other"}])
    bench = [pd.DataFrame({"s": [2.0], "h:m:s": ["0:00:02"], "max_rss": [10.0], "cpu_time": [1.0]}),
             pd.DataFrame({"s": [3.0], "h:m:s": ["0:00:03"], "max_rss": [30.0], "cpu_time": [2.0]})]
    assert gather_benchmarks(bench).iloc[0].tolist() == [5.0, "0:00:05", 30.0, 3.0]


def test_a_texts_vectors_do_not_depend_on_the_texts_that_share_its_pass(encoder, table):
    sentences = {"The cat sat.", "A dog ran.", "It rained.", "She left.", "He won.", "Night fell over town."}
    texts = sorted({*table["story"].iloc[:4], table["reference"].iloc[0], *table["prompt"].iloc[:1], *sentences})
    whole = encode_texts(texts, encoder, [2], batch_size=4)  # the short sentences share batches
    for part in (texts[0::2], texts[1::2], texts[:1] + texts[-1:]):
        alone = encode_texts(part, encoder, [2], batch_size=4)
        for text in part:
            assert np.array_equal(alone.get(text).layers[2], whole.get(text).layers[2])


def test_idf_in_a_shard_counts_the_whole_datasets_rows(encoder, table, tmp_path):
    cache = encode_texts([*table["story"], *table["reference"]], encoder, [2], batch_size=4)
    whole = pd.concat([bertscore.compute(table, cache=cache, idf=True),
                       moverscore.compute(table, cache=cache, idf=True)], axis=1)
    shards = split_rows(table, 5)
    caches = [encode_texts([*shard["story"], *shard["reference"]], encoder, [2], batch_size=4) for shard in shards]
    paths = [tmp_path / f"{index:04d}.safetensors" for index in range(len(shards))]
    for shard_cache, path in zip(caches, paths):
        save_cache(shard_cache, path)
    table.to_parquet(tmp_path / "texts.parquet")
    assert list(idf_texts(tmp_path / "texts.parquet").columns) == ["story", "reference"]  # what a shard job reads
    parts = []
    for shard, scoped in zip(shards, caches):  # every shard's cache, one open at a time; the table read when asked
        scoped.idf_scope = IdfScope(shard, tmp_path / "texts.parquet", text_ids(paths))
        parts.append(pd.concat([bertscore.compute(shard, cache=scoped, idf=True),
                                moverscore.compute(shard, cache=scoped, idf=True)], axis=1))
    # Equal up to float32 rounding: a text's encoding may differ in its last bits with its batch mates.
    pd.testing.assert_frame_equal(gather_scores(parts), whole, rtol=1e-6, atol=1e-8)
    alone = bertscore.compute(split_rows(table, 5)[0], cache=cache, idf=True)  # the shard's own idf differs
    assert not alone.equals(whole.iloc[:5][alone.columns])
    scope = IdfScope(table.iloc[:1].assign(reference=table["story"].iloc[0]), table, cache.ids)
    with pytest.raises(InputError, match="story or reference alike"):
        scope.documents([table["story"].iloc[0]])
    with pytest.raises(InputError, match="no column of the shard"):
        idf_weights(scoped, ["some other text"])


def test_streamed_document_frequencies_equal_the_list_based_count(minilm, hanna_llm_texts):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(minilm)
    rows = hanna_llm_texts.iloc[:21]  # 3 prompts: each reference counted once per story, as in a shard's idf
    documents = [np.asarray(tokenizer(text)["input_ids"]) for text in [*rows["story"], *rows["reference"]]]
    present, counts = np.unique(np.concatenate([np.unique(ids) for ids in documents]), return_counts=True)
    df, n = document_frequencies(iter(documents))
    assert n == len(documents) and np.array_equal(np.flatnonzero(df), present)
    assert np.array_equal(df[present], counts)
    weights = idf_weights(iter(documents))  # a generator: read once, one document at a time
    assert list(weights) == present.tolist() and list(weights.values()) == np.log((n + 1) / (counts + 1)).tolist()
    with pytest.raises(InputError, match="no documents"):
        idf_weights(iter([]))


def test_cache_keeps_the_layers_the_metrics_read_in_the_storage_dtype(encoder, table, tmp_path):
    assert layers_read({"bertscore": {}, "depthscore": {"layer": 3}}, 6) == (3, 6)
    assert layers_read({"baryscore": {}, "supert": {}}, 6) == (2, 3, 4, 5, 6)
    assert storage_dtype("auto", ["bertscore", "supert"]) == "float16"
    assert storage_dtype("auto", ["bertscore", "depthscore"]) == storage_dtype("float32", []) == "float32"
    texts = list(table["story"].iloc[:2])
    full = encode_texts(texts, encoder, [2], batch_size=4)
    half = encode_texts(texts, encoder, [2], batch_size=4, dtype="float16")
    save_cache(half, tmp_path / "half.safetensors")
    loaded = load_cache(tmp_path / "half.safetensors")
    assert loaded.hidden[2].dtype == np.float16 and loaded.get(texts[0]).layers[2].dtype == np.float32
    assert half.signature["cache_bytes"] < 0.6 * full.signature["cache_bytes"]
    assert half.signature["bytes_per_text"] == round(half.signature["cache_bytes"] / 2)
    np.testing.assert_allclose(loaded.get(texts[0]).layers[2], full.get(texts[0]).layers[2], rtol=1e-3, atol=1e-3)
    with pytest.raises(InputError, match="storage dtype"):
        encode_texts(texts, encoder, [2], dtype="int8")


@pytest.mark.slow
def test_three_shards_give_the_bytes_of_one_job(tmp_path, hanna_mirror):
    """A 14-story dataset in shards of 5: every neural score equal to the unsharded run's up to float32 rounding."""
    dataset = {"kind": "hanna-llm", "file": "hanna/stories_llm", "max_prompts": 2, "metrics": NEURAL_METRICS}
    settings = {"hanna.annotations": "skip", "data.allow_download": False, "datasets": {"mini": dataset},
                "storyer_evaluator.reasons.datasets": []}
    stems = [f"results/mini/computed/scores/{metric}@all-minilm-l6-v2" for metric in NEURAL_METRICS]
    targets = [f"{stem}.parquet" for stem in stems]
    runs = {}
    for name, stories in (("one", None), ("sharded", 5)):
        workdir = make_workdir(tmp_path / name, **settings, **{"shards.stories": stories})
        result = run_snakemake(workdir, "--cores", "2", *targets)
        assert result.returncode == 0, result.stderr[-3000:]
        runs[name] = workdir
    sharded = runs["sharded"]
    assert sorted(path.name for path in (sharded / "results/mini/data/shards").glob("*.parquet")) == [
        "0000.parquet", "0001.parquet", "0002.parquet"]
    assert len(list((sharded / "results/mini/computed/embeddings/all-minilm-l6-v2").glob("*.safetensors"))) == 3
    for target, stem in zip(targets, stems):
        # A text's float32 encoding may differ in its last bits with the batch it shares (the CPU's matrix
        # kernels block by the batch's shape), so the scores agree to float32 rounding, not always byte for byte.
        pd.testing.assert_frame_equal(pd.read_parquet(runs["one"] / target), pd.read_parquet(sharded / target),
                                      rtol=1e-6, atol=1e-8)
        signature = json.loads((sharded / f"{stem}.signature.json").read_text())
        assert signature["shards"] == 3 and signature["stories"] == 14
        assert signature["encoder"]["bytes_per_text"] > 0
