/**
 * Loading an experiment file: YAML with positions -> validated, unrolled
 * (`stages`), variant-expanded (`matrix`) static graph of nodes. Every error of
 * the file is collected in one pass and thrown together as an
 * {@linkcode ExperimentError} whose diagnostics carry file:line:col.
 *
 * @module
 */
import { dirname, resolve } from "node:path";
import { ExperimentFileSchema } from "./experiment_schema.ts";
import type { ExecutorSpec, TableSpec } from "./experiment_schema.ts";
import { ExperimentError, UserError } from "../errors.ts";
import { expandedShape, Source, tooLargeMessage } from "./source.ts";
import {
  DEFAULT_LIMITS,
  type Limits,
  raiseHint,
  resolveLimits,
} from "../limits.ts";
import {
  checkNodeCount,
  checkReferenceCount,
  checkVariantCount,
} from "./bounds.ts";
import type { NodeKind } from "../types.ts";
import type { Axis, GraphNode } from "./graph.ts";
import * as v from "valibot";
import { Diagnostics, isRecord } from "./diagnostics.ts";
import { type ExecutorDeclaration, readExecutor } from "./executor_block.ts";
import { assignAxes, expandGraph, orderNodes } from "./expansion.ts";
import { readMatrix, variantsOf } from "./matrix.ts";
import { checkParams } from "./parameters.ts";
import type { Compilation } from "./plain_node.ts";
import { checkFileReferences } from "./file_refs.ts";
import { buildTemplate, referenceCount } from "./references.ts";
import { collectNodes } from "./stages.ts";
import { checkTables } from "./table_spec.ts";
import { applyOverrides, overrideLabel } from "./overrides.ts";
import {
  declaredPlugins,
  loadPlugins,
  type PluginHandler,
  type PluginSet,
} from "./plugins.ts";

export type { Axis, AxisValue, GraphNode } from "./graph.ts";

/**
 * A loaded, validated and expanded experiment.
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
 * import type { Experiment } from "./experiment.ts";
 * const exp: Experiment = compileExperiment("e.yaml", `experiment: e
 * seed: 7
 * matrix: { x: [1, 2] }
 * nodes:
 *   a: { kind: one, with: { x: $matrix.x } }
 * `, { kinds: [one as NodeKind] });
 * assert.equal(exp.name, "e");
 * assert.equal(exp.seed, 7);
 * assert.deepEqual(exp.nodes.map((n) => n.id), ["a[x=1]", "a[x=2]"]);
 * assert.equal(exp.byId.get("a[x=2]"), 1);
 * ```
 */
export interface Experiment {
  /** `experiment:` name. */
  readonly name: string;
  /** The file as given. */
  readonly file: string;
  /** Absolute directory of the file. */
  readonly dir: string;
  /** The resource limits it was loaded with (absent: the defaults). */
  readonly limits?: Limits;
  /** `description:`, when given. */
  readonly description?: string;
  /** `seed:` */
  readonly seed: number;
  /** Matrix axes in file order. */
  readonly axes: readonly Axis[];
  /** Every variant (axis -> label) that is not excluded. */
  readonly variants: readonly Readonly<Record<string, string>>[];
  /** All nodes, in a topological order. */
  readonly nodes: readonly GraphNode[];
  /** Expanded id -> index. */
  readonly byId: ReadonlyMap<string, number>;
  /** Plain id -> the axes it depends on (matrix order). */
  readonly plainAxes: ReadonlyMap<string, readonly string[]>;
  /** Reference names (plain ids and stage aliases like `curriculum.policy`) -> plain id. */
  readonly names: ReadonlyMap<string, string>;
  /** `tables:` entries. */
  readonly tables: readonly TableSpec[];
  /** `executor:` when given. */
  readonly executor?: ExecutorSpec;
  /** What the file's `plugins:` registered (set by {@linkcode loadExperiment}). */
  readonly plugins?: PluginSet;
  /** The `--set PATH=VALUE` overrides applied to the file, in order (absent when none). */
  readonly overrides?: readonly string[];
}

