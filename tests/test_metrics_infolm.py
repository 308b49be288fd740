"""InfoLM Fisher-Rao on a tiny random BERT: equal to a one-masked-copy-at-a-time hand loop; identity gives 0."""

import math
from collections import Counter

import numpy as np
import pandas as pd
import pytest
import torch

from storyeval.errors import InputError
from storyeval.metrics import infolm

from tiny_models import one_thread, tiny_bert

single_thread = pytest.fixture(scope="module", autouse=True)(one_thread)

TEXTS = pd.DataFrame(
    {
        "story_id": ["p0-human", "p0-a", "p1-a", "p1-b"],
        "story": [
            "the dragon slept on gold.",
            "a knight rode into the dark forest",
            "rain fell on the village",
            "the robot painted the sea",
        ],
        "reference": [
            "the dragon slept on gold.",
            "the dragon slept on gold.",
            "she opened the door",
            "she opened the door",
        ],
    }
)


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    return tiny_bert(tmp_path_factory.mktemp("bert"), max_position=512)  # bert-base's window (max_length)


def idf_by_hand(documents):
    df = Counter(token for doc in documents for token in set(doc))
    return {token: math.log((len(documents) + 1) / (count + 1)) for token, count in df.items()}


def distribution_by_hand(model, tokenizer, text, idf, temperature=0.25):
    ids = tokenizer(text)["input_ids"]
    total, weight_sum = 0.0, 0.0
    for position in range(1, len(ids) - 1):  # [CLS] ... [SEP]
        masked = list(ids)
        masked[position] = tokenizer.mask_token_id
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([masked])).logits[0, position].double()
        weight = 1.0 if idf is None else idf[ids[position]]
        total = total + weight * torch.softmax(logits / temperature, dim=-1).numpy()
        weight_sum += weight
    return total / weight_sum


@pytest.mark.parametrize("mode", ["shared", "separate", "none"])
def test_equals_hand_loop(bert, mode):
    from transformers import AutoModelForMaskedLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(bert)
    model = AutoModelForMaskedLM.from_pretrained(bert).eval()
    tokens = {text: tokenizer(text)["input_ids"] for text in set(TEXTS.story) | set(TEXTS.reference)}
    if mode == "shared":
        story_idf = reference_idf = idf_by_hand(list(tokens.values()))
    elif mode == "separate":
        story_idf = idf_by_hand([tokens[t] for t in TEXTS.story])
        reference_idf = idf_by_hand([tokens[t] for t in TEXTS.reference])
    else:
        story_idf = reference_idf = None
    scores = infolm.compute(TEXTS, model=str(bert), idf=mode, max_tokens=40, device="cpu")
    hand = {}
    for row in TEXTS.itertuples():
        for text, idf in [(row.story, story_idf), (row.reference, reference_idf)]:
            if (text, id(idf)) not in hand:
                hand[text, id(idf)] = distribution_by_hand(model, tokenizer, text, idf)
        p, q = hand[row.story, id(story_idf)], hand[row.reference, id(reference_idf)]
        expected = 2 * math.acos(min(1.0, float(np.sum(np.sqrt(p * q)))))
        if row.story != row.reference:  # arccos near 1 keeps only ~8 digits: compare away from 0
            assert scores.loc[row.story_id, "infolm-fisherrao"] == pytest.approx(expected, rel=1e-6)
        assert scores.loc[row.story_id, "infolm-r-fisherrao"] == scores.loc[row.story_id, "infolm-fisherrao"]
        assert scores.loc[row.story_id, "infolm-sim-fisherrao"] == scores.loc[row.story_id, "infolm-fisherrao"]
    assert ((scores.to_numpy() >= 0) & (scores.to_numpy() <= math.pi)).all()
    if mode != "separate":  # identity: the same text, the same weights
        assert scores.loc["p0-human", "infolm-fisherrao"] == pytest.approx(0.0, abs=1e-7)
    else:  # story and reference idf differ, so the human row is not 0
        assert scores.loc["p0-human", "infolm-fisherrao"] > 1e-4


def test_fisher_rao_formula():
    rng = np.random.default_rng(0)
    p, q = rng.dirichlet(np.ones(50), size=(2, 7))
    assert infolm.fisher_rao(p, q) == pytest.approx(2 * np.arccos(np.sum(np.sqrt(p * q), axis=-1)), rel=1e-12)
    assert infolm.fisher_rao(p, p) == pytest.approx(np.zeros(7), abs=0)
    disjoint = np.eye(4)
    assert infolm.fisher_rao(disjoint[0], disjoint[1]) == pytest.approx(math.pi)


def test_bad_input(bert):
    with pytest.raises(InputError, match="idf="):
        infolm.compute(TEXTS, model=str(bert), idf="bm25")
    with pytest.raises(InputError, match="no reference"):
        infolm.compute(TEXTS.assign(reference=None), model=str(bert))
    assert infolm.signature(model=str(bert), idf="none")["parameters"] == {
        "temperature": 0.25,
        "idf": "none",
        "max_length": 512,
        "measure": "fisher_rao",
    }
