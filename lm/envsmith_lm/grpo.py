"""GRPO on transformers: for each drawn prompt, `group` completions are
sampled, scored by the reward process, and each completion's advantage is
its reward standardised within its group (no critic). One gradient step per
batch of groups (on-policy, so the clipped ratio is 1 and the objective is
the group-normalised policy gradient), with an optional KL penalty to the
starting checkpoint (k3 estimator, as in the GRPO paper)."""

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
    logits = model(input_ids=ids, attention_mask=mask).logits[:, :-1, :]
    lp = torch.log_softmax(logits, -1).gather(-1, ids[:, 1:, None]).squeeze(-1)
    return lp, comp[:, 1:]


def grpo(model, tokenizer, rows, reward, steps: int, prompts_per_step: int, group: int, lr: float, seed: int,
         temperature: float = 1.0, beta: float = 0.02, max_new: int = 48, on_step=None):
    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    ref = copy.deepcopy(model).eval() if beta > 0 else None
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.0, betas=(0.9, 0.99))
    curve = []
    t0 = time.time()
    for step in range(steps):
        batch = [rows[rng.randrange(len(rows))] for _ in range(prompts_per_step)]
        prompts = [prompt_ids(tokenizer, r) for r in batch]
        model.eval()
        comps = generate(model, tokenizer, prompts, max_new=max_new, sample=True, temperature=temperature,
                         per_prompt=group, generator=gen)
        texts = [decode_plan(tokenizer, c) for c in comps]
        ids = [r["id"] for r in batch for _ in range(group)]
        scores = reward.score(list(zip(ids, texts)))
        r = torch.tensor([float(s["reward"]) for s in scores], dtype=torch.float32).view(prompts_per_step, group)
        adv = ((r - r.mean(1, keepdim=True)) / (r.std(1, keepdim=True) + 1e-4)).view(-1).to(model.device)
        seqs = [prompts[i // group] + comps[i] for i in range(len(comps))]
        plens = [len(prompts[i // group]) for i in range(len(comps))]
        model.train()
        lp, cmask = _logprobs(model, seqs, plens, tokenizer.pad_token_id)
        ntok = cmask.sum(1).clamp(min=1)
        pg = -((lp * cmask).sum(1) / ntok * adv)
        loss = pg.mean()
        kl_val = 0.0
        if ref is not None:
            with torch.no_grad():
                ref_lp, _ = _logprobs(ref, seqs, plens, tokenizer.pad_token_id)
            d = ref_lp - lp
            kl = ((torch.exp(d) - d - 1) * cmask).sum(1) / ntok
            loss = loss + beta * kl.mean()
            kl_val = float(kl.mean())
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
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
