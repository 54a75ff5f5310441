/**
 * The contract between the generic engine and the node kinds that plug into it.
 *
 * A node kind is a plain object: a name, a valibot schema for its parameters,
 * the URL of the module that defines it (whose module graph is digested into
 * every key, so editing the code invalidates the cache), and a `run` function.
 * The engine resolves references (`$other`) into the referenced nodes' values,
 * validates the parameters with the kind's schema, and calls `run`.
 *
 * @module
 */
import type * as v from "valibot";

/**
 * A JSON value: what node values, reports and parameters are made of.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Json } from "./types.ts";
 * const value: Json = { success: 0.82, curve: [0.1, 0.5, 0.82], note: null };
 * assert.equal(JSON.stringify(JSON.parse(JSON.stringify(value))), JSON.stringify(value));
 * ```
 */
export type Json =
  | null
  | boolean
  | number
  | string
  | Json[]
  | { [key: string]: Json };

/**
 * A reference to a binary blob in the content-addressed store.
 *
 * Node values that carry large binary data (ONNX policies, trajectory blobs)
 * hold a `BlobRef` and keep the bytes in the store; dependents read them with
 * {@linkcode NodeContext.readBlob}.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { Store } from "./cache/store.ts";
 * import type { BlobRef } from "./types.ts";
 * const dir = await Deno.makeTempDir();
 * const store = new Store(dir);
 * const bytes = new TextEncoder().encode("weights");
 * const ref: BlobRef = store.writeBlob(bytes, "application/octet-stream");
 * assert.equal(ref.size, 7);
 * assert.deepEqual(store.readBlob(ref), bytes);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export interface BlobRef {
  /** sha256 (hex) of the bytes. */
  readonly $blob: string;
  /** Size in bytes. */
  readonly size: number;
  /** Media type, e.g. `application/onnx`. */
  readonly media: string;
}

/**
 * What a node produces.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { NodeResult } from "./types.ts";
 * const result: NodeResult<{ success: number }> = {
 *   value: { success: 0.82 }, // what `$node.success` gives a dependent
 *   report: { curve: [0.1, 0.5, 0.82] }, // for tables and reports only
 * };
 * assert.equal(result.value.success, 0.82);
 * ```
 */
export interface NodeResult<V extends Json = Json> {
  /** What dependents receive when they reference this node (`$node`). */
  value: V;
  /**
   * Extra information for tables and reports (learning curves, rationale,
   * diffs); stored with the value but never passed to dependents.
   */
  report?: Json;
}

/**
 * What the engine gives a running node.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { NodeContext } from "./types.ts";
 * // A kind's run uses ctx for progress, logs and blobs:
 * async function countTo(n: number, ctx: NodeContext): Promise<number> {
 *   for (let i = 1; i <= n; i++) {
 *     if (ctx.signal.aborted) throw new Error("cancelled");
 *     ctx.progress(i, n);
 *   }
 *   ctx.log(`counted to ${n}`);
 *   return n;
 * }
 * const lines: string[] = [];
 * const ctx = {
 *   signal: new AbortController().signal,
 *   progress: () => {},
 *   log: (line: string) => lines.push(line),
 * } as unknown as NodeContext; // the engine gives the rest (id, key, blobs, ...)
 * assert.equal(await countTo(3, ctx), 3);
 * assert.deepEqual(lines, ["counted to 3"]);
 * ```
 */
export interface NodeContext {
  /** Node id after variant expansion, e.g. `curriculum.2.policy[context=full,seed=1]`. */
  readonly id: string;
  /** The node's content key (sha256 hex). */
  readonly key: string;
  /** A uint32 seed derived from the key, for nodes that need randomness beyond their seed parameters. */
  readonly seed: number;
  /** Aborted when the run is cancelled; long loops should check it. */
  readonly signal: AbortSignal;
  /** A directory private to this node execution, for temporary files. */
  readonly workDir: string;
  /**
   * A directory shared by all nodes of a kind across runs, inside the cache
   * (e.g. the LLM prompt/reply cache). Exported with the cache.
   */
  readonly auxDir: string;
  /**
   * The directory of the experiment file: relative paths in parameters
   * (e.g. the `exec` kind's input files) resolve against it.
   */
  readonly baseDir: string;
  /** Report progress: `done` of `total` units, with an optional short note (e.g. `success 0.82`). */
  progress(done: number, total: number, note?: string): void;
  /** Append a line to the node's log. */
  log(message: string): void;
  /** Store bytes in the content-addressed store. */
  writeBlob(bytes: Uint8Array, media: string): Promise<BlobRef>;
  /** Read (and hash-verify) a blob. */
  readBlob(ref: BlobRef): Promise<Uint8Array>;
}

