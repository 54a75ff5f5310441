"""LoRA for `train.lm` (peft): low-rank adapters on the chosen linear layers
are trained instead of every weight, and merged into the weights before the
checkpoint is saved, so the stored checkpoint (and its GGUF export) is a plain
model the next stage, llama.cpp and vLLM load as any other.

Each stage starts from a merged checkpoint with fresh adapters (B = 0), so the
model with its adapters disabled is exactly the stage's starting checkpoint:
GRPO's KL reference, without a second copy of the weights."""

from .common import UserError


def add_adapters(model, rank: int, alpha, dropout: float, targets: list):
    """The model wrapped with LoRA adapters (rank, alpha, dropout) on the
    modules named `targets`; every other weight frozen. Adapters are kept in
    float32 whatever the model's precision."""
    from peft import LoraConfig, get_peft_model

    names = {n.rsplit(".", 1)[-1] for n, _ in model.named_modules()}
    missing = [t for t in targets if t not in names]
    if missing:
        raise UserError(f"lora.targets: the model has no module named {', '.join(missing)}; "
                        f"its linear layers include {', '.join(sorted(n for n in names if n.endswith('_proj')))}")
    cfg = LoraConfig(r=rank, lora_alpha=alpha if alpha is not None else 2 * rank, lora_dropout=dropout,
                     target_modules=list(targets), bias="none", task_type="CAUSAL_LM")
    return get_peft_model(model, cfg, autocast_adapter_dtype=True)


def merge_adapters(model):
    """The adapters merged into the weights (in the weights' precision); the
    plain model without peft's wrappers."""
    return model.merge_and_unload()


def trainable_share(model) -> tuple:
    """(trainable parameters, all parameters)."""
    trainable = sum(p.numel() for p in model.parameters() if p.requires_grad)
    total = sum(p.numel() for p in model.parameters())
    return trainable, total
