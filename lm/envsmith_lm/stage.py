"""One engine node's worth of training (the `lm.init` and `train.lm` node
kinds): each reads its data from files, writes one checkpoint directory
(safetensors, tokenizer, chat template) and `curve.json`, and exits.

  init: byte-level BPE tokenizer on the SFT texts, a micro Llama, SFT on the
        solver plans.
  grpo: load a checkpoint, GRPO on the stage's instances rewarded by the
        reward process, save. Options for large models: `--precision bf16`
        (weights and activations in bfloat16, the checkpoint saved so),
        `--lora-rank R` (LoRA adapters trained instead of every weight and
        merged into the saved checkpoint; `lora.py`), `--micro-batch N`,
        `--checkpointing` (gradient checkpointing), `--sampler vllm`
        (`vllm_sampler.py`).
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
    model = load_model(a.base, a.precision).to(dev)
    options = {}
    if a.lora_rank:
        from .lora import add_adapters

        model = add_adapters(model, a.lora_rank, a.lora_alpha, a.lora_dropout, a.lora_targets.split(","))
        options["adapters"] = True
    if a.checkpointing:
        model.gradient_checkpointing_enable()
        if a.lora_rank:
            model.enable_input_require_grads()
    if a.micro_batch:
        options["micro_batch"] = a.micro_batch
    if a.sampler == "vllm":
        from .vllm_sampler import VllmSampler

        options["sampler"] = VllmSampler(a.base, tok, a.precision, a.seed)
    reward = RewardProcess(shlex.split(a.reward_cmd), a.instances)
    try:
        curve = grpo(model, tok, rows, reward, a.steps, a.prompts, a.group, a.lr, a.seed,
                     temperature=a.temperature, beta=a.beta, max_new=a.max_new, **options)
    finally:
        reward.close()
        if "sampler" in options:
            options["sampler"].close()
    if a.lora_rank:
        from .lora import merge_adapters

        model = merge_adapters(model)
    if a.checkpointing:
        model.gradient_checkpointing_disable()
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
    g.add_argument("--precision", choices=["f32", "bf16"], default="f32")
    g.add_argument("--lora-rank", type=int, default=0, help="LoRA rank (0: train every weight)")
    g.add_argument("--lora-alpha", type=float, default=None, help="LoRA alpha (default 2 x rank)")
    g.add_argument("--lora-dropout", type=float, default=0.0)
    g.add_argument("--lora-targets", default="q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj")
    g.add_argument("--micro-batch", type=int, default=0, help="sequences per backward pass (0: all at once)")
    g.add_argument("--checkpointing", action="store_true", help="gradient checkpointing")
    g.add_argument("--sampler", choices=["hf", "vllm"], default="hf")
    g.set_defaults(fn=run_grpo)
