"""A byte-level BPE tokenizer trained on the benchmark's text (GPT-2 style:
bytes as the base alphabet, GPT-2's split pattern, merges learned from the
prompts and plans), with the ChatML control tokens and chat template.

Byte-level BPE is what llama.cpp's `gpt2` tokenizer runs, so the GGUF export
carries the same vocabulary and merges and both sides give the same ids
(tested). Merges keep the prompts short: a character-level tokenizer makes a
5x5 prompt about 600 tokens, this one about 150.
"""

from .common import CHATML_TEMPLATE, END_OF_TURN, SPECIAL_TOKENS


def train_tokenizer(texts, vocab_size: int, out_dir: str):
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=SPECIAL_TOKENS,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(texts, trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        bos_token="<|endoftext|>",
        eos_token=END_OF_TURN,
        pad_token="<|endoftext|>",
        unk_token=None,
    )
    fast.chat_template = CHATML_TEMPLATE
    fast.save_pretrained(out_dir)
    return fast


def load_tokenizer(path: str):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(path)
