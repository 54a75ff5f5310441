/**
 * Run manifests: per run of an experiment, every node's id, key, status,
 * timings and output location, plus the key components (so a later `plan`
 * can explain what changed). Stored in `CACHE/runs/<experiment>/`.
 *
 * @module
 */
import { join } from "node:path";
import * as v from "valibot";
import type { KeyComponents } from "./keys.ts";
import { writeAtomic } from "./atomic_write.ts";
import { NotRegularFileError, readRegularText } from "../regular_file.ts";
import type { Store } from "./store.ts";

/** Status of a node in a run. */
export type NodeStatus =
  | "pending"
  | "running"
  | "cached"
  | "done"
  | "failed"
  | "blocked"
  | "skipped"
  | "unselected"
  | "interrupted";

/** One node in a manifest. */
export interface ManifestNode {
  /** Expanded node id. */
  id: string;
  /** Its key. */
  key: string;
  /** Kind name. */
  kind: string;
  /** What happened. */
  status: NodeStatus;
  /** Whether it may be cached. */
  cacheable: boolean;
  /** Why not cacheable / skipped / blocked / not cached. */
  reason?: string;
  /** ISO start time of its execution in this run. */
  started?: string;
  /** Execution time (ms). */
  ms?: number;
  /** Entry file, relative to the cache directory. */
  entry?: string;
  /** Log file, relative to the cache directory. */
  log?: string;
  /** Error message when failed. */
  error?: string;
  /** Executor job id (e.g. the Slurm job id) when it ran as one. */
  job?: string;
  /**
   * Key components; omitted when the node's entry is stored (`cached`,
   * `done`), whose entry holds them.
   */
  components?: KeyComponents;
  /** Input key -> input node id (omitted like `components`). */
  inputs?: Record<string, string>;
}

/** A run manifest. */
export interface Manifest {
  /** Manifest format. */
  format: 1;
  /** Experiment name. */
  experiment: string;
  /** Experiment file as given. */
  file: string;
  /** Run id (also the file name). */
  run: string;
  /** The `--set PATH=VALUE` overrides the file was run with, when any. */
  overrides?: string[];
  /** Where nodes ran, when not `local` (e.g. `slurm`). */
  executor?: string;
  /** ISO start time. */
  started: string;
  /** ISO end time. */
  finished?: string;
  /** Overall status. */
  status: "running" | "ok" | "failed" | "interrupted";
  /** Runtime and envsmith versions. */
  versions: Record<string, string>;
  /** Host and pid of the runner. */
  host: string;
  /** Process id. */
  pid: number;
  /** Code digest -> files (path -> sha256), for explaining code changes. */
  code: Record<string, Record<string, string>>;
  /** Count per status. */
  counts: Partial<Record<NodeStatus, number>>;
  /** Every node of the experiment. */
  nodes: ManifestNode[];
}

/**
 * Writes (or rewrites) a manifest atomically (tmp + rename). Returns its path.
 *
 * @throws {FileSystemError} when the cache cannot be written.
 */
export function writeManifest(store: Store, m: Manifest): string {
  const dir = store.runsDir(m.experiment);
  const path = join(dir, `${m.run}.json`);
  const tmp = store.tmpPath(`manifest-${m.run}`);
  const counts: Partial<Record<NodeStatus, number>> = {};
  for (const n of m.nodes) counts[n.status] = (counts[n.status] ?? 0) + 1;
  m.counts = counts;
  const slim = {
    ...m,
    nodes: m.nodes.map((n) => {
      if (!n.cacheable || (n.status !== "cached" && n.status !== "done")) {
        return n;
      }
      const { components: _c, inputs: _i, ...rest } = n;
      return rest;
    }),
  };
  writeAtomic(path, tmp, JSON.stringify(slim), "write the run manifest");
  return path;
}