/** Options of {@linkcode loadExperiment}. */
export interface LoadOptions {
  /** The node kinds the file may use. */
  readonly kinds: Iterable<NodeKind>;
  /**
   * The executors `executor:` may name (the engine's CLI passes
   * `builtinExecutors` of `@envsmith/engine/executor` and any plugins').
   * @default {[]}
   */
  readonly executors?: readonly ExecutorDeclaration[];
  /**
   * Reads environment variables (only to decide `requires_env` skips; values are never stored).
   * @default Deno.env.get
   */
  readonly env?: (name: string) => string | undefined;
  /**
   * Resource limits (file size, depth, stages, variants, nodes...), over
   * the defaults of `limits.ts`.
   * @default DEFAULT_LIMITS
   */
  readonly limits?: Partial<Limits>;
  /**
   * Named exports of plugin modules the project registers (e.g.
   * `engineers`), for the file's `plugins:`; node kinds and executors are
   * registered by the engine itself.
   */
  readonly pluginHandlers?: Readonly<Record<string, PluginHandler>>;
  /**
   * `PATH=VALUE` overrides (`--set`), applied in order to the parsed file
   * before it is validated; see `overrides.ts`.
   */
  readonly overrides?: readonly string[];
}

/**
 * Reads, validates and expands an experiment file. A file over the size
 * limit is refused before it is read.
 *
 * @throws {UserError} when the file cannot be read.
 * @throws {ExperimentError} listing every problem of the file.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import { loadExperiment } from "./experiment.ts";
 * import { ExperimentError } from "../errors.ts";
 * const one: NodeKind<{ x: number }> = {
 *   name: "one", description: "x back", params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url, run: (p) => Promise.resolve({ value: p.x }),
 * };
 * const dir = await Deno.makeTempDir();
 * Deno.writeTextFileSync(`${dir}/e.yaml`, "experiment: e\nseed: 1\nnodes:\n  a: { kind: one, with: { x: 4 } }\n");
 * const exp = await loadExperiment(`${dir}/e.yaml`, { kinds: [one as NodeKind] });
 * assert.deepEqual(exp.nodes.map((n) => n.id), ["a"]);
 * Deno.writeTextFileSync(`${dir}/bad.yaml`, "experiment: e\nseed: 1\nnodes:\n  a: { kind: onee }\n");
 * await assert.rejects(loadExperiment(`${dir}/bad.yaml`, { kinds: [one as NodeKind] }), ExperimentError);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function loadExperiment(
  file: string,
  options: LoadOptions,
): Promise<Experiment> {
  const limits = resolveLimits(options.limits);
  let text: string;
  try {
    const size = (await Deno.stat(file)).size;
    if (size > limits.fileBytes) {
      throw new ExperimentError([{
        code: "limit",
        file,
        line: 1,
        col: 1,
        path: "",
        message: tooLargeMessage(size, limits),
      }]);
    }
    text = await Deno.readTextFile(file);
  } catch (e) {
    if (e instanceof ExperimentError) throw e;
    throw new UserError(
      `Cannot read experiment file ${file}: ${(e as Error).message}`,
    );
  }
  const modules = declaredPlugins(text);
  if (modules.length === 0) return compileExperiment(file, text, options);
  const executors = options.executors ?? [];
  const plugins = await loadPlugins(modules, {
    from: `${file}: plugins:`,
    baseDir: dirname(resolve(file)),
    kinds: [...options.kinds],
    executors,
    ...(options.pluginHandlers ? { handlers: options.pluginHandlers } : {}),
  });
  const exp = compileExperiment(file, text, {
    ...options,
    kinds: [...options.kinds, ...plugins.kinds],
    executors: [...executors, ...plugins.executors],
  });
  return { ...exp, plugins };
}

/**
 * Validates and expands an experiment given as text (`file` names it in
 * messages): structure, executor, matrix, nodes and stages, references,
 * parameters, order and expansion, tables. Every problem is collected
 * before one {@linkcode ExperimentError} is thrown.
 *
 * Long by design: the compiler's passes in order, each one call; the function is their sequence with the diagnostics.
 *
 * @example
 * ```ts
 * import { compileExperiment } from "./experiment.ts";
 * import type { NodeKind } from "../types.ts";
 * import * as v from "valibot";
 * import assert from "node:assert/strict";
 * const add: NodeKind<{ a: number }> = {
 *   name: "add",
 *   description: "",
 *   params: v.object({ a: v.number() }),
 *   module: import.meta.url,
 *   run: (p) => Promise.resolve({ value: p.a }),
 * };
 * const exp = compileExperiment("x.yaml", `experiment: x
 * seed: 1
 * matrix: { a: [1, 2] }
 * nodes:
 *   s: { kind: stages, count: 2, each: { n: { kind: add, with: { a: $matrix.a } } } }
 * `, { kinds: [add as NodeKind] });
 * assert.deepEqual(exp.nodes.map((n) => n.id), [
 *   "s.0.n[a=1]", "s.0.n[a=2]", "s.1.n[a=1]", "s.1.n[a=2]",
 * ]);
 * assert.deepEqual(exp.nodes[2]!.stage, { index: 1, name: "n" });
 * ```
 */
