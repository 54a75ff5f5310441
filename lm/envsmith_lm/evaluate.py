"""Held-out success: greedy plans scored by the reward process."""

import torch

from .generate import decode_plan, generate, prompt_ids


def evaluate(model, tokenizer, rows, reward, batch: int = 64, max_new: int = 96):
    model.eval()
    results = []
    for k in range(0, len(rows), batch):
        chunk = rows[k : k + batch]
        prompts = [prompt_ids(tokenizer, r) for r in chunk]
        gens = generate(model, tokenizer, prompts, max_new=max_new, sample=False)
        texts = [decode_plan(tokenizer, g) for g in gens]
        scores = reward.score([(r["id"], t) for r, t in zip(chunk, texts)])
        for r, t, s in zip(chunk, texts, scores):
            results.append({"id": r["id"], "agents": r["agents"], "completion": t, **{k2: s[k2] for k2 in ("reward", "outcome")}})
    n = len(results)
    succ = sum(1 for r in results if r["outcome"] == "success")
    inval = sum(1 for r in results if r["outcome"] == "invalid_plan")
    by_agents = {}
    for r in results:
        a = by_agents.setdefault(str(r["agents"]), [0, 0])
        a[0] += r["outcome"] == "success"
        a[1] += 1
    return {
        "instances": n,
        "success": succ / max(1, n),
        "invalid_plan": inval / max(1, n),
        "reward": sum(r["reward"] for r in results) / max(1, n),
        "success_by_agents": {k: v[0] / v[1] for k, v in sorted(by_agents.items())},
        "episodes": results,
    }
