/**
 * Run manifests: per run of an experiment, every node's id, key, status,
 * timings and output location, plus the key components (so a later `plan`
 * can explain what changed). Stored in `CACHE/runs/<experiment>/`.
 *
 * @module
 */
import { join } from "node:path";
import type { KeyComponents } from "./keys.ts";
import { writeAtomic } from "./atomic_write.ts";
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

/** Manifest file paths of an experiment (or of all experiments), oldest first. */
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
        if (f.isFile && f.name.endsWith(".json") && !f.name.startsWith(".")) {
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

/** Reads a manifest; `null` if unreadable (e.g. truncated by a crash). */
export function readManifest(path: string): Manifest | null {
  try {
    return JSON.parse(Deno.readTextFileSync(path)) as Manifest;
  } catch {
    return null;
  }
}

/** The newest readable manifest of an experiment (optionally skipping one run id). */
export function latestManifest(
  store: Store,
  experiment: string,
  skipRun?: string,
): Manifest | null {
  const files = listManifests(store, experiment);
  for (let i = files.length - 1; i >= 0; i--) {
    const m = readManifest(files[i]!);
    if (m && m.run !== skipRun) return m;
  }
  return null;
}

/** A new run id: sortable time plus pid and a random suffix. */
export function newRunId(): string {
  return `${new Date().toISOString().replace(/[:.]/g, "-")}-${Deno.pid}-${
    crypto.randomUUID().slice(0, 4)
  }`;
}
