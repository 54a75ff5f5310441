/**
 * The `fixed` engineer: never changes the configuration (the fixed-environment
 * baseline). It reads nothing from the context.
 *
 * @module
 */
import type { Engineer, Proposal, ProposeInput } from "./engineer.ts";
import * as v from "valibot";
import type { EngineerKind } from "./engineer_kind.ts";

/**
 * The fixed engineer.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { fixedEngineer } from "./fixed.ts";
 * assert.equal(fixedEngineer().name, "fixed");
 * ```
 */
export function fixedEngineer(): Engineer {
  return {
    name: "fixed",
    propose(input: ProposeInput): Promise<Proposal> {
      return Promise.resolve({
        config: input.config,
        rationale: "fixed engineer: the configuration is kept unchanged.",
        events: [],
        reads: [],
      });
    },
  };
}

/** The `fixed` engineer kind (no parameters). */
export const engineer: EngineerKind<Record<string, never>> = {
  name: "fixed",
  description:
    "keeps the configuration unchanged (the fixed-environment baseline); reads nothing",
  params: v.strictObject({}),
  families: "any",
  module: import.meta.url,
  create: () => fixedEngineer(),
};
