"""Micro Llama models and checkpoints (Hugging Face directories)."""

import json
import os

from .common import UserError

SUPPORTED = ("llama", "qwen2", "qwen3")


def check_checkpoint(path: str) -> dict:
    """The config of a checkpoint directory; a clear error when it is not one."""
    cfg_path = os.path.join(path, "config.json")
    if not os.path.isdir(path):
        raise UserError(f"{path}: not a directory; give a Hugging Face checkpoint directory (config.json, *.safetensors, tokenizer)")
    if not os.path.isfile(cfg_path):
        raise UserError(f"{path}: no config.json, so not a Hugging Face checkpoint; give the directory save_pretrained wrote")
    with open(cfg_path, encoding="utf-8") as f:
        cfg = json.load(f)
    arch = cfg.get("model_type")
    if arch not in SUPPORTED:
        raise UserError(f"{cfg_path}: model_type {arch!r} is not supported; supported: {', '.join(SUPPORTED)}")
    if not any(n.endswith(".safetensors") for n in os.listdir(path)):
        raise UserError(f"{path}: no *.safetensors weights; save the checkpoint with safe_serialization=True")
    if not os.path.isfile(os.path.join(path, "tokenizer.json")):
        raise UserError(f"{path}: no tokenizer.json; save the tokenizer beside the weights")
    with open(os.path.join(path, "tokenizer_config.json"), encoding="utf-8") as f:
        tcfg = json.load(f)
    if not tcfg.get("chat_template") and not os.path.isfile(os.path.join(path, "chat_template.jinja")):
        raise UserError(f"{path}/tokenizer_config.json: no chat_template; the LM policy is prompted as a chat, add a template (e.g. ChatML)")
    return cfg


def init_micro(tokenizer, out_dir: str, seed: int, hidden: int, layers: int, heads: int, ffn: int, context: int):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=hidden,
        intermediate_size=ffn,
        num_hidden_layers=layers,
        num_attention_heads=heads,
        num_key_value_heads=heads,
        max_position_embeddings=context,
        rms_norm_eps=1e-6,
        rope_theta=10000.0,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model = LlamaForCausalLM(cfg)
    model.save_pretrained(out_dir, safe_serialization=True)
    tokenizer.save_pretrained(out_dir)
    return model


def load_model(path: str, precision: str = "f32"):
    """A checkpoint's model in `precision` (`f32`, or `bf16` weights and
    activations), whatever precision it was saved in."""
    from transformers import AutoModelForCausalLM

    check_checkpoint(path)
    import torch

    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    return AutoModelForCausalLM.from_pretrained(path, dtype=dtype)
