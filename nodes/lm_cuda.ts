/**
 * The environment of `device: cuda` LM nodes: the pinned
 * `lm/requirements-cuda.txt` (torch's CUDA build and its libraries), in the
 * code digest of those nodes only (see `lm_options.ts`), as
 * `lm/requirements.txt` is in every LM node's.
 *
 * @module
 */

/** The requirements file of `device: cuda`. */
export const LM_CUDA_FILES: readonly URL[] = [
  new URL("../lm/requirements-cuda.txt", import.meta.url),
];
