import numpy as np
import pytest
import torch
from transformers import AutoModel, AutoTokenizer

from storyeval.errors import InputError
from storyeval.learned.embed import StoryEncoder, embed_texts

from tiny_models import minilm_path, one_thread, tiny_bert

single_thread = pytest.fixture(scope="module", autouse=True)(one_thread)
TEXTS = ["The knight rode through the dark forest at night, and nobody followed him.", "Rain fell.",
         "She opened the door and found a letter from her brother, who had been gone for years."]


def reference_vector(model, ids: list[list[int]]) -> np.ndarray:
    """sentence-transformers' Pooling(mean) + Normalize, written out: each window run alone (no padding), the
    token vectors of all windows averaged, then scaled to unit norm."""
    with torch.no_grad():
        states = torch.cat([model(input_ids=torch.tensor([window])).last_hidden_state[0] for window in ids])
    mean = states.mean(dim=0)
    return (mean / mean.norm()).numpy()


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return tiny_bert(tmp_path_factory.mktemp("embed") / "bert")


def test_minilm_vectors_are_sentence_transformers_mean_pooling():
    encoder = StoryEncoder(minilm_path())
    assert encoder.window == 256  # max_seq_length of its sentence_bert_config.json
    vectors = embed_texts(TEXTS, encoder)
    tokenizer = AutoTokenizer.from_pretrained(minilm_path())
    model = AutoModel.from_pretrained(minilm_path()).eval()
    for text, vector in zip(TEXTS, vectors):
        expected = reference_vector(model, [tokenizer(text)["input_ids"]])
        np.testing.assert_allclose(vector, expected, atol=2e-6)
    assert np.linalg.norm(vectors, axis=1) == pytest.approx(1.0, abs=1e-6)


def test_long_texts_truncated_or_chunked(bert):
    tokenizer = AutoTokenizer.from_pretrained(bert)
    long = " ".join(TEXTS * 2)
    pieces = tokenizer(long, add_special_tokens=False)["input_ids"]
    assert len(pieces) > 3 * 14
    cls, sep = tokenizer.cls_token_id, tokenizer.sep_token_id
    model = AutoModel.from_pretrained(bert).eval()
    truncated = embed_texts([long, "Rain fell."], StoryEncoder(bert, max_length=16))[0]
    np.testing.assert_allclose(truncated, reference_vector(model, [[cls, *pieces[:14], sep]]), atol=2e-6)
    chunked = embed_texts([long, "Rain fell."], StoryEncoder(bert, max_length=16, policy="chunks"))[0]
    windows = [[cls, *pieces[start:start + 14], sep] for start in range(0, len(pieces), 14)]
    np.testing.assert_allclose(chunked, reference_vector(model, windows), atol=2e-6)


def test_cache_is_read_and_replaced_when_settings_change(bert, tmp_path, monkeypatch, caplog):
    cache = tmp_path / "vectors.npz"
    encoder = StoryEncoder(bert, max_length=32)
    first = embed_texts(TEXTS, encoder, cache)
    before = cache.read_bytes()

    def refuse(self, texts, grad=False):
        raise AssertionError("cached texts were encoded again")

    monkeypatch.setattr(StoryEncoder, "__call__", refuse)
    np.testing.assert_array_equal(embed_texts(TEXTS[::-1], encoder, cache), first[::-1])
    assert cache.read_bytes() == before
    monkeypatch.undo()
    other = StoryEncoder(bert, max_length=16)
    with caplog.at_level("WARNING", logger="storyeval.learned"):
        embed_texts(TEXTS[:1], other, cache)
    assert "other settings" in caplog.text
    with np.load(cache) as stored:
        assert len(stored["keys"]) == 1


@pytest.mark.parametrize("texts", [[], ["ok", " "], "a string"])
def test_empty_texts_are_refused(bert, texts):
    with pytest.raises(InputError, match="non-empty string"):
        embed_texts(texts, StoryEncoder(bert, max_length=16))


def test_unknown_policy(bert):
    with pytest.raises(InputError, match="policy"):
        StoryEncoder(bert, policy="sliding")


def test_a_cut_cache_is_computed_again(bert, tmp_path, caplog):
    """A cache cut by a killed job (or not a cache at all) is said, deleted and rebuilt: the same vectors."""
    encoder = StoryEncoder(bert, max_length=16)
    cache = tmp_path / "cut.npz"
    expected = embed_texts(["Rain fell."], encoder, cache)
    cache.write_bytes(cache.read_bytes()[:-40])
    with caplog.at_level("WARNING", logger="storyeval.learned"):
        np.testing.assert_array_equal(embed_texts(["Rain fell."], encoder, cache), expected)
    assert f"story vectors {cache} do not load" in caplog.text and "deleted, computed again" in caplog.text
    with np.load(cache) as stored:
        assert len(stored["keys"]) == 1
