"""The shared embedding pass: vectors equal unbatched model runs, truncation and sliding windows, the cache file,
idf against bert_score's, device choice and input errors. MiniLM for real texts, a tiny random BERT for the
long-text code paths (its window is 40 tokens)."""

import os
import shutil

import numpy as np
import pytest
import torch

from storyeval.errors import InputError
from storyeval.neural.device import choose_device
from storyeval.neural.embeddings import (
    EmbeddingCache,
    encode_texts,
    encode_to_file,
    idf_weights,
    load_cache,
    require_texts,
    safetensors_layout,
    save_cache,
    sliding_ranges,
)

os.environ.setdefault("HF_HUB_OFFLINE", "1")
TOKENIZER_FILES = ("vocab.txt", "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json")


@pytest.fixture(scope="module")
def real_texts(hanna_mirror):
    from storyeval.text.datasets import load_hanna_llm

    texts = load_hanna_llm(hanna_mirror / "hanna_llm_stories.csv").texts
    chosen = texts[texts["prompt_id"] == 80]
    return [*chosen["prompt"].iloc[:1], *chosen.sort_values("story", key=lambda s: s.str.len())["story"].iloc[:3]]


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory, minilm):
    from transformers import BertConfig, BertModel

    folder = tmp_path_factory.mktemp("tiny-bert")
    torch.manual_seed(0)
    config = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=40)
    BertModel(config).save_pretrained(folder)
    for name in TOKENIZER_FILES:
        shutil.copy(os.path.join(minilm, name), folder / name)
    return folder


def direct_states(path, ids: list[int]) -> tuple:
    """Hidden states of one unpadded input, straight from transformers (the independent computation)."""
    from transformers import AutoModel

    model = AutoModel.from_pretrained(str(path)).eval()
    with torch.no_grad():
        return model(torch.tensor([ids]), output_hidden_states=True).hidden_states


def test_cached_vectors_equal_an_unbatched_run_of_each_text(minilm, real_texts):
    from transformers import AutoModel, AutoTokenizer

    texts = real_texts[:3]  # the prompt and the two shortest stories: 36, 33 and 400 tokens
    cache = encode_texts(texts + texts[:1], minilm, [0, 3, 6], batch_size=2)
    tokenizer = AutoTokenizer.from_pretrained(minilm)
    model = AutoModel.from_pretrained(minilm).eval()
    assert len(cache) == len(texts) and cache.layers == (0, 3, 6)
    for text in texts:
        ids = tokenizer(text)["input_ids"]
        with torch.no_grad():
            states = model(torch.tensor([ids]), output_hidden_states=True).hidden_states
        got = cache.get(text)
        assert got.input_ids.tolist() == ids
        assert got.special.tolist() == [True] + [False] * (len(ids) - 2) + [True]
        assert cache.tokens(got.input_ids[[0, -1]]) == ["[CLS]", "[SEP]"]
        for layer in (0, 3, 6):
            assert got.layers[layer].dtype == np.float32
            np.testing.assert_allclose(got.layers[layer], states[layer][0].numpy(), atol=2e-5)
    with pytest.raises(KeyError):
        cache.get("a text never encoded")


def test_short_inputs_get_the_same_vectors_whichever_short_inputs_share_their_batch(minilm):
    """Inputs under 16 tokens are encoded in batches of one shape; unpadded batches of another size change
    MiniLM's last bits on these 3-token inputs."""
    words = ["rain", "night", "dog", "cat", "house", "tree", "river", "stone", "king", "music"]
    whole = encode_texts(words, minilm, [1, 6], batch_size=2)
    assert all(len(whole.get(word).input_ids) == 3 for word in words)
    for part in (words[:1], words[3:6]):
        alone = encode_texts(part, minilm, [1, 6], batch_size=2)
        for word in part:
            for layer in (1, 6):
                assert np.array_equal(alone.get(word).layers[layer], whole.get(word).layers[layer])


def test_truncation_keeps_the_tokenizers_first_pieces_and_counts_long_texts(tiny_bert, real_texts):
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(str(tiny_bert))
    cache = encode_texts(real_texts, tiny_bert, [1, 2], batch_size=3)
    full = {text: tokenizer(text)["input_ids"] for text in real_texts}
    assert cache.signature["max_length"] == 40
    assert (
        cache.signature["n_truncated"]
        == cache.signature["n_long_texts"]
        == sum(len(ids) > 40 for ids in full.values())
        > 0
    )
    for text in real_texts:
        expected = tokenizer(text, truncation=True, max_length=40)["input_ids"]
        got = cache.get(text)
        assert got.input_ids.tolist() == expected
        np.testing.assert_allclose(got.layers[2], direct_states(tiny_bert, expected)[2][0].numpy(), atol=2e-5)


