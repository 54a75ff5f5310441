"""A micro checkpoint, its GGUF export and torch's reference numbers, for
the torch-vs-node-llama-cpp parity test (`lm/gguf_parity_test.ts`).

  python -m envsmith_lm.parity_fixture PROMPTS.jsonl OUT_DIR [ARCH ...]

For each ARCH (llama, qwen2, qwen3; default all three) writes
OUT_DIR/ARCH/ckpt (safetensors), OUT_DIR/ARCH/model.gguf and OUT_DIR/ARCH/expected.json:
per lm-data row, the chat-rendered prompt text, its token ids (Hugging Face
tokenizer) and torch's next-token probabilities after the prompt. For qwen3
(the GPU recipe's architecture) also the exports in the other precisions,
model-f16.gguf and model-q8_0.gguf, and model-bf16.gguf: the f32 export of
the checkpoint saved in bfloat16 (as `precision: bf16` saves it).
"""

import copy
import json
import os
import sys

import torch

from .common import read_jsonl, setup_torch
from .generate import prompt_ids
from .gguf_export import export_gguf
from .tokenizer import train_tokenizer


def main():
    rows_path, out_dir, *archs = sys.argv[1:]
    rows = read_jsonl(rows_path)
    for arch in archs or ["llama", "qwen2", "qwen3"]:
        fixture(rows, os.path.join(out_dir, arch), arch)


def fixture(rows, out, arch):
    setup_torch(1, 7)
    os.makedirs(out, exist_ok=True)
    ck = os.path.join(out, "ckpt")
    tok = train_tokenizer([r["system"] + "\n" + r["prompt"] + "\n" + (r["plan"] or "") for r in rows], 320, ck)
    common = dict(vocab_size=len(tok), hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                  num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=512, rms_norm_eps=1e-6,
                  rope_theta=10000.0, tie_word_embeddings=True, initializer_range=0.25,
                  bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id)
    if arch == "llama":
        from transformers import LlamaConfig as C, LlamaForCausalLM as M
    elif arch == "qwen2":
        from transformers import Qwen2Config as C, Qwen2ForCausalLM as M
    else:
        from transformers import Qwen3Config as C, Qwen3ForCausalLM as M
        common["head_dim"] = 32
    model = M(C(**common)).eval()
    with torch.no_grad():  # non-trivial norms and biases, so a mis-mapped tensor shows
        for name, p in model.named_parameters():
            if "norm" in name or name.endswith(".bias"):
                p.copy_(1.0 + 0.3 * torch.randn_like(p) if "norm" in name else 0.3 * torch.randn_like(p))
    model.save_pretrained(ck, safe_serialization=True)
    tok.save_pretrained(ck)
    export_gguf(ck, os.path.join(out, "model.gguf"), "f32")
    if arch == "qwen3":
        export_gguf(ck, os.path.join(out, "model-f16.gguf"), "f16")
        export_gguf(ck, os.path.join(out, "model-q8_0.gguf"), "q8_0")
        ck16 = os.path.join(out, "ckpt-bf16")
        copy.deepcopy(model).to(torch.bfloat16).save_pretrained(ck16, safe_serialization=True)
        tok.save_pretrained(ck16)
        export_gguf(ck16, os.path.join(out, "model-bf16.gguf"), "f32")
    cases = []
    for r in rows:
        ids = prompt_ids(tok, r)
        text = tok.apply_chat_template([{"role": "system", "content": r["system"]}, {"role": "user", "content": r["prompt"]}],
                                       add_generation_prompt=True, tokenize=False)
        with torch.no_grad():
            logits = model(input_ids=torch.tensor([ids])).logits[0, -1]
        probs = torch.softmax(logits.double(), -1)
        cases.append({"id": r["id"], "text": text, "ids": ids, "probs": [round(float(x), 8) for x in probs]})
    with open(os.path.join(out, "expected.json"), "w") as f:
        json.dump({"arch": arch, "vocab": len(tok), "cases": cases}, f)


if __name__ == "__main__":
    main()
