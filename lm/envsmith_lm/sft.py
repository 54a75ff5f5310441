"""Supervised fine-tuning on solver plans: the loss is the completion's
(plan + end of turn) next-token cross-entropy; the prompt is context only."""

import math
import random
import time

import torch

from .common import log
from .generate import completion_ids, prompt_ids


def encode_rows(tokenizer, rows):
    out = []
    for r in rows:
        if r.get("plan") is None:
            continue
        p = prompt_ids(tokenizer, r)
        c = completion_ids(tokenizer, r["plan"])
        out.append((p, c))
    return out


def batch_of(examples, pad):
    width = max(len(p) + len(c) for p, c in examples)
    ids = torch.full((len(examples), width), pad, dtype=torch.long)
    labels = torch.full((len(examples), width), -100, dtype=torch.long)
    mask = torch.zeros((len(examples), width), dtype=torch.long)
    for i, (p, c) in enumerate(examples):
        seq = p + c
        ids[i, : len(seq)] = torch.tensor(seq)
        labels[i, len(p) : len(seq)] = torch.tensor(c)
        mask[i, : len(seq)] = 1
    return ids, labels, mask


def sft(model, tokenizer, rows, steps: int, batch: int, lr: float, seed: int, warmup: int = 20, on_step=None):
    examples = encode_rows(tokenizer, rows)
    rng = random.Random(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01, betas=(0.9, 0.98))
    model.train()
    curve = []
    t0 = time.time()
    order = []
    for step in range(steps):
        if len(order) < batch:
            order = list(range(len(examples)))
            rng.shuffle(order)
        idx, order = order[:batch], order[batch:]
        ids, labels, mask = batch_of([examples[i] for i in idx], tokenizer.pad_token_id)
        scale = min(1.0, (step + 1) / warmup) * 0.5 * (1 + math.cos(math.pi * step / steps))
        for g in opt.param_groups:
            g["lr"] = lr * scale
        dev = model.device
        loss = model(input_ids=ids.to(dev), attention_mask=mask.to(dev), labels=labels.to(dev)).loss
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 10 == 0 or step == steps - 1:
            value = loss.item()
            curve.append({"step": step, "loss": round(value, 5), "seconds": round(time.time() - t0, 2)})
            log(f"sft step {step}/{steps} loss {value:.4f} ({time.time() - t0:.0f} s)")
            if on_step:
                on_step(step)
    model.eval()
    return curve
