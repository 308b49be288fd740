"""A judge served over HTTP: an OpenAI-compatible completions server on the loopback address, answering with a tiny
random causal LM, rates the stories as the same model in-process does."""

import threading

import numpy as np
import pytest

from tiny_models import CORPUS, completions_server, one_thread, tiny_judge

thread = pytest.fixture(autouse=True)(one_thread)
PROMPTS = ["Write about a dragon.", "Write about a knight.", "Write about a letter."]


def model_server(folder):
    """A minimal /v1/completions (greedy; `logprobs`: the top next tokens at the first position, as {token text:
    logprob}) serving the causal LM at `folder`."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    model, tokenizer = AutoModelForCausalLM.from_pretrained(folder).eval(), AutoTokenizer.from_pretrained(folder)

    def complete(prompt, request):
        ids = prompt if isinstance(prompt, list) else tokenizer(prompt)["input_ids"]
        with torch.no_grad():
            out = model.generate(torch.tensor([ids]), max_new_tokens=request["max_tokens"], do_sample=False,
                                 output_scores=True, return_dict_in_generate=True, pad_token_id=0)
        new = out.sequences[0, len(ids):].tolist()
        choice = {"text": tokenizer.decode(new, skip_special_tokens=True)}
        if request.get("logprobs"):
            logprobs = torch.log_softmax(out.scores[0][0].double(), -1)
            top = torch.topk(logprobs, min(request["logprobs"], len(logprobs)))
            choice["logprobs"] = {"top_logprobs": [{tokenizer.decode([int(t)]): float(v)
                                                    for v, t in zip(top.values, top.indices)}]}
        return choice, len(ids)

    return completions_server(complete)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    folder = tiny_judge(tmp_path_factory.mktemp("served") / "tiny", chat=True)
    server = model_server(folder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield folder, f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


def test_a_served_judge_rates_as_the_model_in_process(served):
    import storyeval

    folder, url = served
    local = storyeval.judge(CORPUS[:3], criteria=["Coherence", "Empathy"], model=str(folder), prompts=PROMPTS,
                            device="cpu")
    remote = storyeval.judge(CORPUS[:3], criteria=["Coherence", "Empathy"], model=url, served="tiny",
                             tokenizer=str(folder), prompts=PROMPTS, top_logprobs=1000)
    np.testing.assert_allclose(remote.to_numpy(), local.to_numpy(), rtol=1e-5)
    answers = {mode: storyeval.judge(CORPUS[:2], criteria=["Coherence"], model=model, prompts=PROMPTS[:2],
                                     mode="generate", max_new_tokens=6, tokenizer=str(folder), device="cpu")
               for mode, model in (("local", str(folder)), ("served", url))}
    assert answers["local"].equals(answers["served"])


def test_plain_text_prompts_and_few_top_tokens(served):
    """Without a local tokenizer the prompt goes as text; a position whose top tokens hold no rating is NaN."""
    import storyeval
    from storyeval.judges.http import read_choice

    def expected_from_top(top):  # (expected rating, rating mass) of a choice whose answer position has `top`
        value, mass, *_ = read_choice({"logprobs": {"top_logprobs": [top]}}, generate=False)
        return value, mass

    _, url = served
    scores = storyeval.judge(CORPUS[:2], criteria=["Coherence"], model=url, prompts=PROMPTS[:2], top_logprobs=1000)
    assert ((scores >= 1) & (scores <= 5)).all().all()
    assert expected_from_top({" 4": np.log(0.3), "4": np.log(0.1), " 2": np.log(0.4), "the": np.log(0.2)}) == (
        pytest.approx((4 * 0.4 + 2 * 0.4) / 0.8), pytest.approx(0.8))
    assert np.isnan(expected_from_top({"the": -0.1})[0])


def test_a_server_that_does_not_answer_is_one_line():
    import storyeval
    from storyeval.errors import InputError

    with pytest.raises(InputError, match=r"judge: http://127.0.0.1:9/v1/completions did not answer .*fix: start"):
        storyeval.judge(["A story."], criteria=["Coherence"], model="http://127.0.0.1:9/v1")
