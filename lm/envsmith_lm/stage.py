"""One engine node's worth of training (the `lm.init` and `train.lm` node
kinds): each reads its data from files, writes one checkpoint directory
(safetensors, tokenizer, chat template) and `curve.json`, and exits.

  init: byte-level BPE tokenizer on the SFT texts, a micro Llama, SFT on the
        solver plans.
  grpo: load a checkpoint, GRPO on the stage's instances rewarded by the
        reward process, save.
"""

import os

from .common import UserError, log, read_jsonl, setup_torch, write_json


def device_of(name: str):
    """The torch device; `cuda` without a usable GPU is an error, never a
    silent fall back to the CPU."""
    import torch

    if name == "cuda":
        if torch.version.cuda is None:
            raise UserError("device: cuda, but the LM environment's torch is a CPU build; install a CUDA build of torch (docs/lm.md, GPU recipe) or use device: cpu")
        if not torch.cuda.is_available():
            raise UserError("device: cuda, but torch sees no GPU on this machine; run the node where a GPU is (Slurm: gres) or use device: cpu")
    return torch.device(name)


def run_init(a):
    setup_torch(a.threads, a.seed)
    from .model import init_micro
    from .sft import sft
    from .tokenizer import train_tokenizer

    rows = read_jsonl(a.rows)
    usable = [r for r in rows if r.get("plan") is not None]
    if not usable:
        raise UserError(f"{a.rows}: no instance has a solver plan to fine-tune on; generate easier instances")
    dev = device_of(a.device)
    os.makedirs(a.out, exist_ok=True)
    tok = train_tokenizer([r["system"] + "\n" + r["prompt"] + "\n" + r["plan"] for r in usable[:3000]], a.vocab, a.out)
    base = os.path.join(a.out, ".init")
    model = init_micro(tok, base, a.seed, a.hidden, a.layers, a.heads, a.ffn, a.context).to(dev)
    curve = sft(model, tok, usable, a.steps, a.batch, a.lr, a.seed)
    model.to("cpu").save_pretrained(a.out, safe_serialization=True)
    tok.save_pretrained(a.out)
    for name in os.listdir(base):
        os.remove(os.path.join(base, name))
    os.rmdir(base)
    write_json(os.path.join(a.out, "curve.json"), {"sft": curve, "examples": len(usable)})
    log(f"init: {len(usable)} solver plans, SFT loss {curve[0]['loss']:.3f} -> {curve[-1]['loss']:.3f}")


def run_grpo(a):
    import shlex

    setup_torch(a.threads, a.seed)
    from .grpo import grpo
    from .model import load_model
    from .reward import RewardProcess
    from .tokenizer import load_tokenizer

    dev = device_of(a.device)
    rows = read_jsonl(a.rows)
    if not rows:
        raise UserError(f"{a.rows}: no instances to train on")
    tok = load_tokenizer(a.base)
    model = load_model(a.base).to(dev)
    reward = RewardProcess(shlex.split(a.reward_cmd), a.instances)
    try:
        curve = grpo(model, tok, rows, reward, a.steps, a.prompts, a.group, a.lr, a.seed,
                     temperature=a.temperature, beta=a.beta, max_new=a.max_new)
    finally:
        reward.close()
    os.makedirs(a.out, exist_ok=True)
    model.to("cpu").save_pretrained(a.out, safe_serialization=True)
    tok.save_pretrained(a.out)
    write_json(os.path.join(a.out, "curve.json"), {"grpo": curve})


def add_commands(sub):
    i = sub.add_parser("init", help="tokenizer + micro Llama + SFT on solver plans (the lm.init node)")
    i.add_argument("--rows", required=True, help="lm-data rows (system, prompt, plan)")
    i.add_argument("--out", required=True)
    i.add_argument("--seed", type=int, default=1)
    i.add_argument("--threads", type=int, default=1)
    i.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    i.add_argument("--vocab", type=int, default=384)
    i.add_argument("--hidden", type=int, default=64)
    i.add_argument("--layers", type=int, default=2)
    i.add_argument("--heads", type=int, default=2)
    i.add_argument("--ffn", type=int, default=192)
    i.add_argument("--context", type=int, default=8192)
    i.add_argument("--steps", type=int, default=300)
    i.add_argument("--batch", type=int, default=32)
    i.add_argument("--lr", type=float, default=3e-3)
    i.set_defaults(fn=run_init)
    g = sub.add_parser("grpo", help="GRPO from a checkpoint on a stage's instances (the train.lm node)")
    g.add_argument("--base", required=True, help="checkpoint directory")
    g.add_argument("--rows", required=True, help="lm-data rows (id, system, prompt)")
    g.add_argument("--instances", required=True, help="the instances the reward process scores")
    g.add_argument("--out", required=True)
    g.add_argument("--reward-cmd", required=True)
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--threads", type=int, default=1)
    g.add_argument("--device", choices=["cpu", "cuda"], default="cpu")
    g.add_argument("--steps", type=int, required=True)
    g.add_argument("--prompts", type=int, required=True)
    g.add_argument("--group", type=int, required=True)
    g.add_argument("--lr", type=float, default=3e-4)
    g.add_argument("--beta", type=float, default=0.02)
    g.add_argument("--temperature", type=float, default=1.0)
    g.add_argument("--max-new", type=int, default=48)
    g.set_defaults(fn=run_grpo)
