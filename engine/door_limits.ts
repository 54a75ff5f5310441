/**
 * The limits of what an experiment file may ask for
 * (`@envsmith/engine/limits`): their defaults, their table (what `--limit`
 * takes and documents), and the parser of `--limit NAME=N`.
 *
 * @module
 */
export { DEFAULT_LIMITS, LIMITS, parseLimits } from "./limits.ts";
