"""GRPO's samples drawn by vLLM (`rl.sampler: vllm`): on a GPU where vLLM is
installed in the trainer's CUDA environment, the completions of each step are
sampled by a vLLM engine in the trainer's process, holding a copy of the
policy's current weights (loaded into it before every step), instead of by
`generate.py`'s loop. Training, the reward and the KL term are unchanged.

Not run where envsmith is developed (no GPU, no vLLM on its package index):
written against vLLM's offline `LLM` API (engine in-process, so its model can
take new weights), it refuses in one line when the installed release lacks
what it uses. vLLM's sampler draws other samples than `generate.py`'s for the
same seed, so the choice is a parameter (it enters the node's key).
"""

import os

from .common import END_OF_TURN, UserError

# the share of the GPU's memory vLLM's engine may hold (weights, KV cache);
# the training model and its optimiser use the rest
GPU_MEMORY_SHARE = 0.3


def _weights(model):
    """(name, tensor) of the policy's current weights as a plain checkpoint
    names them: a LoRA model's adapters merged in for the copy."""
    base = model
    merged = False
    if hasattr(model, "merge_adapter") and hasattr(model, "get_base_model"):
        model.merge_adapter()
        merged = True
        base = model.get_base_model()
    out = []
    for name, p in base.state_dict().items():
        if "lora_" in name:
            continue
        out.append((name.replace(".base_layer", ""), p.detach()))
    return out, (model.unmerge_adapter if merged else (lambda: None))


def _model_of(llm):
    """The engine's torch model (in-process engine), or None."""
    ex = getattr(llm.llm_engine, "model_executor", None)
    worker = getattr(ex, "driver_worker", None)
    for path in (("model_runner", "model"), ("worker", "model_runner", "model")):
        obj = worker
        for attr in path:
            obj = getattr(obj, attr, None)
        if obj is not None and hasattr(obj, "load_weights"):
            return obj
    return None


class VllmSampler:
    """Completions of token-id prompts from a vLLM engine started on the
    stage's base checkpoint and updated with the policy's weights."""

    def __init__(self, base: str, tokenizer, precision: str, seed: int):
        # an engine in this process, so its model can take new weights
        os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
        try:
            import vllm
            from vllm import LLM, SamplingParams
        except ImportError as e:
            raise UserError(f"rl.sampler: vllm, but vLLM cannot be imported in this environment ({e}); "
                            "install a vLLM release built for its torch, or use sampler: hf") from e
        self._sampling = SamplingParams
        self._llm = LLM(model=base, dtype="bfloat16" if precision == "bf16" else "float32", seed=seed,
                        gpu_memory_utilization=GPU_MEMORY_SHARE, enable_prefix_caching=True)
        self._model = _model_of(self._llm)
        if self._model is None:
            raise UserError(f"rl.sampler: vllm, but vLLM {vllm.__version__} does not expose its model in-process "
                            "(llm_engine.model_executor.driver_worker...model.load_weights); use sampler: hf")
        self._eos = tokenizer.convert_tokens_to_ids(END_OF_TURN)

    def sample(self, model, prompts: list, max_new: int, temperature: float, per_prompt: int, seed: int) -> list:
        """`per_prompt` completions of each prompt (ids ending at the
        end-of-turn token, included, or at max_new tokens), in prompt order,
        drawn by the policy's current weights."""
        weights, restore = _weights(model)
        try:
            self._model.load_weights(weights)
        finally:
            restore()
        if hasattr(self._llm, "reset_prefix_cache"):
            self._llm.reset_prefix_cache()
        sp = self._sampling(n=per_prompt, temperature=temperature, max_tokens=max_new, seed=seed,
                            stop_token_ids=[self._eos])
        outs = self._llm.generate([{"prompt_token_ids": list(p)} for p in prompts], sp, use_tqdm=False)
        comps = []
        for o in outs:
            for c in o.outputs:
                ids = list(c.token_ids)
                if c.finish_reason == "stop" and (not ids or ids[-1] != self._eos):
                    ids.append(self._eos)
                comps.append(ids)
        return comps

    def close(self):
        self._llm = None
        self._model = None
