/**
 * The nodes of a file before matrix expansion ("plain" nodes: a top-level
 * node, or one stage's copy of a stages node's `each` entry) and the state
 * the compilation passes share.
 *
 * @module
 */
import type { DocPath } from "./source.ts";
import type { NodeRef, Template } from "../refs.ts";
import type { NodeKind } from "../types.ts";
import type { AxisValue } from "./graph.ts";
import type { Diagnostics } from "./diagnostics.ts";
import type { Limits } from "../limits.ts";

/** Where a stage node sits in its stages node. */
export interface StageScope {
  /** The stage index i (0-based). */
  readonly index: number;
  /** Number of stages. */
  readonly count: number;
  /** The name of the node in `each`. */
  readonly name: string;
  /** The names of `each`. */
  readonly each: ReadonlySet<string>;
  /** `from:` (what stage 0 reads as `$prev.NAME`). */
  readonly from: Record<string, unknown>;
  /** Document path of `from:`. */
  readonly fromAt: DocPath;
}

/** A node before matrix expansion. */
export interface PlainNode {
  /** Plain id, e.g. `score` or `curriculum.2.policy`. */
  readonly id: string;
  /** Top-level id in the file. */
  readonly group: string;
  /** `kind:` as written. */
  readonly kindName: string;
  /** `with:` as written. */
  readonly rawWith: Record<string, unknown>;
  /** Document path of the node's mapping. */
  readonly at: DocPath;
  /** For stage nodes. */
  readonly stage?: StageScope;
  /** `with:` with references parsed (set by the references pass). */
  template: Template;
  /** Plain ids it reads (without pins). */
  readonly deps: Set<string>;
  /** References that pin a variant (`$node[axis=value]`): resolved per variant when expanding. */
  readonly pinned: NodeRef[];
  /** Matrix axes it varies with, in matrix order (set by the expansion pass). */
  axes: string[];
  /** Whether it reads `$matrix` or `$seed` directly. */
  hasMatrix: boolean;
}

/** A matrix axis while compiling. */
export interface AxisDef {
  /** Axis name. */
  readonly name: string;
  /** Its values in file order. */
  readonly values: AxisValue[];
  /** Sampled axes drawn jointly share this tag: their i-th values vary together. */
  readonly zip?: string;
}

/** What the compilation passes share. */
export interface Compilation {
  /** Where problems go. */
  readonly diags: Diagnostics;
  /** Registered kinds by name. */
  readonly kinds: ReadonlyMap<string, NodeKind>;
  /** Environment lookup (`requires_env`). */
  readonly env: (name: string) => string | undefined;
  /** Matrix axes in file order. */
  readonly axes: AxisDef[];
  /** Reference names (plain ids, stage aliases) -> plain id. */
  readonly names: Map<string, string>;
  /** Plain nodes by id, in file order. */
  readonly plains: Map<string, PlainNode>;
  /** Resource limits (stages, variants, nodes). */
  readonly limits: Limits;
}

/** Ids a node (or a stages node's `each` entry) may not use. */
export const RESERVED: ReadonlySet<string> = new Set([
  "matrix",
  "seed",
  "prev",
  "earlier",
  "stage",
  "stages",
]);
