"""Command line of envsmith's LM trainer.

  python -m envsmith_lm micro --data DIR --out DIR --seed N [...]
      micro model from scratch: tokenizer, SFT on solver plans, held-out
      success, GRPO stages rewarded by `cli reward`, held-out success again.
  python -m envsmith_lm init --rows ROWS --out DIR [...]     (the lm.init node)
  python -m envsmith_lm grpo --base DIR --rows ROWS --instances FILE --out DIR [...]
                                                           (the train.lm node)
  python -m envsmith_lm export-gguf CHECKPOINT OUT.gguf

A user mistake prints one line and exits 2.
"""

import argparse
import json
import os
import shlex
import sys

from .common import UserError, log, read_jsonl, setup_torch, write_json
from .stage import add_commands


def _micro(a):
    setup_torch(a.threads, a.seed)
    from .evaluate import evaluate
    from .grpo import grpo
    from .model import init_micro, load_model
    from .reward import RewardProcess
    from .sft import sft
    from .tokenizer import load_tokenizer, train_tokenizer

    d = a.data
    train = read_jsonl(os.path.join(d, "sft.jsonl"))
    rl = read_jsonl(os.path.join(d, "rl.jsonl"))
    held_file = a.heldout_file or os.path.join(d, "heldout.jsonl")
    held = read_jsonl(held_file)
    seen = {r["prompt"] for r in train} | {r["prompt"] for r in rl}
    held = [r for r in held if r["prompt"] not in seen][: a.heldout]
    os.makedirs(a.out, exist_ok=True)
    results_path = os.path.join(a.out, "results.json")
    results = json.load(open(results_path)) if os.path.exists(results_path) else {"seed": a.seed}
    if results.get("heldout_file", held_file) != held_file:
        raise UserError(f"{results_path}: evaluated on {results['heldout_file']}, not {held_file}; use another --out")
    results.update(heldout_file=held_file, heldout=len(held))
    reward = RewardProcess(shlex.split(a.reward_cmd), os.path.join(d, "instances.jsonl"))

    def done(path):
        return os.path.exists(os.path.join(path, "done"))

    def evaluated(name, path, model=None, tok=None):
        # a checkpoint is trained once; its held-out evaluation is made when missing
        if name not in results:
            if model is None:
                model, tok = load_model(path), load_tokenizer(path)
            results[name] = _summary(evaluate(model, tok, held, reward))
            write_json(results_path, results)
        log(f"{name}: held-out success {results[name]['success']:.3f} ({len(held)} instances)")

    sft_dir = os.path.join(a.out, "sft")
    try:
        if not done(sft_dir):
            tok = train_tokenizer([r["system"] + "\n" + r["prompt"] + "\n" + r["plan"] for r in train[:3000]], a.vocab, sft_dir)
            model = init_micro(tok, os.path.join(a.out, "base"), a.seed, a.hidden, a.layers, a.heads, a.ffn, 512)
            results["sft_curve"] = sft(model, tok, train, a.sft_steps, a.batch, a.lr, a.seed)
            model.save_pretrained(sft_dir, safe_serialization=True)
            results.pop("sft", None)
            evaluated("sft", sft_dir, model, tok)
            open(os.path.join(sft_dir, "done"), "w").close()
        else:
            evaluated("sft", sft_dir)
        prev = sft_dir
        for k in range(a.stages):
            stage_dir = os.path.join(a.out, f"rl-{k}")
            if not done(stage_dir):
                tok = load_tokenizer(prev)
                model = load_model(prev)
                setup_torch(a.threads, a.seed * 1000 + k)
                curve = grpo(model, tok, rl, reward, a.grpo_steps, a.prompts, a.group, a.rl_lr, a.seed * 1000 + k, beta=a.beta)
                model.save_pretrained(stage_dir, safe_serialization=True)
                tok.save_pretrained(stage_dir)
                curves = results.setdefault("grpo_curve", [])
                del curves[k:]
                curves.append(curve)
                results.pop(f"rl-{k}", None)
                evaluated(f"rl-{k}", stage_dir, model, tok)
                open(os.path.join(stage_dir, "done"), "w").close()
            else:
                evaluated(f"rl-{k}", stage_dir)
            prev = stage_dir
    finally:
        reward.close()
    print(json.dumps({k: {k2: v2 for k2, v2 in v.items() if k2 != "outcomes"} if isinstance(v, dict) else v
                      for k, v in results.items() if not k.endswith("curve")}))


def _summary(ev):
    """An evaluation without its episodes, with each held-out instance's
    outcome (`outcomes`: id -> outcome) for the paired interval."""
    out = {k: v for k, v in ev.items() if k != "episodes"}
    out["outcomes"] = {e["id"]: e["outcome"] for e in ev["episodes"]}
    return out


def _export(a):
    from .gguf_export import export_gguf

    export_gguf(a.checkpoint, a.out, a.type)
    log(f"wrote {a.out}")


def main(argv=None):
    p = argparse.ArgumentParser(prog="envsmith_lm")
    sub = p.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("micro")
    m.add_argument("--data", required=True, help="folder with sft.jsonl, rl.jsonl, heldout.jsonl (lm-data) and instances.jsonl")
    m.add_argument("--out", required=True)
    m.add_argument("--seed", type=int, default=1)
    m.add_argument("--threads", type=int, default=2)
    m.add_argument("--reward-cmd", default="deno run -A ../cli.ts")
    m.add_argument("--vocab", type=int, default=384)
    m.add_argument("--hidden", type=int, default=64)
    m.add_argument("--layers", type=int, default=2)
    m.add_argument("--heads", type=int, default=2)
    m.add_argument("--ffn", type=int, default=192)
    m.add_argument("--sft-steps", type=int, default=2000)
    m.add_argument("--batch", type=int, default=32)
    m.add_argument("--lr", type=float, default=3e-3)
    m.add_argument("--stages", type=int, default=2)
    m.add_argument("--grpo-steps", type=int, default=60)
    m.add_argument("--prompts", type=int, default=16)
    m.add_argument("--group", type=int, default=8)
    m.add_argument("--rl-lr", type=float, default=2e-4)
    m.add_argument("--beta", type=float, default=0.02)
    m.add_argument("--heldout", type=int, default=400, help="at most this many held-out instances")
    m.add_argument("--heldout-file", help="held-out lm-data rows (default: DATA/heldout.jsonl)")
    m.set_defaults(fn=_micro)
    add_commands(sub)
    e = sub.add_parser("export-gguf")
    e.add_argument("checkpoint")
    e.add_argument("out")
    e.add_argument("--type", choices=["f32", "f16", "q8_0"], default="f32")
    e.set_defaults(fn=_export)
    a = p.parse_args(argv)
    try:
        a.fn(a)
    except UserError as err:
        print(f"error: {err}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