def most_central_window(position: int, starts: list[int], room: int) -> int:
    """Brute force: the first window whose nearer edge is farthest from the position."""
    best, best_distance = None, -1
    for number, start in enumerate(starts):
        if start <= position < start + room and min(position - start, start + room - 1 - position) > best_distance:
            best, best_distance = number, min(position - start, start + room - 1 - position)
    return best


@pytest.mark.parametrize("n, room, stride", [(100, 38, 19), (39, 38, 0), (77, 10, 3), (5, 38, 19), (50, 8, 7)])
def test_sliding_ranges_tile_the_text_from_the_most_central_window(n, room, stride):
    ranges = sliding_ranges(n, room, stride)
    kept = [position for *_, keep_start, keep_stop in ranges for position in range(keep_start, keep_stop)]
    assert kept == list(range(n))
    starts = [start for start, *_ in ranges]
    for start, stop, keep_start, keep_stop in ranges:
        assert stop - start == min(room, n) and start <= keep_start < keep_stop <= stop
        for position in range(keep_start, keep_stop):
            assert starts[most_central_window(position, starts, room)] == start


def test_sliding_windows_give_each_token_its_most_central_windows_vector(tiny_bert, real_texts):
    from transformers import AutoTokenizer

    text = real_texts[-1]
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_bert))
    ids = tokenizer(text)["input_ids"]
    content, room, stride = ids[1:-1], 38, 12
    cache = encode_texts([text], tiny_bert, [2], policy="sliding", stride=stride)
    got = cache.get(text)
    assert (
        got.input_ids.tolist() == ids and cache.signature["n_truncated"] == 0 and cache.signature["n_long_texts"] == 1
    )
    starts = list(range(0, len(content) - room + 1, room - stride))
    starts += [len(content) - room] if starts[-1] + room < len(content) else []
    window_states = [
        direct_states(tiny_bert, [ids[0], *content[start : start + room], ids[-1]])[2][0].numpy() for start in starts
    ]
    expected = [window_states[0][0]]
    for position in range(len(content)):
        window = most_central_window(position, starts, room)
        expected.append(window_states[window][1 + position - starts[window]])
    expected.append(window_states[-1][-1])
    np.testing.assert_allclose(got.layers[2], np.stack(expected), atol=2e-5)


def test_cache_file_round_trips_and_has_the_same_bytes_for_the_same_inputs(tiny_bert, real_texts, tmp_path):
    first = encode_texts(real_texts, tiny_bert, [0, 2], batch_size=2)
    second = encode_texts(list(reversed(real_texts)) * 2, tiny_bert, [2, 0], batch_size=2)
    save_cache(first, tmp_path / "a.safetensors")
    save_cache(second, tmp_path / "b.safetensors")
    assert (tmp_path / "a.safetensors").read_bytes() == (tmp_path / "b.safetensors").read_bytes()
    loaded = load_cache(tmp_path / "a.safetensors")
    assert loaded.signature == first.signature and loaded.texts == first.texts and loaded.vocab == first.vocab
    for text in real_texts:
        for field in ("input_ids", "special"):
            assert np.array_equal(getattr(loaded.get(text), field), getattr(first.get(text), field))
        assert np.array_equal(loaded.get(text).layers[2], first.get(text).layers[2])
    save_cache(loaded, tmp_path / "c.safetensors")
    assert (tmp_path / "c.safetensors").read_bytes() == (tmp_path / "a.safetensors").read_bytes()
    (tmp_path / "cut.safetensors").write_bytes((tmp_path / "a.safetensors").read_bytes()[:-100])
    with pytest.raises(InputError, match="does not load, damaged or cut"):  # memory-mapped, but validated first
        load_cache(tmp_path / "cut.safetensors")


@pytest.mark.parametrize("dtype, policy", [("float32", "truncate"), ("float16", "sliding")])
def test_streamed_cache_file_has_the_bytes_of_the_cache_saved_whole(tiny_bert, real_texts, tmp_path, dtype, policy):
    texts = [*real_texts, "Short.", "A"]  # long texts, and inputs under 16 tokens (encoded alone)
    save_cache(encode_texts(texts, tiny_bert, [2, 0, 1], batch_size=2, policy=policy, dtype=dtype),
               tmp_path / "whole.safetensors")
    signature = encode_to_file(texts, tmp_path / "streamed.safetensors", tiny_bert, [2, 0, 1], batch_size=2,
                               policy=policy, dtype=dtype)
    assert (tmp_path / "streamed.safetensors").read_bytes() == (tmp_path / "whole.safetensors").read_bytes()
    assert load_cache(tmp_path / "streamed.safetensors").signature == signature
    assert not (tmp_path / "streamed.safetensors.partial").exists()


