/**
 * Where this project keeps its experiments and its shipped results: the
 * project's layout, known to `cli.ts` and the report command, never to the
 * engine (which is handed these paths).
 *
 * @module
 */

/** The folder of the shipped experiment files (`./envsmith tables` and `report` list it). */
export const EXPERIMENTS_DIR = "experiments";

/** The results bundle shipped with the project (`./envsmith tables` and `./envsmith report` import it). */
export const SHIPPED_BUNDLE = "results/tables.esb.gz";
