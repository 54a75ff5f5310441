"""GRPO on transformers: for each drawn prompt, `group` completions are
sampled, scored by the reward process, and each completion's advantage is
its reward standardised within its group (no critic). One gradient step per
batch of groups (on-policy, so the clipped ratio is 1 and the objective is
the group-normalised policy gradient), with an optional KL penalty to the
starting checkpoint (k3 estimator, as in the GRPO paper).

Options for large models (each off by default, leaving the micro path as it
was): `adapters` (the model is a peft LoRA model: the KL reference is the
same model with its adapters disabled, so no copy of the weights is made),
`micro_batch` (the backward pass over at most this many sequences at a time,
gradients accumulated: the same gradient in less memory), and `sampler` (an
object with `sample(model, prompts, max_new, temperature, per_prompt, seed)`
drawing the completions, e.g. vLLM's; by default `generate` below)."""

import copy
import random
import time

import torch

from .common import log
from .generate import decode_plan, generate, prompt_ids


def _logprobs(model, seqs, prompt_lens, pad):
    width = max(len(s) for s in seqs)
    ids = torch.full((len(seqs), width), pad, dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    comp = torch.zeros((len(seqs), width), dtype=torch.float32)
    for i, (s, p) in enumerate(zip(seqs, prompt_lens)):
        ids[i, : len(s)] = torch.tensor(s)
        mask[i, : len(s)] = 1
        comp[i, p : len(s)] = 1
    dev = model.device
    ids, mask, comp = ids.to(dev), mask.to(dev), comp.to(dev)
    logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1, :].float()
    lp = torch.log_softmax(logits, -1).gather(-1, ids[:, 1:, None]).squeeze(-1)
    return lp, comp[:, 1:]


def _ref_logprobs(model, ref, adapters, seqs, plens, pad):
    with torch.no_grad():
        if adapters:
            with model.disable_adapter():
                return _logprobs(model, seqs, plens, pad)[0]
        return _logprobs(ref, seqs, plens, pad)[0]


def backward(model, ref, adapters, seqs, plens, pad, adv, beta, micro_batch=None):
    """Gradients of the GRPO loss (policy gradient plus beta x KL to the
    reference) of a batch of sequences; returns the mean KL. With
    `micro_batch`, chunk by chunk (each chunk's share of the mean): the same
    gradient in less memory."""
    if micro_batch is None or micro_batch >= len(seqs):
        lp, cmask = _logprobs(model, seqs, plens, pad)
        ntok = cmask.sum(1).clamp(min=1)
        pg = -((lp * cmask).sum(1) / ntok * adv)
        loss = pg.mean()
        kl_val = 0.0
        if beta > 0:
            ref_lp = _ref_logprobs(model, ref, adapters, seqs, plens, pad)
            d = ref_lp - lp
            kl = ((torch.exp(d) - d - 1) * cmask).sum(1) / ntok
            loss = loss + beta * kl.mean()
            kl_val = float(kl.mean())
        loss.backward()
        return kl_val
    n = len(seqs)
    kl_sum = 0.0
    for i in range(0, n, micro_batch):
        j = min(n, i + micro_batch)
        lp, cmask = _logprobs(model, seqs[i:j], plens[i:j], pad)
        ntok = cmask.sum(1).clamp(min=1)
        loss = -((lp * cmask).sum(1) / ntok * adv[i:j]).sum() / n
        if beta > 0:
            ref_lp = _ref_logprobs(model, ref, adapters, seqs[i:j], plens[i:j], pad)
            d = ref_lp - lp
            kl = ((torch.exp(d) - d - 1) * cmask).sum(1) / ntok
            loss = loss + beta * kl.sum() / n
            kl_sum += float(kl.sum())
        loss.backward()
    return kl_sum / n


def grpo(model, tokenizer, rows, reward, steps: int, prompts_per_step: int, group: int, lr: float, seed: int,
         temperature: float = 1.0, beta: float = 0.02, max_new: int = 48, on_step=None,
         adapters: bool = False, micro_batch=None, sampler=None):
    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    ref = copy.deepcopy(model).eval() if beta > 0 and not adapters else None
    trained = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.AdamW(trained, lr=lr, weight_decay=0.0, betas=(0.9, 0.99))
    curve = []
    t0 = time.time()
    for step in range(steps):
        batch = [rows[rng.randrange(len(rows))] for _ in range(prompts_per_step)]
        prompts = [prompt_ids(tokenizer, r) for r in batch]
        model.eval()
        if sampler is None:
            comps = generate(model, tokenizer, prompts, max_new=max_new, sample=True, temperature=temperature,
                             per_prompt=group, generator=gen)
        else:
            comps = sampler.sample(model, prompts, max_new, temperature, group, seed * 100003 + step)
        texts = [decode_plan(tokenizer, c) for c in comps]
        ids = [r["id"] for r in batch for _ in range(group)]
        scores = reward.score(list(zip(ids, texts)))
        r = torch.tensor([float(s["reward"]) for s in scores], dtype=torch.float32).view(prompts_per_step, group)
        adv = ((r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + 1e-4)).view(-1).to(model.device)
        seqs = [prompts[i // group] + comps[i] for i in range(len(comps))]
        plens = [len(prompts[i // group]) for i in range(len(comps))]
        model.train()
        opt.zero_grad()
        kl_val = backward(model, ref, adapters, seqs, plens, tokenizer.pad_token_id, adv, beta, micro_batch)
        torch.nn.utils.clip_grad_norm_(trained, 1.0)
        opt.step()
        outcomes = [s["outcome"] for s in scores]
        point = {
            "step": step,
            "reward": round(float(r.mean()), 5),
            "success": round(outcomes.count("success") / len(outcomes), 5),
            "invalid_plan": round(outcomes.count("invalid_plan") / len(outcomes), 5),
            "kl": round(kl_val, 6),
            "seconds": round(time.time() - t0, 2),
        }
        curve.append(point)
        log(f"grpo step {step}/{steps} reward {point['reward']:.3f} success {point['success']:.3f} invalid {point['invalid_plan']:.3f}")
        if on_step:
            on_step(step)
    model.eval()
    return curve
