/**
 * The HTML report of envsmith: one self-contained page per invocation
 * (result tables, learning curves, configuration trajectories, failure
 * cases, the experiment's graph), built from the cache alone.
 *
 * This is the door other rooms use: the command line (`cli/mod.ts`) wires
 * {@linkcode reportCommand} as `./envsmith report`. No node kind, engine file
 * or library folder imports `report/` (`architecture_test.ts` checks it), so
 * editing the report never moves a cache key.
 *
 * @module
 */
export { reportCommand } from "./command.ts";