/**
 * Manifest file paths of an experiment (or of all experiments), oldest first.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import { compileExperiment } from "../compile/experiment.ts";
 * import { makePlan } from "../run/plan.ts";
 * import { runPlan } from "../run/scheduler.ts";
 * import { SilentReporter } from "../run/progress.ts";
 * import { Store } from "./store.ts";
 * const one: NodeKind<{ x: number }> = {
 *   name: "one", description: "x back", params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url, run: (p) => Promise.resolve({ value: p.x }),
 * };
 * const exp = compileExperiment("e.yaml", "experiment: e\nseed: 1\nnodes:\n  a: { kind: one, with: { x: 4 } }\n", {
 *   kinds: [one as NodeKind],
 * });
 * const dir = await Deno.makeTempDir();
 * const store = new Store(dir);
 * await runPlan(makePlan(exp, store), store, { reporter: new SilentReporter() });
 * import { listManifests } from "./manifest.ts";
 * assert.equal(listManifests(store, "e").length, 1);
 * assert.deepEqual(listManifests(store, "other"), []);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function listManifests(store: Store, experiment?: string): string[] {
  const base = join(store.root, "runs");
  const dirs: string[] = [];
  try {
    if (experiment) dirs.push(join(base, experiment));
    else {for (const d of Deno.readDirSync(base)) {
        if (d.isDirectory) dirs.push(join(base, d.name));
      }}
  } catch {
    return [];
  }
  const files: string[] = [];
  for (const d of dirs) {
    try {
      for (const f of Deno.readDirSync(d)) {
        // Whatever its type: a symlink or directory named like a manifest
        // is listed, so that reading it reports it.
        if (f.name.endsWith(".json") && !f.name.startsWith(".")) {
          files.push(join(d, f.name));
        }
      }
    } catch { /* none */ }
  }
  return files.sort((a, b) => {
    const na = a.split("/").pop()!, nb = b.split("/").pop()!;
    return na < nb ? -1 : na > nb ? 1 : 0;
  });
}

/** Largest manifest read (a 100,000-node run writes about 30 MB). */
export const MAX_MANIFEST_BYTES = 256 * 1024 * 1024;

const _STATUS = [
  "pending",
  "running",
  "cached",
  "done",
  "failed",
  "blocked",
  "skipped",
  "unselected",
  "interrupted",
] as const;

/**
 * The shape every reader of a manifest relies on (fields added later are
 * let through): a manifest of another shape is reported and skipped,
 * never half-read.
 */
const _Manifest = v.looseObject({
  format: v.literal(1),
  experiment: v.string(),
  file: v.string(),
  run: v.string(),
  executor: v.optional(v.string()),
  started: v.string(),
  finished: v.optional(v.string()),
  status: v.picklist(["running", "ok", "failed", "interrupted"]),
  versions: v.record(v.string(), v.string()),
  host: v.string(),
  pid: v.number(),
  code: v.record(v.string(), v.record(v.string(), v.string())),
  counts: v.record(v.string(), v.number()),
  nodes: v.array(
    v.looseObject({
      id: v.string(),
      key: v.string(),
      kind: v.string(),
      status: v.picklist(_STATUS),
      cacheable: v.boolean(),
      ms: v.optional(v.number()),
      started: v.optional(v.string()),
      reason: v.optional(v.string()),
      error: v.optional(v.string()),
    }),
  ),
});

/** A manifest, or why the file at its path is not one. */
export type ManifestRead =
  | { readonly manifest: Manifest; readonly problem?: undefined }
  | { readonly manifest?: undefined; readonly problem: string };

/**
 * Reads and validates a manifest: a regular file of bounded size, JSON, of
 * the manifest's shape. Never throws: a bad file gives the one-line
 * problem (`not JSON: ...`, `nodes.3.key: expected string`, `a symlink to
 * /etc, not a regular file`).
 */