/**
 * A kind of node: what `kind:` in an experiment file names.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "./types.ts";
 * import { compileExperiment } from "./compile/experiment.ts";
 * import { Store } from "./cache/store.ts";
 * import { makePlan } from "./run/plan.ts";
 * import { runPlan } from "./run/scheduler.ts";
 * import { SilentReporter } from "./run/progress.ts";
 * const double: NodeKind<{ x: number }, number> = {
 *   name: "double",
 *   description: "twice x",
 *   params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url,
 *   run: (p) => Promise.resolve({ value: 2 * p.x }),
 * };
 * const exp = compileExperiment("twice.yaml", `experiment: twice
 * seed: 1
 * nodes:
 *   a: { kind: double, with: { x: 3 } }
 *   b: { kind: double, with: { x: $a } }
 * `, { kinds: [double as NodeKind] });
 * const dir = await Deno.makeTempDir();
 * const store = new Store(dir);
 * const r = await runPlan(makePlan(exp, store), store, {
 *   reporter: new SilentReporter(),
 * });
 * assert.equal(r.failures.length, 0);
 * assert.equal(r.values.get(exp.byId.get("b")!)?.value, 12);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export interface NodeKind<P = unknown, V extends Json = Json> {
  /** The name used in experiment files, e.g. `train` or `policy.init`. */
  readonly name: string;
  /** One line for `--help`, `plan` and the JSON Schema. */
  readonly description: string;
  /**
   * Schema of the parameters (`with:`), checked on literal values before
   * anything runs and on resolved values before `run`.
   */
  readonly params: v.GenericSchema<unknown, P>;
  /**
   * One line per parameter (`with:` key): what it is and its default.
   * Editors show it on hover (the JSON Schema's `description`).
   */
  readonly paramDocs?: Readonly<Record<string, string>>;
  /**
   * `import.meta.url` of the module that exports this kind as `kind`. Its
   * module graph is digested into the key, and workers import it from here.
   */
  readonly module: string;
  /** CPU-heavy kinds run off the main thread. */
  readonly heavy?: boolean;
  /**
   * Optional: the fields of this kind's value that are files (each a
   * {@linkcode BlobRef} in the value), with one line on what each is, e.g.
   * `{ gguf: "the model as a GGUF file" }`. A reference to one of them
   * (`$node.gguf`) is a file reference: the reading node gets the path of
   * the hash-verified file in the store, its key reads the producing node's
   * key, and its `fingerprint` and `codeModules` do not see the parameter
   * (there is no file before the producer ran). A reference to such a field
   * name on a node whose kind does not declare it is refused at plan.
   */
  readonly files?: Readonly<Record<string, string>>;
  /**
   * Optional: extra content hashed into the key, computed before anything
   * runs from the literal parameters (references still unresolved, shown as
   * their `$...` strings). The `exec` kind returns the digests of its
   * declared input files here. Throwing marks the node as not cacheable.
   */
  fingerprint?(params: unknown, info: FingerprintInfo): Json;
  /**
   * Optional: modules besides `module` whose code this node runs, chosen by
   * its literal parameters (as `fingerprint` sees them), e.g. the one
   * strategy of many that a parameter names. Their module graphs are
   * digested with `module`'s into the node's code digest, so `module` need
   * not import every alternative and an edit of one alternative recomputes
   * only the nodes that use it. Throwing marks the node as not cacheable
   * (a `UserError` refuses the experiment, as for `fingerprint`).
   */
  codeModules?(
    params: unknown,
    info: { readonly baseDir: string },
  ): readonly string[];
  /**
   * Optional: whether this machine can run the node, from its literal
   * parameters (as `fingerprint` sees them): null when it can, else one line
   * saying what is missing and the fix, e.g. `the Python environment
   * .envsmith/lm-venv is missing; create it with \`deno task setup:lm\``.
   * `plan`, `run` and `run-node FILE NODE` ask it of the nodes they would
   * run and refuse before anything runs; `tables`, `report`, `status` and
   * `run-node KEY` (a job sent elsewhere) never ask,
   * so what a node needs of a machine (an environment, a GPU) stays out of
   * its key and its cached results read anywhere.
   */
  ready?(
    params: unknown,
    info: { readonly baseDir: string },
  ): string | null;
  /** Compute the node. Must be deterministic given the resolved parameters. */
  run(params: P, ctx: NodeContext): Promise<NodeResult<V>>;
  /**
   * Optional: a warning about a computed result that makes what is built on
   * it suspect (a policy that did not learn), or null. Asked of the nodes
   * no node of the same kind reads (the end of a chain, e.g. the last
   * training stage), after a run, by `tables` and by reports.
   */
  warning?(result: {
    readonly value: Json;
    readonly report?: Json;
  }): ResultWarning | null;
}

/**
 * What {@linkcode NodeKind.fingerprint} is given besides the literal parameters.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { FingerprintInfo, Json } from "./types.ts";
 * // A fingerprint that keys a node by a file it reads, relative to the experiment file.
 * function fingerprint(params: unknown, info: FingerprintInfo): Json {
 *   const file = (params as { map: string }).map;
 *   return { map: `${info.baseDir}/${file}` };
 * }
 * assert.deepEqual(fingerprint({ map: "m.txt" }, { baseDir: "/exp" }), {
 *   map: "/exp/m.txt",
 * });
 * ```
 */
export interface FingerprintInfo {
  /** The experiment file's directory: relative paths resolve against it. */
  readonly baseDir: string;
  /**
   * The `input-bytes` limit: most bytes of the files one node declares as
   * inputs (hashed into its key). @default 256 MiB
   */
  readonly inputBytes?: number;
}

/**
 * What {@linkcode NodeKind.warning} returns.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Json, ResultWarning } from "./types.ts";
 * function warning(r: { value: Json }): ResultWarning | null {
 *   const success = (r.value as { success: number }).success;
 *   return success >= 0.1 ? null : {
 *     summary: "the policy did not learn",
 *     detail: `final training success ${success} < 0.10`,
 *     advice: "comparisons built on it measure nothing; train longer",
 *   };
 * }
 * assert.equal(warning({ value: { success: 0.5 } }), null);
 * assert.equal(warning({ value: { success: 0.03 } })?.summary, "the policy did not learn");
 * ```
 */
export interface ResultWarning {
  /** What is wrong, short: `the policy did not learn`. */
  readonly summary: string;
  /** The number behind it: `final training success 0.03 < 0.20`. */
  readonly detail: string;
  /** What follows and what to do: `comparisons built on it measure nothing; ...`. */
  readonly advice: string;
}
