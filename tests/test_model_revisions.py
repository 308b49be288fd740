"""Pinned model revisions: a folder records its hub commit (the cache's snapshots/<commit> layout, or .revision);
the pinned one loads and is recorded in the signatures, any other stops with one line naming role, both revisions
and the fix; the workflow's config refuses a revision where it means nothing."""

import pandas as pd
import pytest

from storyeval.errors import InputError
from storyeval.metrics import perplexity
from storyeval.neural import models
from storyeval.neural.embeddings import encode_texts
from storyeval.neural.paths import REVISION_FILE, recorded_revision

from tiny_models import one_thread, tiny_bert, tiny_gpt2
from workflow_helpers import make_workdir, run_snakemake

PINNED = "1111111111111111111111111111111111111111"
OTHER = "2222222222222222222222222222222222222222"

thread = pytest.fixture(autouse=True)(one_thread)


@pytest.fixture(scope="module")
def cached_gpt2(tmp_path_factory):
    """A tiny GPT-2 laid out as the hub's cache keeps a commit."""
    return tiny_gpt2(tmp_path_factory.mktemp("hub") / "models--gpt2" / "snapshots" / PINNED)


def test_recorded_revision_from_the_cache_layout_or_the_revision_file(tmp_path, cached_gpt2):
    assert recorded_revision(cached_gpt2) == PINNED
    assert recorded_revision(tmp_path) is None
    (tmp_path / REVISION_FILE).write_text(f"{OTHER}\n")
    assert recorded_revision(tmp_path) == OTHER


def test_pinned_revision_loads_and_is_recorded(cached_gpt2):
    texts = pd.DataFrame({"story_id": ["a"], "story": ["The knight rode through the dark forest at night."]})
    scores = perplexity.compute(texts, model=str(cached_gpt2), revision=PINNED)
    assert scores.shape == (1, 1)
    assert perplexity.signature(model=str(cached_gpt2), revision=PINNED)["model"]["revision"] == PINNED
    assert models.identity(cached_gpt2)["revision"] == PINNED  # recorded when found, pinned or not
    assert "revision" not in models.identity("storyeval-test/absent")  # a hub id its cache lacks: nothing known


def test_unpinned_hub_model_records_the_commit_its_cache_resolved(tmp_path, monkeypatch, caplog):
    """A hub id without a pin names the weights it was loaded with: the commit the cache's default branch points
    at, in the signature and in a warning that says how to pin it."""
    import huggingface_hub.constants

    hub = tmp_path / "hub"
    tiny_gpt2(hub / "models--storyeval-test--tiny-gpt2" / "snapshots" / OTHER)
    (hub / "models--storyeval-test--tiny-gpt2" / "refs").mkdir()
    (hub / "models--storyeval-test--tiny-gpt2" / "refs" / "main").write_text(OTHER)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(hub))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert models.identity("storyeval-test/tiny-gpt2") == {"name": "storyeval-test/tiny-gpt2", "revision": OTHER}
    assert models.identity("storyeval-test/tiny-gpt2", PINNED)["revision"] == PINNED  # a pin is what it records
    with caplog.at_level("WARNING"):
        models.warn_unpinned("causal-lm", "storyeval-test/tiny-gpt2", PINNED)  # pinned: nothing to say
        assert not caplog.text
        models.warn_unpinned("causal-lm", "storyeval-test/tiny-gpt2", None)
    assert f"models.causal_lm storyeval-test/tiny-gpt2: no revision pinned, loaded commit {OTHER}" in caplog.text
    assert f"revision: {OTHER}" in caplog.text


def test_other_revision_stops_with_one_line(cached_gpt2, tmp_path):
    with pytest.raises(InputError) as refused:
        models.load("causal-lm", cached_gpt2, "cpu", OTHER)
    message = str(refused.value)
    assert "\n" not in message and "models.causal_lm" in message
    assert f"revision {OTHER} pinned, {PINNED} found" in message and "fix:" in message
    unrecorded = tiny_bert(tmp_path / "bert")  # a plain folder records nothing: a pin cannot be checked
    with pytest.raises(InputError, match=f"models.sentence_encoder .*revision {PINNED} pinned, none recorded found"):
        encode_texts(["Once upon a time."], unrecorded, [1], revision=PINNED, role="sentence_encoder")
    (unrecorded / REVISION_FILE).write_text(PINNED)
    cache = encode_texts(["Once upon a time."], unrecorded, [1], revision=PINNED, role="sentence_encoder")
    assert cache.signature["revision"] == PINNED


def test_config_refuses_a_revision_it_cannot_check(tmp_path, hanna_mirror):
    vectors = {"name": "vectors", "path": "vectors.txt", "revision": PINNED}
    dry = run_snakemake(make_workdir(tmp_path / "a", **{"models.word_embeddings": vectors}), "-n")
    assert dry.returncode != 0 and "models.word_embeddings.revision" in dry.stdout + dry.stderr, dry.stdout[-2000:]
    branch = {"name": "gpt2", "path": "gpt2", "revision": "main"}  # a branch moves: only a commit pins
    dry = run_snakemake(make_workdir(tmp_path / "b", **{"models.causal_lm": branch}), "-n")
    assert dry.returncode != 0 and "'main' does not match" in dry.stdout + dry.stderr, dry.stdout[-2000:]
