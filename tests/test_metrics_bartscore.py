"""BARTScore on a tiny random BART: batched scores equal a one-pair hand computation."""

import pandas as pd
import pytest
import torch

from storyeval.errors import InputError
from storyeval.metrics import bartscore

from tiny_models import one_thread, tiny_bart

single_thread = pytest.fixture(scope="module", autouse=True)(one_thread)

TEXTS = pd.DataFrame({
    "story_id": ["p000-human", "p000-gpt", "p001-gpt"],
    "prompt": ["A dragon guards a mountain.", "A dragon guards a mountain.", "Write about a robot."],
    "story": ["The dragon slept on gold for a hundred years.", "Once a knight came.",
              "The robot painted the sea and the sky at night, then it rained."],
    "reference": ["The dragon slept on gold for a hundred years.", "The dragon slept on gold for a hundred years.",
                  "She opened the door."],
})


@pytest.fixture(scope="module")
def bart(tmp_path_factory):
    return tiny_bart(tmp_path_factory.mktemp("bart"), max_position=1024)  # bart-large-cnn's window (max_length)


def hand_score(folder, source: str, target: str) -> float:
    """log p(target | source) averaged over the target's ids, one forward call, decoder input built by hand."""
    from transformers import AutoTokenizer, BartForConditionalGeneration

    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = BartForConditionalGeneration.from_pretrained(folder).eval()
    src = torch.tensor([tokenizer(source)["input_ids"]])
    tgt = tokenizer(target)["input_ids"]
    decoder_input = torch.tensor([[model.config.decoder_start_token_id] + tgt[:-1]])
    with torch.no_grad():
        logits = model(input_ids=src, decoder_input_ids=decoder_input).logits[0]
    log_p = torch.log_softmax(logits, dim=-1)
    return sum(float(log_p[t, token]) for t, token in enumerate(tgt)) / len(tgt)


def test_scores_equal_hand_computation(bart):
    scores = bartscore.compute(TEXTS, model=str(bart), batch_size=2, device="cpu")
    assert list(scores.columns) == ["bartscore-ps", "bartscore-sp", "bartscore-sh", "bartscore-hs"]
    for row in TEXTS.itertuples():
        assert scores.loc[row.story_id, "bartscore-ps"] == pytest.approx(
            hand_score(bart, row.prompt, row.story), abs=1e-5
        )
        assert scores.loc[row.story_id, "bartscore-sp"] == pytest.approx(
            hand_score(bart, row.story, row.prompt), abs=1e-5
        )
        assert scores.loc[row.story_id, "bartscore-sh"] == pytest.approx(
            hand_score(bart, row.story, row.reference), abs=1e-5
        )
        assert scores.loc[row.story_id, "bartscore-hs"] == pytest.approx(
            hand_score(bart, row.reference, row.story), abs=1e-5
        )
    # a log-likelihood: negative; the human row is one pair in both directions
    assert (scores.to_numpy() < 0).all()
    assert scores.loc["p000-human", "bartscore-sh"] == scores.loc["p000-human", "bartscore-hs"]


def test_batching_and_truncation(bart):
    one = bartscore.compute(TEXTS, model=str(bart), variants=["sh"], batch_size=1, device="cpu")
    three = bartscore.compute(TEXTS, model=str(bart), variants=["sh"], batch_size=3, device="cpu")
    pd.testing.assert_frame_equal(one, three, atol=1e-5, rtol=0)
    with pytest.warns(UserWarning, match="cut at 8 tokens"):
        cut = bartscore.compute(TEXTS, model=str(bart), variants=["ps"], max_length=8, device="cpu")
    assert cut.loc["p001-gpt", "bartscore-ps"] != pytest.approx(
        hand_score(bart, TEXTS.prompt[2], TEXTS.story[2]), abs=1e-3
    )


def test_bad_input(bart, tmp_path):
    with pytest.raises(InputError, match="unknown variants"):
        bartscore.compute(TEXTS, model=str(bart), variants=["xy"])
    with pytest.raises(InputError, match="no prompt"):
        bartscore.compute(TEXTS.assign(prompt=[None, "a", "b"]), model=str(bart), variants=["ps"])
    assert bartscore.needs(["sh"]) == {"reference"}
    bartscore.compute(
        TEXTS.drop(columns="prompt"), model=str(bart), variants=["sh"]
    )  # PS/SP not asked: no prompt needed
    with pytest.raises(InputError, match="neither a local folder nor a hub id"):
        bartscore.compute(TEXTS, model=str(tmp_path / "absent"))
    with pytest.raises(InputError, match="max_length 2048 exceeds the 1024-position window"):
        bartscore.compute(TEXTS, model=str(bart), max_length=2048)


def test_model_loading_rules(bart, monkeypatch):
    """storyeval.neural.models, shared by every model-based metric: once per process, offline, device rules."""
    from storyeval.neural import models

    assert models.load("seq2seq", bart, "cpu") is models.load("seq2seq", str(bart), None)  # loaded once
    assert models.load("seq2seq", bart).device.type == ("cuda" if torch.cuda.is_available() else "cpu")
    if not torch.cuda.is_available():
        with pytest.raises(InputError, match="no CUDA"):
            models.load("seq2seq", bart, "cuda")
    with pytest.raises(InputError, match="unknown model role"):
        models.load("decoder", bart)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(InputError, match="role causal-lm: cannot load 'no-such-org/no-such-model'.*HF_HUB_OFFLINE"):
        models.load("causal-lm", "no-such-org/no-such-model")
    ident = models.identity(bart)
    assert set(ident["weights_sha256"]) == {"model.safetensors"} and len(ident["files_sha256"]) == 64
    assert models.identity("facebook/bart-large-cnn") == {"name": "facebook/bart-large-cnn"}
    sig = bartscore.signature(model=str(bart), variants=["sh"])
    assert sig["model"] == ident and sig["roles"] == {"sh": "log p(reference | story)"}


def test_length_batches():
    from storyeval.neural import models

    batches = models.length_batches([5, 50, 7, 49, 1], max_tokens=100, max_batch=3)
    assert [b.tolist() for b in batches] == [[1, 3], [2, 0, 4]]  # longest first; 2 x 50 fit in 100 tokens
    assert [b.tolist() for b in models.length_batches([500], 100, 8)] == [[0]]  # an item longer than the budget alone
