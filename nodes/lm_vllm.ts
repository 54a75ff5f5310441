/**
 * The vLLM sampler of `train.lm` (`lm/envsmith_lm/vllm_sampler.py`), in the
 * code digest of the nodes that give `rl.sampler: vllm` only (see
 * `lm_options.ts`).
 *
 * @module
 */

/** The Python file of the option. */
export const LM_VLLM_FILES: readonly URL[] = [
  new URL("../lm/envsmith_lm/vllm_sampler.py", import.meta.url),
];
