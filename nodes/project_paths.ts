/**
 * Where this project keeps its experiments and its shipped results: the
 * project's layout, known to `cli.ts` and the report command, never to the
 * engine (which is handed these paths).
 *
 * @module
 */

/** The folder of the shipped experiment files (`./envsmith tables` and `report` list it). */
export const EXPERIMENTS_DIR = "experiments";

/** What an experiment file's name ends with: the did-you-mean of a missing one offers only these. */
export const EXPERIMENT_EXTENSIONS: readonly string[] = [".yaml", ".yml"];

/** The results bundle shipped with the project (`./envsmith tables` and `./envsmith report` import it). */
export const SHIPPED_BUNDLE = "results/tables.esb.gz";

/**
 * The second shipped bundle: the language-model experiments and the per-size
 * form (`paper-lm`, `trainee-to-trainer`, `sizes`), kept apart so that a
 * re-export of these small experiments does not copy the large bundle into
 * the history again. `./envsmith tables` and `report` import both.
 */
export const SHIPPED_EXTRA_BUNDLE = "results/extra.esb.gz";

/** Every shipped bundle, in the order `tables` and `report` import them. */
export const SHIPPED_BUNDLES: readonly string[] = [
  SHIPPED_BUNDLE,
  SHIPPED_EXTRA_BUNDLE,
];
