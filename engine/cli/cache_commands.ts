/**
 * The `cache` subcommands: `export`, `import`, `gc` and `verify`, over the
 * cache's own operations in `../cache/`.
 *
 * @module
 */
import type { CommandContext } from "./commands.ts";
import { load } from "./commands.ts";
import {
  exportBundle,
  importBundle,
  type ImportOptions,
  selectBlobKeys,
  SELECTED_BLOB_BYTES,
} from "../cache/bundle.ts";
import { UserError } from "../errors.ts";
import { gc, verifyCache } from "../cache/gc.ts";
import { verifyReferences } from "../cache/verify_refs.ts";
import { computeKeys } from "../cache/keys.ts";
import { Store } from "../cache/store.ts";
import { matchesPattern } from "../compile/node_pattern.ts";

/**
 * `cache export FILE`
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import type { CommandContext } from "./commands.ts";
 * import { SilentReporter } from "../run/progress.ts";
 * const one: NodeKind<{ x: number }> = {
 *   name: "one", description: "x back", params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url, run: (p) => Promise.resolve({ value: p.x }),
 * };
 * const dir = await Deno.makeTempDir();
 * const file = `${dir}/e.yaml`;
 * Deno.writeTextFileSync(file, "experiment: e\nseed: 1\nnodes:\n  a: { kind: one, with: { x: 4 } }\n");
 * const lines: string[] = [];
 * const ctx: CommandContext = {
 *   kinds: [one as NodeKind], cache: `${dir}/cache`, reporter: new SilentReporter(),
 *   output: { out: (l) => lines.push(l), err: (l) => lines.push(`ERR ${l}`) },
 * };
 * import { runCommand } from "./commands.ts";
 * import { cacheExportCommand } from "./cache_commands.ts";
 * await runCommand(ctx, file);
 * assert.equal(await cacheExportCommand(ctx, `${dir}/results.bundle`, {}), 0);
 * assert.ok(Deno.statSync(`${dir}/results.bundle`).size > 0);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function cacheExportCommand(
  ctx: CommandContext,
  file: string,
  options: {
    jsonOnly?: boolean;
    filter?: readonly string[];
    experiments?: readonly string[];
    /** With `jsonOnly`: node id patterns (of `experiments`) whose entries' blobs go along, within {@linkcode SELECTED_BLOB_BYTES}. */
    blobsOf?: readonly string[];
    /** Write the compact format (columns, brotli). */
    compact?: boolean;
    /** `KIND:field.path` left out of those entries (exported marked imported). */
    omit?: readonly string[];
  },
): Promise<number> {
  const store = new Store(ctx.cache);
  let keys: Set<string> | undefined;
  let blobsOf: Set<string> | undefined;
  if (options.blobsOf?.length) {
    if (!options.experiments) {
      throw new UserError(
        "--blobs-of names nodes of experiments: add --experiment FILE",
      );
    }
    const wanted: string[] = [];
    for (const f of options.experiments) {
      const exp = await load(ctx, f);
      const ks = computeKeys(exp);
      for (const n of exp.nodes) {
        const k = ks[n.index]!;
        if (
          k.cacheable && options.blobsOf.some((p) => matchesPattern(n, p)) &&
          store.hasEntry(k.key)
        ) wanted.push(k.key);
      }
    }
    const sel = selectBlobKeys(store, wanted);
    blobsOf = sel.keys;
    if (sel.left.length) {
      ctx.output.err(
        `--blobs-of: ${sel.left.length} of ${wanted.length} entries left without their blobs (over ${SELECTED_BLOB_BYTES} bytes)`,
      );
    }
  }
  if (options.experiments) {
    keys = new Set();
    for (const f of options.experiments) {
      const exp = await load(ctx, f);
      const ks = computeKeys(exp);
      for (const n of exp.nodes) {
        if (
          options.filter && !options.filter.some((p) => matchesPattern(n, p))
        ) continue;
        const k = ks[n.index]!;
        if (k.cacheable && store.hasEntry(k.key)) keys.add(k.key);
      }
    }
  }
  const r = await exportBundle(store, file, {
    jsonOnly: options.jsonOnly === true,
    ...(options.filter && !options.experiments
      ? { filter: options.filter }
      : {}),
    ...(keys ? { keys } : {}),
    ...(blobsOf ? { blobsOf } : {}),
    ...(options.compact ? { compact: true } : {}),
    ...(options.omit?.length ? { omit: options.omit } : {}),
  });
  for (const m of r.missingBlobs) {
    ctx.output.err(
      `warning: entry ${m} was computed here but its blob is missing: exported as results only; \`cache verify\` checks the cache`,
    );
  }
  ctx.output.err(
    `wrote ${file}: ${r.entries} entries, ${r.blobs} blobs, ${r.aux} aux files (${r.bytes} bytes)${
      r.resultsOnly && !options.jsonOnly
        ? `; ${r.resultsOnly} entries without their blobs (imported results only), exported as results only`
        : ""
    }${
      r.omitted
        ? `; ${r.omitted} entries without ${
          options.omit!.join(", ")
        } (marked imported: never used as cached results)`
        : ""
    }`,
  );
  return 0;
}

