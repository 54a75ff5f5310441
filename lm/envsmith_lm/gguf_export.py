"""GGUF export of a Hugging Face checkpoint for node-llama-cpp (llama.cpp).

Supported: `llama`, `qwen2` (q/k/v biases) and `qwen3` (q/k norms); any
other `model_type` is a UserError. Tensor names follow llama.cpp; for
`llama` the q and k projections are permuted from Hugging Face's rotary
layout (rotate_half) to llama.cpp's, as llama.cpp's own converter does
(qwen2/qwen3 use the NEOX rotary layout and are written unpermuted).

Precision (`--type`): `f32` (default), `f16`, or `q8_0` (8-bit blocks of 32
weights, llama.cpp's Q8_0, quantized by the gguf package; a matrix whose rows
are not a multiple of 32 is written f16). Norms and biases stay f32. The
checkpoint may be saved in f32 or bf16.

Tokenizer: byte-level BPE (`tokenizer.ggml.model = gpt2`) with the
vocabulary in id order and the merges in rank order. The pre-tokenizer is
`gpt-2` for a plain ByteLevel pre-tokenizer (envsmith's micro tokenizers) and
`qwen2` for Qwen's own; anything else is refused rather than written with a
split pattern that would give other token ids.
"""

import json
import os

import numpy as np

from .common import UserError
from .model import check_checkpoint


def _permute(w, n_head):
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def _tokenizer(path, cfg):
    with open(os.path.join(path, "tokenizer.json"), encoding="utf-8") as f:
        tj = json.load(f)
    with open(os.path.join(path, "tokenizer_config.json"), encoding="utf-8") as f:
        tc = json.load(f)
    model = tj.get("model", {})
    if model.get("type") != "BPE":
        raise UserError(f"{path}/tokenizer.json: tokenizer type {model.get('type')!r}; only byte-level BPE is exported")
    pre = tj.get("pre_tokenizer") or {}
    if pre.get("type") == "ByteLevel" and pre.get("use_regex", True):
        pre_name = "gpt-2"
    elif cfg["model_type"] in ("qwen2", "qwen3"):
        pre_name = "qwen2"
    else:
        raise UserError(f"{path}/tokenizer.json: pre-tokenizer {pre.get('type')!r} is not one this exporter knows; use llama.cpp's convert_hf_to_gguf.py")
    vocab = model["vocab"]
    added = {t["content"]: t for t in tj.get("added_tokens", [])}
    size = max(max(vocab.values()), max((t["id"] for t in added.values()), default=-1)) + 1
    tokens = [f"[PAD{i}]" for i in range(size)]
    types = [5] * size  # unused
    for t, i in vocab.items():
        tokens[i] = t
        types[i] = 1
    for t, info in added.items():
        tokens[info["id"]] = t
        types[info["id"]] = 3 if info.get("special") else 4
    merges = [m if isinstance(m, str) else " ".join(m) for m in model.get("merges", [])]
    template = tc.get("chat_template")
    if template is None and os.path.isfile(os.path.join(path, "chat_template.jinja")):
        template = open(os.path.join(path, "chat_template.jinja"), encoding="utf-8").read()

    def tid(name):
        v = tc.get(name)
        if isinstance(v, dict):
            v = v.get("content")
        return None if v is None else tokens.index(v)

    return tokens, types, merges, pre_name, template, tid("bos_token"), tid("eos_token"), tid("pad_token")


_FILE_TYPES = {"f32": 0, "f16": 1, "q8_0": 7}


def _load_tensors(path):
    """Every tensor of the checkpoint as float32 numpy (bf16 included, which
    numpy cannot hold: read through torch)."""
    import torch
    from safetensors import safe_open

    tensors = {}
    for name in sorted(os.listdir(path)):
        if name.endswith(".safetensors"):
            with safe_open(os.path.join(path, name), framework="pt") as f:
                for k in f.keys():
                    tensors[k] = f.get_tensor(k).to(torch.float32).numpy()
    return tensors


