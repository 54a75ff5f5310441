/**
 * Where this project keeps its experiments and its shipped results: the
 * project's layout, known to `cli.ts` and the report command, never to the
 * engine (which is handed these paths).
 *
 * @module
 */

/** The folder of the shipped experiment files (`deno task tables` and `report` list it). */
export const EXPERIMENTS_DIR = "experiments";

/** The results bundle shipped with the project (`deno task tables` and `deno task report` import it). */
export const SHIPPED_BUNDLE = "results/tables.esb.gz";
