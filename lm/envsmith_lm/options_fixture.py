"""Measurements of the trainer's large-model options on a micro model, for
`nodes/lm_options_test.ts` (prints one JSON object):

  python -m envsmith_lm.options_fixture OUT_DIR

- micro_batch: the gradient of a batch computed in chunks of 1 and 3
  sequences against the whole batch at once (max abs difference), and two
  GRPO runs (whole, chunks of 2) from the same seed (max abs difference of
  their weights).
- lora: trainable share; no copy of the model made for the KL reference;
  the reference (adapters off) equals the starting model after training
  steps; the merged model equals the adapted one; a rerun gives the same
  weights.
- bf16: the dtype of a loaded model's weights, the size of its saved
  weights against f32's, and a GRPO step in bf16 that moves the weights.
"""

import copy
import json
import os
import sys

import torch

from . import grpo as grpo_mod
from .common import setup_torch
from .grpo import _logprobs, backward, grpo
from .model import load_model
from .tokenizer import train_tokenizer


class _Reward:
    """Rewards without the reward process: a deterministic function of the
    completion text, spread over [0, 1] so advantages are not all zero."""

    def score(self, pairs):
        return [{"reward": (sum(map(ord, t)) % 7) / 6, "outcome": "invalid_plan"} for _, t in pairs]


def _micro(out, rows):
    from transformers import LlamaConfig, LlamaForCausalLM

    setup_torch(1, 3)
    tok = train_tokenizer([r["system"] + "\n" + r["prompt"] for r in rows] * 4, 300, out)
    cfg = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                      num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=512,
                      tie_word_embeddings=True, bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                      pad_token_id=tok.pad_token_id)
    model = LlamaForCausalLM(cfg)
    model.save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)
    return tok


def _grads(model):
    return torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None])


def _weights(model):
    return torch.cat([p.detach().float().flatten() for p in model.parameters()])


def main():
    out = sys.argv[1]
    rows = [{"id": f"r{i}", "system": "Plan moves.", "prompt": f"Map {i}: agent at {i % 3},{i % 2}; goal {i % 4}."}
            for i in range(12)]
    ck = os.path.join(out, "ck")
    tok = _micro(ck, rows)
    res = {}

    # micro_batch: the same gradient, the same training
    model = load_model(ck)
    ref = copy.deepcopy(model).eval()
    gen = torch.Generator().manual_seed(5)
    seqs = [list(torch.randint(3, len(tok), (int(n),), generator=gen)) for n in torch.randint(6, 14, (6,), generator=gen)]
    seqs = [[int(x) for x in s] for s in seqs]
    plens = [3] * len(seqs)
    adv = torch.randn(len(seqs), generator=gen)
    with torch.no_grad():  # a policy away from its reference, so the KL term has a gradient
        for p in model.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=gen))
    model.train()
    diffs = {}
    for mb in (None, 1, 3):
        model.zero_grad()
        kl = backward(model, ref, False, seqs, plens, tok.pad_token_id, adv, 0.1, mb)
        diffs[mb] = (_grads(model).clone(), kl)
    g0, kl0 = diffs[None]
    res["micro_batch_grad_diff"] = max(float((diffs[m][0] - g0).abs().max()) for m in (1, 3))
    res["micro_batch_kl_diff"] = max(abs(diffs[m][1] - kl0) for m in (1, 3))
    res["grad_norm"] = float(g0.norm())
    res["kl"] = kl0

    def run(micro_batch=None, lora=None, precision="f32"):
        setup_torch(1, 11)
        m = load_model(ck, precision)
        opts = {}
        if lora:
            from .lora import add_adapters

            m = add_adapters(m, lora, None, 0.0, ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])
            opts["adapters"] = True
        if micro_batch:
            opts["micro_batch"] = micro_batch
        curve = grpo(m, tok, rows, _Reward(), 3, 2, 3, 0.05, 11, beta=0.05, max_new=6, **opts)
        return m, curve

    start = _weights(load_model(ck))
    whole, c1 = run()
    chunked, c2 = run(micro_batch=2)
    res["micro_batch_weight_diff"] = float((_weights(whole) - _weights(chunked)).abs().max())
    res["weights_moved"] = float((_weights(whole) - start).abs().max())
    res["rewards"] = [p["reward"] for p in c1]

    # lora: no copy, the reference is the start, merged equals adapted
    copies = []
    real = grpo_mod.copy.deepcopy

    def counting(x, *a):
        if isinstance(x, torch.nn.Module):
            copies.append(type(x).__name__)
        return real(x, *a)

    grpo_mod.copy.deepcopy = counting
    try:
        adapted, _ = run(lora=4)
        res["model_copies_lora"] = list(copies)
        run()
        res["model_copies_full"] = copies[len(res["model_copies_lora"]):]
    finally:
        grpo_mod.copy.deepcopy = real
    from .lora import merge_adapters, trainable_share

    trainable, total = trainable_share(adapted)
    res["lora_trainable_share"] = trainable / total
    ids = [s for s in seqs]
    with torch.no_grad():
        adapted.eval()
        lp_adapted = _logprobs(adapted, ids, plens, tok.pad_token_id)[0]
        with adapted.disable_adapter():
            lp_off = _logprobs(adapted, ids, plens, tok.pad_token_id)[0]
        base = load_model(ck).eval()
        lp_base = _logprobs(base, ids, plens, tok.pad_token_id)[0]
        merged = merge_adapters(adapted).eval()
        lp_merged = _logprobs(merged, ids, plens, tok.pad_token_id)[0]
    res["lora_reference_vs_start"] = float((lp_off - lp_base).abs().max())
    res["lora_adapted_vs_start"] = float((lp_adapted - lp_base).abs().max())
    res["lora_merged_vs_adapted"] = float((lp_merged - lp_adapted).abs().max())
    res["lora_merged_type"] = type(merged).__name__
    again, _ = run(lora=4)
    from .lora import merge_adapters as _m

    res["lora_rerun_diff"] = float((_weights(_m(again)) - _weights(merged)).abs().max())

    # bf16: weights, saved size, a step that moves them
    m16, c16 = run(precision="bf16")
    res["bf16_dtype"] = str(next(m16.parameters()).dtype)
    res["bf16_moved"] = float((_weights(m16) - start).abs().max())
    d16 = os.path.join(out, "bf16")
    m16.save_pretrained(d16, safe_serialization=True)
    size = lambda d: sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if f.endswith(".safetensors"))
    res["bf16_size_ratio"] = size(d16) / size(ck)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