export function compileExperiment(
  file: string,
  text: string,
  options: LoadOptions,
): Experiment {
  const limits = options.limits
    ? resolveLimits(options.limits)
    : DEFAULT_LIMITS;
  const source = new Source(file, text, limits);
  const overrideProblems = options.overrides?.length && isRecord(source.data)
    ? applyOverrides(
      source,
      options.overrides,
      Object.keys(ExperimentFileSchema.entries),
      (label, t) => new Source(label, t, limits),
    )
    : [];
  if (
    options.overrides?.length && overrideProblems.length === 0 &&
    isRecord(source.data)
  ) _checkExpandedWithOverrides(source.data, options.overrides, limits);
  const c: Compilation = {
    diags: new Diagnostics(source),
    kinds: new Map([...options.kinds].map((k) => [k.name, k])),
    env: options.env ?? ((n) => Deno.env.get(n)),
    axes: [],
    names: new Map(),
    plains: new Map(),
    limits,
  };
  c.diags.list.push(...overrideProblems);
  const data = source.data;
  if (!isRecord(data)) {
    c.diags.report(
      "structure",
      [],
      "an experiment file is a mapping with experiment, seed and nodes",
    );
    throw new ExperimentError(c.diags.list);
  }
  c.diags.unknownKeys(
    data,
    Object.keys(ExperimentFileSchema.entries),
    [],
    "top-level key",
  );
  const top = v.safeParse(ExperimentFileSchema, data);
  if (!top.success) {
    c.diags.issues(top.issues, [], "structure", (p) => p[0] === "executor");
  }
  const executor = readExecutor(
    c,
    data.executor,
    options.executors ?? [],
  );
  readMatrix(
    c,
    data.matrix,
    typeof data.seed === "number" ? data.seed : 0,
  );
  collectNodes(c, isRecord(data.nodes) ? data.nodes : {});
  for (const p of c.plains.values()) buildTemplate(c, p);
  for (const p of c.plains.values()) checkFileReferences(c, p);
  for (const p of c.plains.values()) checkParams(c, p);
  const order = orderNodes(c);
  let graph: ReturnType<typeof expandGraph> = { nodes: [], byId: new Map() };
  let variants: Record<string, string>[] = [];
  if (order && checkVariantCount(c)) {
    assignAxes(c, order);
    variants = variantsOf(c, data.matrix);
    if (
      checkNodeCount(c, order, variants) &&
      checkReferenceCount(c, order, variants, referenceCount)
    ) {
      graph = expandGraph(
        c,
        order,
        variants,
        typeof data.seed === "number" ? data.seed : 0,
      );
    }
  }
  const tables = checkTables(c, data.tables);
  if (c.diags.list.length > 0) throw new ExperimentError(c.diags.list);
  return {
    name: String(data.experiment),
    file,
    dir: dirname(resolve(file)),
    ...(typeof data.description === "string"
      ? { description: data.description }
      : {}),
    seed: Number(data.seed),
    axes: c.axes,
    variants,
    nodes: graph.nodes,
    byId: graph.byId,
    plainAxes: new Map([...c.plains.values()].map((p) => [p.id, p.axes])),
    names: c.names,
    tables,
    ...(executor ? { executor } : {}),
    ...(options.overrides?.length ? { overrides: [...options.overrides] } : {}),
    ...(options.limits ? { limits } : {}),
  };
}

/**
 * The values and depth limits hold for the file with its `--set` values
 * together, not only for each alone (ten values of 1.9 million expanded
 * values each are 19 million): checked once they are all in place, before
 * anything walks the document, and reported at the last override.
 *
 * @throws {ExperimentError} when the whole is over a limit.
 */
function _checkExpandedWithOverrides(
  data: unknown,
  overrides: readonly string[],
  limits: Limits,
): void {
  const shape = expandedShape(data, limits);
  if (shape === null) return;
  throw new ExperimentError([{
    code: "limit",
    file: overrideLabel(overrides[overrides.length - 1]!),
    line: 1,
    col: 1,
    path: "",
    message: shape === "depth"
      ? `the file with its ${overrides.length} --set value(s) nests deeper than ${limits.depth} levels once YAML aliases are expanded; ${
        raiseHint("depth")
      }`
      : `the file with its ${overrides.length} --set value(s) holds more than ${limits.yamlValues} values once YAML aliases are expanded (each alone may be within the limit; together they count); ${
        raiseHint("yamlValues")
      }`,
  }]);
}
