/**
 * The LoRA code of `train.lm` (`lm/envsmith_lm/lora.py`), in the code
 * digest of the nodes that give `lora` only (see `lm_options.ts`).
 *
 * @module
 */

/** The Python file of the option. */
export const LM_LORA_FILES: readonly URL[] = [
  new URL("../lm/envsmith_lm/lora.py", import.meta.url),
];
