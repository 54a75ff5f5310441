/**
 * The `fixed` engineer of the per-size form: keeps the form (the
 * fixed-environment baseline). It reads nothing.
 *
 * @module
 */
import * as v from "valibot";
import type { SizeEngineerKind } from "./size_engineer.ts";

/** The `fixed` form engineer kind (no parameters). */
export const sizeEngineer: SizeEngineerKind<Record<string, never>> = {
  name: "fixed",
  description: "keeps the per-size form unchanged; reads nothing",
  params: v.strictObject({}),
  module: import.meta.url,
  create: () => ({
    name: "fixed",
    propose: (input) =>
      Promise.resolve({
        form: input.form,
        rationale: "fixed engineer: the form is kept unchanged.",
        events: [],
        reads: [],
      }),
  }),
};
