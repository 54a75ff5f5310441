/**
 * The engineers of the per-size form (what `engineer:` in a
 * `redesign.sizes` node names): `fixed`, `random`, `rules`, `band`, `llm`.
 * The node kind imports none of them (`nodes/mod.ts` builds it over this
 * list), so a redesign's key covers the chosen engineer's code only.
 *
 * @module
 */
import type { SizeEngineerKind } from "../engineer/size_engineer.ts";
import { sizeEngineer as fixed } from "../engineer/size_fixed.ts";
import { sizeEngineer as random } from "../engineer/size_random.ts";
import { sizeEngineer as rules } from "../engineer/size_rules.ts";
import { sizeEngineer as band } from "../engineer/size_band.ts";
import { sizeEngineer as llm } from "../engineer/size_llm.ts";

/** The built-in engineers of the per-size form. */
export const sizeEngineers: readonly SizeEngineerKind[] = [
  fixed,
  random,
  rules,
  band,
  llm,
] as readonly SizeEngineerKind[];
