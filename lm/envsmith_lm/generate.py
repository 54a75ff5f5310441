"""Batched generation of plans and their prompt/completion token ids."""

import torch

from .common import END_OF_TURN, messages_of


def prompt_ids(tokenizer, row) -> list:
    return tokenizer.apply_chat_template(messages_of(row), add_generation_prompt=True, tokenize=True, return_dict=False)


def completion_ids(tokenizer, plan: str) -> list:
    return tokenizer(plan + END_OF_TURN, add_special_tokens=False)["input_ids"]


@torch.no_grad()
def generate(model, tokenizer, prompts: list, max_new: int, sample: bool, temperature: float = 1.0, per_prompt: int = 1, generator=None):
    """Decode `per_prompt` completions of each prompt (token id lists).
    Returns a list (len(prompts) * per_prompt) of completion id lists, each
    ending at the first end-of-turn (included) or at max_new tokens."""
    eos = tokenizer.convert_tokens_to_ids(END_OF_TURN)
    pad = tokenizer.pad_token_id
    seqs = [p for p in prompts for _ in range(per_prompt)]
    n = len(seqs)
    width = max(len(s) for s in seqs)
    ids = torch.full((n, width), pad, dtype=torch.long)
    mask = torch.zeros((n, width), dtype=torch.long)
    for i, s in enumerate(seqs):  # left padding
        ids[i, width - len(s):] = torch.tensor(s)
        mask[i, width - len(s):] = 1
    dev = model.device
    ids, mask = ids.to(dev), mask.to(dev)
    pos = (mask.cumsum(1) - 1).clamp(min=0)
    out = model(input_ids=ids, attention_mask=mask, position_ids=pos, use_cache=True)
    past = out.past_key_values
    logits = out.logits[:, -1, :]
    done = torch.zeros(n, dtype=torch.bool, device=dev)
    gen = [[] for _ in range(n)]
    cur_pos = pos[:, -1]
    for _ in range(max_new):
        if sample:
            probs = torch.softmax(logits / temperature, dim=-1)
            # sampled on the CPU with the seeded generator: the same draws on any device
            nxt = torch.multinomial(probs.float().cpu(), 1, generator=generator).squeeze(1).to(dev)
        else:
            nxt = logits.argmax(-1)
        for i in range(n):
            if not done[i]:
                gen[i].append(int(nxt[i]))
                if int(nxt[i]) == eos:
                    done[i] = True
        if bool(done.all()):
            break
        mask = torch.cat([mask, torch.ones((n, 1), dtype=torch.long, device=dev)], 1)
        cur_pos = cur_pos + 1
        out = model(input_ids=nxt[:, None], attention_mask=mask, position_ids=cur_pos[:, None], past_key_values=past, use_cache=True)
        past = out.past_key_values
        logits = out.logits[:, -1, :]
    return gen


def decode_plan(tokenizer, ids: list) -> str:
    return tokenizer.decode(ids, skip_special_tokens=True)