def export_gguf(path: str, out: str, dtype: str = "f32"):
    import gguf

    if dtype not in _FILE_TYPES:
        raise UserError(f"GGUF type {dtype!r}: use one of {', '.join(_FILE_TYPES)}")
    cfg = check_checkpoint(path)
    arch = cfg["model_type"]
    tensors = _load_tensors(path)
    n_head = cfg["num_attention_heads"]
    n_kv = cfg.get("num_key_value_heads") or n_head
    hidden = cfg["hidden_size"]
    head_dim = cfg.get("head_dim") or hidden // n_head
    w = gguf.GGUFWriter(out, arch)
    w.add_name(os.path.basename(os.path.abspath(path)))
    w.add_context_length(cfg.get("max_position_embeddings", 2048))
    w.add_embedding_length(hidden)
    w.add_block_count(cfg["num_hidden_layers"])
    w.add_feed_forward_length(cfg["intermediate_size"])
    w.add_head_count(n_head)
    w.add_head_count_kv(n_kv)
    w.add_rope_dimension_count(head_dim)
    if arch == "qwen3" or head_dim != hidden // n_head:
        w.add_key_length(head_dim)
        w.add_value_length(head_dim)
    rope = cfg.get("rope_theta") or (cfg.get("rope_parameters") or {}).get("rope_theta") or 10000.0
    w.add_rope_freq_base(float(rope))
    w.add_layer_norm_rms_eps(cfg.get("rms_norm_eps", 1e-6))
    w.add_file_type(_FILE_TYPES[dtype])
    tokens, types, merges, pre, template, bos, eos, pad = _tokenizer(path, cfg)
    w.add_vocab_size(len(tokens))
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre(pre)
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    if bos is not None:
        w.add_bos_token_id(bos)
    if eos is not None:
        w.add_eos_token_id(eos)
    if pad is not None:
        w.add_pad_token_id(pad)
    w.add_add_bos_token(False)
    if template:
        w.add_chat_template(template)
    np_type = np.float32 if dtype == "f32" else np.float16

    def put(name, arr, keep_f32=False):
        if dtype == "q8_0" and arr.ndim == 2 and not keep_f32 and arr.shape[-1] % 32 == 0:
            from gguf.quants import quantize

            q = quantize(np.ascontiguousarray(arr, dtype=np.float32), gguf.GGMLQuantizationType.Q8_0)
            w.add_tensor(name, q, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
            return
        arr = np.ascontiguousarray(arr.astype(np.float32 if keep_f32 or arr.ndim == 1 else np_type))
        w.add_tensor(name, arr)

    put("token_embd.weight", tensors["model.embed_tokens.weight"])
    for i in range(cfg["num_hidden_layers"]):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        q = tensors[p + "self_attn.q_proj.weight"]
        k = tensors[p + "self_attn.k_proj.weight"]
        if arch == "llama":
            q, k = _permute(q, n_head), _permute(k, n_kv)
        put(b + "attn_norm.weight", tensors[p + "input_layernorm.weight"])
        put(b + "attn_q.weight", q)
        put(b + "attn_k.weight", k)
        put(b + "attn_v.weight", tensors[p + "self_attn.v_proj.weight"])
        put(b + "attn_output.weight", tensors[p + "self_attn.o_proj.weight"])
        for proj in ("q", "k", "v"):
            bias = tensors.get(p + f"self_attn.{proj}_proj.bias")
            if bias is not None:
                if arch == "llama":
                    raise UserError(f"{path}: a llama checkpoint with attention biases is not supported")
                put(b + f"attn_{proj}.bias", bias)
        if arch == "qwen3":
            put(b + "attn_q_norm.weight", tensors[p + "self_attn.q_norm.weight"])
            put(b + "attn_k_norm.weight", tensors[p + "self_attn.k_norm.weight"])
        put(b + "ffn_norm.weight", tensors[p + "post_attention_layernorm.weight"])
        put(b + "ffn_gate.weight", tensors[p + "mlp.gate_proj.weight"])
        put(b + "ffn_up.weight", tensors[p + "mlp.up_proj.weight"])
        put(b + "ffn_down.weight", tensors[p + "mlp.down_proj.weight"])
    put("output_norm.weight", tensors["model.norm.weight"])
    if not cfg.get("tie_word_embeddings", False) and "lm_head.weight" in tensors:
        put("output.weight", tensors["lm_head.weight"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
