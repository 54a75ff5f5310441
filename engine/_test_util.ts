/**
 * Test helpers (not part of the API).
 *
 * @module
 */
import { join } from "node:path";
import { compileExperiment, type Experiment } from "./compile/experiment.ts";
import { makePlan } from "./run/plan.ts";
import {
  runPlan,
  type RunPlanOptions,
  type RunResult,
} from "./run/scheduler.ts";
import { type Entry, Store } from "./cache/store.ts";
import { kinds } from "./testdata/kinds.ts";
import type { NodeKind } from "./types.ts";
import type { CommandContext } from "./cli/commands.ts";
import { SilentReporter } from "./run/progress.ts";
import { readManifest } from "./cache/manifest.ts";
import { canonicalJson } from "./canonical.ts";
import { exportBundle, type ExportOptions } from "./cache/bundle.ts";

/** A temporary directory with an experiment file and a cache. */
export async function tmpProject(
  yaml: string,
): Promise<
  {
    dir: string;
    file: string;
    cache: string;
    store: Store;
    [Symbol.asyncDispose](): Promise<void>;
  }
> {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-test-" });
  const file = join(dir, "exp.yaml");
  await Deno.writeTextFile(file, yaml);
  const cache = join(dir, "cache");
  return {
    dir,
    file,
    cache,
    store: new Store(cache),
    async [Symbol.asyncDispose]() {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/** Compiles with the test kinds (plus `extra`). */
export function compile(
  file: string,
  yaml: string,
  extra: readonly NodeKind[] = [],
): Experiment {
  return compileExperiment(file, yaml, { kinds: [...kinds, ...extra] });
}

/** Plans and runs everything. */
export function runAll(
  exp: Experiment,
  store: Store,
  options: RunPlanOptions = {},
): Promise<RunResult> {
  return runPlan(makePlan(exp, store), store, {
    jobs: 4,
    manifestEveryMs: 50,
    ...options,
  });
}

/** Value of a node by id from a run result. */
export function valueOf(exp: Experiment, r: RunResult, id: string): unknown {
  const i = exp.byId.get(id);
  if (i === undefined) throw new Error(`no node ${id}`);
  return r.values.get(i)?.value;
}

export { loadFactor, scaledMs } from "./testdata/load.ts";

/**
 * A command context on `cache` with the test kinds whose output lines
 * (stderr ones prefixed `ERR `) collect in `lines`; silent progress unless
 * `reporter: false`.
 */
export function commandContext(
  cache: string,
  options: {
    overrides?: string[] | undefined;
    kinds?: readonly NodeKind[];
    reporter?: false;
  } = {},
): CommandContext & { lines: string[] } {
  const lines: string[] = [];
  return {
    kinds: options.kinds ?? kinds,
    cache,
    lines,
    ...(options.reporter === false ? {} : { reporter: new SilentReporter() }),
    output: { out: (l) => lines.push(l), err: (l) => lines.push(`ERR ${l}`) },
    ...(options.overrides ? { overrides: options.overrides } : {}),
  };
}

/** A minimal cache entry under `key` (value 1) naming `blobs`. */
export function testEntry(key: string, blobs: string[] = []): Entry {
  return {
    key,
    id: "n",
    kind: "k",
    components: { format: 1, kind: "k", code: "c", params: null },
    inputs: {},
    codeFiles: {},
    value: 1,
    blobs,
    created: new Date().toISOString(),
    ms: 1,
    versions: {},
  };
}

/**
 * The key, value and report of every stored entry of the run whose manifest
 * is `manifestPath`, by node id: what two runs of one graph must agree on.
 */
export function runOutputs(
  cache: string,
  manifestPath: string,
): Record<string, string> {
  const store = new Store(cache);
  const m = readManifest(manifestPath)!;
  const out: Record<string, string> = {};
  for (const n of m.nodes) {
    const e = store.loadVerified(n.key)!;
    out[n.id] = `${n.key} ${
      canonicalJson({ value: e.value, report: e.report ?? null })
    }`;
  }
  return out;
}

/**
 * A test experiment `name` (file `<name>.yaml`) of one `score` node per
 * method and seed, whose value is `[method, seed]` (a lookup in the test
 * gives the numbers), and the YAML list of `tables` over them.
 */
export function scoresExperiment(
  name: string,
  methods: string[],
  seeds: number[],
  tables: string,
): Experiment {
  return compileExperiment(
    `${name}.yaml`,
    `experiment: ${name}
seed: 1
matrix:
  method: [${methods.join(", ")}]
  seed: [${seeds.join(", ")}]
nodes:
  score: { kind: test.sleep, with: { ms: 0, value: [$matrix.method, $seed] } }
tables:
${tables}`,
    { kinds, env: () => undefined },
  );
}

/**
 * The text of a test experiment `name` (seed `seed`) over the matrix axis
 * `k` = 1, 2, whose node `a` adds 1 and 2 and whose node `b` (one per k) adds
 * a's sum and k; `more` (YAML under `nodes:`) adds nodes and what follows.
 */
export function kExperiment(name: string, seed: number, more = ""): string {
  return `experiment: ${name}
seed: ${seed}
matrix:
  k: [1, 2]
nodes:
  a: { kind: test.add, with: { a: 1, b: 2 } }
  b: { kind: test.add, with: { a: $a.sum, b: $matrix.k } }
${more}`;
}

/**
 * What a reporter test drives: the reporter `make` builds on `io`, the text
 * it writes (`out`) and the test clock it reads (`clock.ms`, from `start`).
 */
export function onTestClock<R>(
  start: number,
  make: (io: { write: (t: string) => void; now: () => number }) => R,
): { r: R; out: string[]; clock: { ms: number } } {
  const out: string[] = [];
  const clock = { ms: start };
  const r = make({ write: (t) => out.push(t), now: () => clock.ms });
  return { r, out, clock };
}

/**
 * A new project (removed at the end of the caller's scope) whose run of
 * `yaml` is exported (with `options`) to the bundle `<dir>/<name>`: the
 * project, its experiment `exp` and the bundle's path `bundle`.
 */
export async function exportedRun(
  yaml: string,
  name = "r.esb",
  options: ExportOptions = {},
) {
  const p = await tmpProject(yaml);
  try {
    const exp = compile(p.file, yaml);
    await runAll(exp, p.store);
    const bundle = join(p.dir, name);
    await exportBundle(p.store, bundle, options);
    return Object.assign(p, { exp, bundle });
  } catch (e) {
    await p[Symbol.asyncDispose]();
    throw e;
  }
}

/**
 * The text of a small test experiment `name` that stores a blob: `a` adds 1
 * and 2, `b` adds a's sum and 5, `c` writes a 4 KiB blob.
 */
export function blobExperiment(name: string): string {
  return `experiment: ${name}
seed: 1
nodes:
  a: { kind: test.add, with: { a: 1, b: 2 } }
  b: { kind: test.add, with: { a: $a.sum, b: 5 } }
  c: { kind: test.blob, with: { size: 4096 } }
`;
}