def test_safetensors_layout_is_the_header_safetensors_writes():
    from safetensors.numpy import save

    rng = np.random.default_rng(0)
    arrays = {"special": rng.random(7) > 0.5, "offsets": np.arange(3), "input_ids": np.arange(7) * 3,
              "layer_10": rng.random((7, 3)).astype(np.float32), "layer_2": rng.random((7, 3)).astype(np.float32),
              "half": rng.random((7, 2)).astype(np.float16), "empty": np.zeros((0, 3), np.float32)}
    metadata = {"storyeval": '{"texts": ["a \\"quoted\\" story\n\ttab", "\u0001\u001f\u007f", "café \u2028 😀"]}'}
    expected = save(arrays, metadata=metadata)
    header, starts, size = safetensors_layout({name: (a.dtype, a.shape) for name, a in arrays.items()}, metadata)
    assert expected[: len(header)] == header and size == len(expected)
    for name, array in arrays.items():
        assert expected[starts[name] : starts[name] + array.nbytes] == array.tobytes()


def test_idf_equals_bert_scores_get_idf_dict(tiny_bert, real_texts):
    from bert_score.utils import get_idf_dict
    from transformers import AutoTokenizer

    documents = real_texts[:3] + real_texts[:1]  # a repeated document counts twice, as in bert_score
    tokenizer = AutoTokenizer.from_pretrained(str(tiny_bert))
    tokenizer.model_max_length = 40  # bert_score truncates at the tokenizer's window, as the cache did
    expected = get_idf_dict(documents, tokenizer, nthreads=0)
    cache = encode_texts(real_texts, tiny_bert, [1])
    ours = idf_weights(cache, documents)
    assert ours.n_documents == 4 and set(ours) == set(expected)
    for token, value in expected.items():
        assert ours[token] == pytest.approx(value, abs=1e-12)
    unseen = np.array([1, 2, 101])  # [unused0], [unused1], [CLS]
    assert ours[1] == pytest.approx(np.log(5)) and 1 not in ours
    np.testing.assert_allclose(ours.of(unseen), [expected[1], expected[2], expected[101]])
    by_ids = idf_weights([cache.get(text).input_ids for text in documents])
    assert dict(by_ids) == dict(ours)


def test_device_choice():
    assert choose_device(None).type == ("cuda" if torch.cuda.is_available() else "cpu")
    assert choose_device("auto") == choose_device(None)
    assert choose_device("cpu").type == "cpu"
    with pytest.raises(InputError, match="not a torch device"):
        choose_device("gpu-please")
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="no CUDA"):
            choose_device("cuda")


def test_bad_inputs_raise_input_errors(tiny_bert, tmp_path):
    with pytest.raises(InputError, match="policy"):
        encode_texts(["a story"], tiny_bert, [1], policy="middle")
    with pytest.raises(InputError, match="stride"):
        encode_texts(["a story"], tiny_bert, [1], stride=4)
    with pytest.raises(InputError, match="stride"):
        encode_texts(["a story"], tiny_bert, [1], policy="sliding", stride=38)
    with pytest.raises(InputError, match="layers"):
        encode_texts(["a story"], tiny_bert, [3])
    with pytest.raises(InputError, match="max_length"):
        encode_texts(["a story"], tiny_bert, [1], max_length=41)
    with pytest.raises(InputError, match="empty"):
        encode_texts(["a story", "  "], tiny_bert, [1])
    with pytest.raises(InputError, match="no texts"):
        encode_texts([], tiny_bert, [1])
    with pytest.raises(InputError, match="cannot be loaded"):
        encode_texts(["a story"], tmp_path / "no-model", [1])
    with pytest.raises(InputError, match="does not exist"):
        load_cache(tmp_path / "absent.safetensors")
    (tmp_path / "junk.safetensors").write_bytes(b"not a tensor file")
    with pytest.raises(InputError, match="does not load, damaged or cut"):
        load_cache(tmp_path / "junk.safetensors")
    cache = encode_texts(["a story"], tiny_bert, [1])
    assert isinstance(cache, EmbeddingCache)
    with pytest.raises(InputError, match="1 texts are not in the embedding cache"):
        require_texts(cache, ["a story", "another story"], "bertscore")


def test_loading_an_encoder_prints_no_progress_bar(minilm, capfd):
    """transformers draws a "Loading weights" bar on stderr for every load: one per job on the console."""
    from storyeval.neural.embeddings import load_encoder

    load_encoder(minilm, "cpu")
    assert "Loading weights" not in capfd.readouterr().err