/**
 * `cache import FILE [--trust]`
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import type { CommandContext } from "./commands.ts";
 * import { SilentReporter } from "../run/progress.ts";
 * const one: NodeKind<{ x: number }> = {
 *   name: "one", description: "x back", params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url, run: (p) => Promise.resolve({ value: p.x }),
 * };
 * const dir = await Deno.makeTempDir();
 * const file = `${dir}/e.yaml`;
 * Deno.writeTextFileSync(file, "experiment: e\nseed: 1\nnodes:\n  a: { kind: one, with: { x: 4 } }\n");
 * const lines: string[] = [];
 * const ctx: CommandContext = {
 *   kinds: [one as NodeKind], cache: `${dir}/cache`, reporter: new SilentReporter(),
 *   output: { out: (l) => lines.push(l), err: (l) => lines.push(`ERR ${l}`) },
 * };
 * import { runCommand } from "./commands.ts";
 * import { cacheExportCommand, cacheImportCommand } from "./cache_commands.ts";
 * await runCommand(ctx, file);
 * await cacheExportCommand(ctx, `${dir}/results.bundle`, {});
 * const other: CommandContext = { ...ctx, cache: `${dir}/other` };
 * assert.equal(await cacheImportCommand(other, `${dir}/results.bundle`), 0);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function cacheImportCommand(
  ctx: CommandContext,
  file: string,
  options: ImportOptions = {},
): Promise<number> {
  const store = new Store(ctx.cache);
  const r = await importBundle(store, file, {
    onProgress: (l) => ctx.output.err(l),
    ...options,
  });
  if (r.remembered !== undefined) {
    ctx.output.err(
      `${file} is already in ${store.root}: the same bundle (by sha256) was imported on ${
        r.remembered.slice(0, 19).replace("T", " ")
      } and its ${r.kept} records are all here`,
    );
    return 0;
  }
  const notes: string[] = [];
  if (r.marked > 0) {
    notes.push(
      `${r.marked} marked imported: tables and status show them as such, run computes them here${
        r.resultsOnly ? ` (${r.resultsOnly} results only, without blobs)` : ""
      }`,
    );
  }
  if (r.skippedAux > 0) {
    notes.push(
      `${r.skippedAux} aux files (LLM reply caches) not imported: use --trust to replay them`,
    );
  }
  ctx.output.err(
    `imported ${file} into ${store.root}: ${r.entries} entries, ${r.blobs} blobs, ${r.aux} aux files (${r.kept} already present)${
      notes.length ? `; ${notes.join("; ")}` : ""
    }`,
  );
  return 0;
}

/**
 * `cache gc [--dry-run] [--keep-runs N]`. When gc cannot tell which entries
 * are needed it removes nothing and throws its one line (exit 2).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import type { CommandContext } from "./commands.ts";
 * import { SilentReporter } from "../run/progress.ts";
 * const one: NodeKind<{ x: number }> = {
 *   name: "one", description: "x back", params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url, run: (p) => Promise.resolve({ value: p.x }),
 * };
 * const dir = await Deno.makeTempDir();
 * const file = `${dir}/e.yaml`;
 * Deno.writeTextFileSync(file, "experiment: e\nseed: 1\nnodes:\n  a: { kind: one, with: { x: 4 } }\n");
 * const lines: string[] = [];
 * const ctx: CommandContext = {
 *   kinds: [one as NodeKind], cache: `${dir}/cache`, reporter: new SilentReporter(),
 *   output: { out: (l) => lines.push(l), err: (l) => lines.push(`ERR ${l}`) },
 * };
 * import { runCommand } from "./commands.ts";
 * import { cacheGcCommand } from "./cache_commands.ts";
 * await runCommand(ctx, file);
 * assert.equal(await cacheGcCommand(ctx, { dryRun: true }), 0);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export async function cacheGcCommand(
  ctx: CommandContext,
  options: { dryRun?: boolean; keepRuns?: number },
): Promise<number> {
  const store = new Store(ctx.cache);
  const r = await gc(store, options);
  const verb = options.dryRun ? "would remove" : "removed";
  if (r.liveRuns.length > 0) {
    ctx.output.err(
      `kept ${r.liveRuns.length} live run${
        r.liveRuns.length === 1 ? "" : "s"
      } and their entries: ${r.liveRuns.join(", ")}`,
    );
  }
  if (options.dryRun) {
    for (const k of r.entries) ctx.output.out(`entry ${k}`);
    for (const b of r.blobs) ctx.output.out(`blob  ${b}`);
    for (const m of r.runs) ctx.output.out(`run   ${m}`);
  }
  ctx.output.err(
    `${verb} ${r.entries.length} entries, ${r.blobs.length} blobs, ${r.runs.length} manifests (${
      (r.bytes / 1e6).toFixed(2)
    } MB)${
      r.leftovers ? `, ${r.leftovers} leftovers of killed runs` : ""
    } from ${store.root}`,
  );
  return 0;
}

/**
 * `cache verify`: exit 1 when anything was corrupt.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import type { CommandContext } from "./commands.ts";
 * import { SilentReporter } from "../run/progress.ts";
 * const one: NodeKind<{ x: number }> = {
 *   name: "one", description: "x back", params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url, run: (p) => Promise.resolve({ value: p.x }),
 * };
 * const dir = await Deno.makeTempDir();
 * const file = `${dir}/e.yaml`;
 * Deno.writeTextFileSync(file, "experiment: e\nseed: 1\nnodes:\n  a: { kind: one, with: { x: 4 } }\n");
 * const lines: string[] = [];
 * const ctx: CommandContext = {
 *   kinds: [one as NodeKind], cache: `${dir}/cache`, reporter: new SilentReporter(),
 *   output: { out: (l) => lines.push(l), err: (l) => lines.push(`ERR ${l}`) },
 * };
 * import { runCommand } from "./commands.ts";
 * import { cacheVerifyCommand } from "./cache_commands.ts";
 * await runCommand(ctx, file);
 * assert.equal(await cacheVerifyCommand(ctx), 0);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function cacheVerifyCommand(ctx: CommandContext): Promise<number> {
  const store = new Store(ctx.cache);
  const checked = verifyCache(store);
  // entries and blobs that do not reference each other (any import mode)
  const refs = verifyReferences(store);
  const r = {
    ...checked,
    corrupt: [...checked.corrupt, ...refs.danglingEntries],
    stuck: [...checked.stuck, ...refs.stuck],
  };
  for (const c of r.corrupt) ctx.output.out(c);
  for (const b of refs.danglingBlobs) ctx.output.out(b);
  ctx.output.err(
    `verified ${r.entries} entries and ${r.blobs} blobs in ${store.root}: ` +
      (r.corrupt.length === 0
        ? "all intact"
        : r.stuck.length === 0
        ? `${r.corrupt.length} corrupt (moved to ${store.root}/corrupt; they will be recomputed)`
        : `${r.corrupt.length} corrupt; ${r.stuck.length} could not be moved aside (is the cache read-only?): a run on a writable cache recomputes them`) +
      (refs.danglingBlobs.length
        ? `; ${refs.danglingBlobs.length} dangling blob${
          refs.danglingBlobs.length === 1 ? "" : "s"
        } no entry references (\`cache gc\` removes them)`
        : "") +
      (r.imported
        ? ` (${r.imported} entries were imported from bundles: their files are intact, their values were computed elsewhere and cannot be checked here; tables marks them, run recomputes them)`
        : ""),
  );
  return Promise.resolve(r.corrupt.length ? 1 : 0);
}
