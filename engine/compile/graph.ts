/**
 * The expanded graph's shapes: matrix axes and their values, and a node of
 * the static graph an experiment file compiles to. Apart from
 * `experiment.ts` (which builds them) so the compiler's steps can name them
 * without importing the compiler: `compile/` has no import cycle.
 *
 * @module
 */
import type { Resolvable } from "../refs.ts";
import type { Json, NodeKind } from "../types.ts";

/** One value of a matrix axis. */
export interface AxisValue {
  /** The label used in node ids and tables (`name` of an object value). */
  readonly label: string;
  /** The value `$matrix.AXIS` gives. */
  readonly value: Json;
  /** Environment variables without which variants using this value are skipped. */
  readonly requiresEnv: readonly string[];
}

/** A matrix axis. */
export interface Axis {
  /** Axis name. */
  readonly name: string;
  /** Its values in file order. */
  readonly values: readonly AxisValue[];
}

/**
 * A node of the expanded graph.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import { compileExperiment } from "./experiment.ts";
 * const one: NodeKind<{ x: number }> = {
 *   name: "one", description: "x back", params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url, run: (p) => Promise.resolve({ value: p.x }),
 * };
 * import type { GraphNode } from "./graph.ts";
 * const exp = compileExperiment("e.yaml", `experiment: e
 * seed: 1
 * nodes:
 *   a: { kind: one, with: { x: 1 } }
 *   b: { kind: one, with: { x: $a } }
 * `, { kinds: [one as NodeKind] });
 * const b: GraphNode = exp.nodes[exp.byId.get("b")!]!;
 * assert.equal(b.kind.name, "one");
 * assert.deepEqual(b.deps, [exp.byId.get("a")]);
 * assert.deepEqual(b.literal, { x: "$a" });
 * ```
 */
export interface GraphNode {
  /** Position in {@linkcode Experiment.nodes} (a topological order). */
  readonly index: number;
  /** Expanded id, e.g. `score[context=full,seed=2]`. */
  readonly id: string;
  /** Id before matrix expansion, e.g. `curriculum.2.policy`. */
  readonly plain: string;
  /** Top-level node id in the file (`curriculum` for stage nodes). */
  readonly group: string;
  /** For a node of a `stages` node: its stage index and its name in `each` (`{index: 2, name: "policy"}`). */
  readonly stage?: { readonly index: number; readonly name: string };
  /** The kind that computes it. */
  readonly kind: NodeKind;
  /** Its matrix coordinates: axis -> label, only for the axes it depends on. */
  readonly variant: Readonly<Record<string, string>>;
  /** Indices of the nodes it reads. */
  readonly deps: readonly number[];
  /** Its parameters with matrix values and the seed substituted; node inputs remain as `InputRef`. */
  readonly params: Resolvable;
  /** The parameters with node references as written and matrix/seed references substituted (what fingerprints see). */
  readonly literal: Json;
  /** Why it is skipped (e.g. `OPENAI_API_KEY not set`), when it is. */
  readonly skipped?: string;
}