export function readManifestChecked(path: string): ManifestRead {
  let text: string;
  try {
    text = readRegularText(path, MAX_MANIFEST_BYTES);
  } catch (e) {
    if (e instanceof NotRegularFileError) return { problem: e.what };
    if (e instanceof Deno.errors.NotFound) return { problem: "missing" };
    return { problem: `unreadable: ${(e as Error).message}` };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    return { problem: `not JSON (${(e as Error).message})` };
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return {
      problem: `not a run manifest: a JSON ${
        Array.isArray(json) ? "array" : json === null ? "null" : typeof json
      }, expected an object`,
    };
  }
  const r = v.safeParse(_Manifest, json);
  if (!r.success) {
    const i = r.issues[0]!;
    const where = i.path?.map((p) => String(p.key)).join(".") || "(top)";
    return { problem: `not a run manifest: ${where}: ${i.message}` };
  }
  return { manifest: r.output as unknown as Manifest };
}

/**
 * Reads a manifest; `null` if unreadable (e.g. truncated by a crash) or
 * not of a manifest's shape, after telling `onBad` why in one line.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import { compileExperiment } from "../compile/experiment.ts";
 * import { makePlan } from "../run/plan.ts";
 * import { runPlan } from "../run/scheduler.ts";
 * import { SilentReporter } from "../run/progress.ts";
 * import { Store } from "./store.ts";
 * const one: NodeKind<{ x: number }> = {
 *   name: "one", description: "x back", params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url, run: (p) => Promise.resolve({ value: p.x }),
 * };
 * const exp = compileExperiment("e.yaml", "experiment: e\nseed: 1\nnodes:\n  a: { kind: one, with: { x: 4 } }\n", {
 *   kinds: [one as NodeKind],
 * });
 * const dir = await Deno.makeTempDir();
 * const store = new Store(dir);
 * await runPlan(makePlan(exp, store), store, { reporter: new SilentReporter() });
 * import { listManifests, readManifest } from "./manifest.ts";
 * const m = readManifest(listManifests(store, "e")[0]!);
 * assert.deepEqual(m?.nodes.map((n) => [n.id, n.status]), [["a", "done"]]);
 * Deno.writeTextFileSync(`${dir}/bad.json`, "{");
 * const why: string[] = [];
 * assert.equal(readManifest(`${dir}/bad.json`, (l) => why.push(l)), null);
 * assert.equal(why.length, 1);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function readManifest(
  path: string,
  onBad?: (line: string) => void,
): Manifest | null {
  const r = readManifestChecked(path);
  if (r.manifest) return r.manifest;
  onBad?.(badManifestLine(path, r.problem));
  return null;
}

/** The one line that reports a bad manifest. */
export function badManifestLine(path: string, problem: string): string {
  return `skipped run manifest ${path}: ${problem} (repair it, or delete it if that run's results are not needed: \`cache gc\` removes nothing while it is there)`;
}

/** The newest readable manifest of an experiment (optionally skipping one run id). */
export function latestManifest(
  store: Store,
  experiment: string,
  skipRun?: string,
  onBad?: (line: string) => void,
): Manifest | null {
  const files = listManifests(store, experiment);
  for (let i = files.length - 1; i >= 0; i--) {
    const m = readManifest(files[i]!, onBad);
    if (m && m.run !== skipRun) return m;
  }
  return null;
}

/**
 * Whether run `m` ran the file with exactly `overrides` (none: the file as
 * committed; a trial run has `--set` overrides).
 */
export function ranWith(
  m: Manifest,
  overrides: readonly string[] | undefined,
): boolean {
  const a = m.overrides ?? [], b = overrides ?? [];
  return a.length === b.length && a.every((o, i) => o === b[i]);
}

/**
 * The newest readable manifest of an experiment that `accept` takes (e.g.
 * runs of the file as committed, not trial runs with `--set`).
 */
export function latestManifestWhere(
  store: Store,
  experiment: string,
  accept: (m: Manifest) => boolean,
  onBad?: (line: string) => void,
): Manifest | null {
  const files = listManifests(store, experiment);
  for (let i = files.length - 1; i >= 0; i--) {
    const m = readManifest(files[i]!, onBad);
    if (m && accept(m)) return m;
  }
  return null;
}

/** A new run id: sortable time plus pid and a random suffix. */
export function newRunId(): string {
  return `${new Date().toISOString().replace(/[:.]/g, "-")}-${Deno.pid}-${
    crypto.randomUUID().slice(0, 4)
  }`;
}
