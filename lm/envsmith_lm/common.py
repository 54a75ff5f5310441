"""Shared plumbing: threads, seeds, JSON lines, the chat format."""

import json
import os
import random
import sys

CHATML_TEMPLATE = (
    "{% for message in messages %}{{'<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n'}}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
END_OF_TURN = "<|im_end|>"


class UserError(Exception):
    """A mistake of the caller: printed as one line, exit code 2."""


def setup_torch(threads: int, seed: int):
    """Set torch's CPU threads (the machine is shared) and every seed."""
    import torch

    torch.set_num_threads(max(1, threads))
    try:
        torch.set_num_interop_threads(1)
    except RuntimeError:
        pass
    random.seed(seed)
    torch.manual_seed(seed)


def read_jsonl(path: str) -> list:
    try:
        with open(path, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    except OSError as e:
        raise UserError(f"cannot read {path}: {e.strerror}") from e
    except json.JSONDecodeError as e:
        raise UserError(f"{path}: not JSON lines ({e})") from e


def write_json(path: str, value) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(value, f, indent=1)
    os.replace(tmp, path)


def messages_of(row: dict) -> list:
    """The chat messages of an lm-data row (as the LLM policy sends them)."""
    return [
        {"role": "system", "content": row["system"]},
        {"role": "user", "content": row["prompt"]},
    ]


def log(*parts) -> None:
    print(*parts, file=sys.stderr, flush=True)
