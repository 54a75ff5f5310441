/**
 * `tables FILE...`: builds every table of the given experiments from the
 * cache alone (never runs anything), prints markdown, writes CSV and JSON.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath as fromFileUrl } from "node:url";
import { cacheImportCommand } from "./cache_commands.ts";
import { fetchBundle, isBundleUrl } from "./bundle_url.ts";
import { type CommandContext, load, resumeCommand } from "./commands.ts";
import { CorruptEntryError, UserError } from "../errors.ts";
import { computeKeys } from "../cache/keys.ts";
import { clearDigestCache, codeDigest } from "../cache/digest.ts";
import { hashJson, sha256Hex } from "../canonical.ts";
import type { Experiment } from "../compile/experiment.ts";
import { onDisk } from "../fs_errors.ts";
import { Store } from "../cache/store.ts";
import {
  buildTable,
  type Lookup,
  type Table,
  tableCsv,
  tableMarkdown,
} from "../tables/tables.ts";
import { comparisonCsv, improvementCsv } from "../tables/table_compare.ts";
import {
  type ComparisonMemo,
  DirComparisonMemo,
  importMemoFile,
  MemoDir,
  memoFileOf,
  statisticsCodeDigest,
  writeMemoFile,
} from "../tables/comparison_memo.ts";
import { experimentWarningLines } from "../tables/result_warnings.ts";
import {
  type KeyInputs,
  keyInputsHold,
  recordKeyInputs,
} from "../tables/key_inputs.ts";
import {
  bundleIdentities,
  firstMoved,
  readShippedTables,
  SHIPPED_TABLES_FORMAT,
  type ShippedDep,
  type ShippedFile,
  type ShippedTables,
  shippedTablesFileOf,
  writeShippedTables,
} from "../tables/shipped_tables.ts";

/**
 * Imports a results bundle into the cache before tables or a report are
 * built from it (`--import`): its entries are verified and added, nothing
 * cached is overwritten. A file that does not exist is skipped with a note,
 * so a checkout without shipped results still prints what its cache holds.
 * An `http(s)://` URL is downloaded once into the cache
 * ({@linkcode fetchBundle}) and imported from there.
 */
export async function importResultsBundle(
  ctx: CommandContext,
  bundle: string,
  /** `trust`: its complete entries become cached results here (`cache import --trust`), so a run builds on them. */
  options: { trust?: boolean } = {},
): Promise<void> {
  const trust = { trust: options.trust === true };
  if (isBundleUrl(bundle)) {
    const file = await fetchBundle(bundle, ctx.cache, {
      onProgress: (l) => ctx.output.err(l),
    });
    await cacheImportCommand(ctx, file, trust);
    return;
  }
  if (existsSync(bundle)) await cacheImportCommand(ctx, bundle, trust);
  else ctx.output.err(`no results bundle at ${bundle}; using the cache only`);
  // The comparisons shipped beside the bundle (computed from its entries),
  // so its tables need not be resampled here.
  const memoFile = memoFileOf(bundle);
  if (!existsSync(memoFile)) return;
  try {
    const r = importMemoFile(
      memoFile,
      cacheComparisonMemo(new Store(ctx.cache)),
    );
    if (r.added > 0) {
      ctx.output.err(
        `added ${r.added} of ${r.total} table comparisons of ${memoFile} to the cache's memo${
          r.code !== statisticsCodeDigest()
            ? " (computed by other statistics code: tables will compute theirs)"
            : ""
        }`,
      );
    }
  } catch (e) {
    ctx.output.err(
      `warning: ${memoFile} not used (${
        (e as Error).message.split("\n")[0]
      }): comparisons are computed here`,
    );
  }
}

/** Default directory of table files. */
export const DEFAULT_TABLES_DIR = ".envsmith/tables";

/** Experiment files with a `tables:` key in `dir` (a project's experiments folder). */
export function experimentsWithTables(dir: string): string[] {
  let names: string[];
  try {
    names = [...Deno.readDirSync(dir)].filter((e) =>
      e.isFile && /\.ya?ml$/.test(e.name)
    ).map((e) => e.name).sort();
  } catch {
    return [];
  }
  return names.map((n) => join(dir, n)).filter((f) =>
    /^tables\s*:/m.test(Deno.readTextFileSync(f))
  );
}

/**
 * The nodes of an experiment cannot be keyed on this machine: a kind's
 * `fingerprint` refused (say, an environment it needs is missing).
 */
export class UnkeyableExperimentError extends UserError {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "UnkeyableExperimentError";
  }
}

/** The keys of `exp`'s nodes; a kind's refusal as {@linkcode UnkeyableExperimentError}. */
function _keysOf(exp: Experiment): ReturnType<typeof computeKeys> {
  try {
    return computeKeys(exp);
  } catch (e) {
    if (e instanceof UserError) throw new UnkeyableExperimentError(e.message);
    throw e;
  }
}

/**
 * Why the nodes of `file` cannot be keyed on this machine (a kind's
 * `fingerprint` refused, e.g. an environment it needs is missing), or
 * undefined when they can. Errors in the file itself are thrown as usual.
 */
export async function unkeyableReason(
  ctx: CommandContext,
  file: string,
): Promise<string | undefined> {
  const exp = await load(ctx, file);
  try {
    _keysOf(exp);
    return undefined;
  } catch (e) {
    if (e instanceof UnkeyableExperimentError) return e.message;
    throw e;
  }
}

/**
 * The cache's memo of table comparisons (`CACHE/comparisons/`), so a
 * comparison whose inputs did not change is not resampled again.
 */
export function cacheComparisonMemo(store: Store): DirComparisonMemo {
  return new DirComparisonMemo(
    join(store.root, "comparisons"),
    (p) => store.tmpPath(p),
  );
}

/**
 * Builds the tables of one experiment file; comparisons go through `memo`
 * (default: the cache's, {@linkcode cacheComparisonMemo}).
 */
export async function buildTables(
  ctx: CommandContext,
  file: string,
  memo?: ComparisonMemo,
): Promise<Table[]> {
  return (await _buildTablesOf(ctx, file, memo)).tables;
}

/** {@linkcode buildTables}, with the experiment and its keys. */
// Long by design: the steps share the file's one read per node and the memo; split, each would pass both along.
async function _buildTablesOf(
  ctx: CommandContext,
  file: string,
  memo?: ComparisonMemo,
  /** Whether whole tables may be served from the cache's table memo (not when the comparisons used are collected). */
  tableMemo = true,
): Promise<
  {
    exp: Experiment;
    keys: ReturnType<typeof computeKeys>;
    tables: Table[];
    /** Per table, the node indices it read. */
    reads: number[][];
  }
> {
  const exp = await load(ctx, file);
  const store = new Store(ctx.cache);
  const keys = _keysOf(exp);
  const imported = store.importedKeys();
  const options = {
    memo: memo ?? cacheComparisonMemo(store),
    // the only part of a table that takes more than a moment
    onCompare: (table: string, resamples: number) =>
      ctx.output.err(
        `${file}: resampling table ${table} (${
          resamples.toLocaleString("en")
        } resamples, seconds to a minute; remembered for the next call)…`,
      ),
  };
  // One read per node for all the tables of the file (several tables
  // often read the same nodes, whose entries can be large).
  const looked = new Map<number, ReturnType<Lookup>>();
  const lookup: Lookup = (node) => {
    let r = looked.get(node.index);
    if (r === undefined) {
      r = _lookup(node);
      looked.set(node.index, r);
    }
    return r;
  };
  const _lookup: Lookup = (node) => {
    if (node.skipped) return { status: "skipped", why: node.skipped };
    const k = keys[node.index]!;
    if (!k.cacheable) {
      return { status: "missing", why: `not cacheable: ${k.reason}` };
    }
    try {
      const e = store.readEntry(k.key);
      if (!e) {
        return { status: "missing" };
      }
      return {
        status: "ok",
        value: e.value,
        key: k.key,
        created: e.created,
        ...(e.report !== undefined ? { report: e.report } : {}),
        ...(imported.has(k.key) ? { imported: true } : {}),
      };
    } catch (e) {
      if (e instanceof CorruptEntryError) {
        return { status: "missing", why: e.message };
      }
      throw e;
    }
  };
  // A table whose inputs (the file, the spec, every node it read, by key
  // and state, and the code) are as when it was last built is not built
  // again: reading hundreds of large entries is most of its cost.
  const tablesMemo = new MemoDir(
    join(store.root, "comparisons", "tables"),
    (p) => store.tmpPath(p),
  );
  const stateOf = (index: number): string => {
    const node = exp.nodes[index]!;
    if (node.skipped) return `skipped: ${node.skipped}`;
    const k = keys[index]!;
    if (!k.cacheable) return `uncacheable: ${k.reason}`;
    if (!store.hasEntry(k.key)) return "missing";
    return `${imported.has(k.key) ? "imported" : "ok"} ${k.key}`;
  };
  const lookedState = (r: ReturnType<Lookup>, index: number): string =>
    r.status === "ok"
      ? `${r.imported ? "imported" : "ok"} ${keys[index]!.key}`
      : r.status === "skipped"
      ? `skipped: ${r.why}`
      : r.why?.startsWith("not cacheable: ")
      ? `uncacheable: ${r.why.slice(15)}`
      : r.why === undefined
      ? "missing"
      : "corrupt"; // never matches a state: built again next time
  const base = tableMemo ? _tableMemoBase(exp, file) : null;
  const reads: number[][] = [];
  const tables = exp.tables.map((spec) => {
    const mkey = base === null ? null : hashJson({ ...base, spec });
    const hit = mkey === null ? undefined : tablesMemo.get(mkey) as
      | { deps?: [number, string][]; table?: Table }
      | undefined;
    if (
      hit?.table && Array.isArray(hit.deps) &&
      hit.deps.every(([i, st]) =>
        exp.nodes[i] !== undefined && stateOf(i) === st
      )
    ) {
      reads.push(hit.deps.map(([i]) => i));
      return hit.table;
    }
    const read = new Set<number>();
    const recording: Lookup = (node) => {
      read.add(node.index);
      return lookup(node);
    };
    const table = _buildOne(spec, recording);
    reads.push([...read].sort((a, b) => a - b));
    if (mkey !== null) {
      const deps = [...read].sort((a, b) => a - b).map((
        i,
      ) => [i, lookedState(looked.get(i)!, i)]);
      tablesMemo.set(mkey, { deps, table });
    }
    return table;
  });
  return { exp, keys, tables, reads };

  function _buildOne(
    spec: Experiment["tables"][number],
    lookup: Lookup,
  ): Table {
    return buildTable(exp, spec, lookup, (ids) => {
      // Whole plain ids when every variant is missing; exact ids when they
      // are few; else the whole file (a run computes only what is missing),
      // not a command line of hundreds of ids.
      const plain = exp.nodes.find((n) => n.id === ids[0])?.plain;
      const all = plain
        ? exp.nodes.filter((n) => n.plain === plain && !n.skipped).map((n) =>
          n.id
        )
        : [];
      const allMissing = plain !== undefined && all.every((id) =>
        ids.includes(id)
      ) && ids.every((id) => all.includes(id));
      if (allMissing) return resumeCommand(file, [plain!]);
      return resumeCommand(file, ids.length > MAX_LISTED_IDS ? [] : ids);
    }, options);
  }
}

/**
 * What every table memo key of `exp` holds besides its spec: the file's
 * text, its overrides, and the digest of the code that builds tables (this
 * module's graph); null when the code cannot be digested.
 */
function _tableMemoBase(
  exp: Experiment,
  file: string,
): Record<string, unknown> | null {
  let code: string, text: string;
  try {
    code = codeDigest(import.meta.url).digest;
    text = Deno.readTextFileSync(file);
  } catch {
    return null;
  }
  return {
    format: "envsmith-table-memo 1",
    code,
    file,
    text: sha256Hex(text),
    overrides: exp.overrides ?? [],
  };
}

/** Above this many missing nodes, the suggested command runs the whole file. */
const MAX_LISTED_IDS = 12;

/**
 * `tables [FILE...] [--out DIR] [--wide]`: returns 0 when complete, 1 when
 * cells are missing. Without files, an experiment whose nodes cannot be keyed
 * here is skipped with one line saying why. Without `wide`, tables with an aggregate column print
 * the aggregates and a compact comparison summary (under 120 columns); the
 * per-suite numbers go to the CSV.
 *
 * Long by design: the per-file loop with its skip rules and outputs, in output order.
 */
export async function tablesCommand(
  ctx: CommandContext,
  files: readonly string[],
  options: {
    out?: string;
    /** Every column in the terminal, not only the compact summary. */
    wide?: boolean;
    /** Where to look for experiment files with tables when `files` is empty. */
    experimentsDir?: string;
    /**
     * Also write every comparison these tables used to this file (gzip
     * JSON), to ship beside a results bundle (`X.memo.json.gz` beside
     * `X.esb.gz`). With `imports`, the tables are built in a fresh
     * temporary cache holding only those bundles (what a fresh clone
     * prints), and their outputs go to the shipped tables memo
     * ({@linkcode shippedTablesFileOf} of this path).
     */
    memoOut?: string;
    /**
     * Results bundles to import first (`--import`). When the shipped
     * tables memo beside the first matches them (same bytes) and every key
     * a file's tables read, that file is printed from it without importing;
     * otherwise the bundles are imported (once) and the tables built.
     */
    imports?: readonly string[];
  },
): Promise<number> {
  const imports = options.imports ?? [];
  if (options.memoOut !== undefined && imports.length > 0) {
    return await _withFreshCache(
      ctx,
      (fresh) =>
        _tablesCommand(
          fresh,
          files,
          options,
          imports,
          cacheComparisonMemo(new Store(ctx.cache)),
        ),
    );
  }
  return await _tablesCommand(ctx, files, options, imports);
}

/** Runs `f` with a context whose cache is a new temporary directory, removed afterwards. */
async function _withFreshCache<T>(
  ctx: CommandContext,
  f: (fresh: CommandContext) => Promise<T>,
): Promise<T> {
  const store = new Store(ctx.cache);
  const dir = store.tmpPath("memo-out-cache");
  Deno.mkdirSync(dir, { recursive: true });
  ctx.output.err(
    `building the tables in a fresh cache holding only the imported bundles (what a fresh clone prints), for the shipped tables memo…`,
  );
  try {
    return await f({ ...ctx, cache: dir });
  } finally {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch { /* left in tmp/, which gc clears */ }
  }
}

/** {@linkcode tablesCommand} after the choice of cache. */
// Long by design: the per-file loop with its skip rules, the shipped memo and the outputs, in output order.
async function _tablesCommand(
  ctx: CommandContext,
  files: readonly string[],
  options: Parameters<typeof tablesCommand>[2],
  imports: readonly string[],
  comparisons?: DirComparisonMemo,
): Promise<number> {
  const dir = options.experimentsDir;
  const list = files.length > 0
    ? [...files]
    : dir === undefined
    ? []
    : experimentsWithTables(dir);
  if (list.length === 0) {
    throw new UserError(
      dir === undefined
        ? "tables: no experiment file given"
        : `tables: no experiment file given and no ${dir}/*.yaml has tables`,
    );
  }
  const out = options.out ?? DEFAULT_TABLES_DIR;
  const memo = comparisons ?? cacheComparisonMemo(new Store(ctx.cache));
  const writing = options.memoOut !== undefined && imports.length > 0;
  const shipped = writing ? null : _shippedTables(ctx, imports);
  const recorded: Record<string, ShippedFile> = {};
  let imported = false, served = 0;
  const importAll = async () => {
    if (imported) return;
    imported = true;
    for (const b of imports) await importResultsBundle(ctx, b);
  };
  if (shipped === null && !writing) await importAll();
  else if (shipped !== null) {
    // a few seconds for many experiments: said before it starts
    ctx.output.err(
      `printing the tables from ${shipped.path}: checking the keys of ${list.length} experiment file${
        list.length > 1 ? "s" : ""
      } against it (the bundles are imported only if one moved)…`,
    );
  }
  let incomplete = false;
  let count = 0;
  for (const file of list) {
    // Without files, every experiment with tables: one that cannot be keyed
    // here (say, it needs an environment this machine lacks) is skipped with
    // its reason; named, it is refused like any other command would.
    let tables: Table[];
    let exp: Experiment | undefined;
    let keys: ReturnType<typeof computeKeys> | undefined;
    let warnings: string[] | undefined;
    try {
      const fromMemo = shipped === null || imported
        ? null
        : await _servedFromShipped(ctx, file, shipped.memo, shipped.path);
      if (fromMemo !== null) {
        ({ tables, warnings } = fromMemo);
        served += tables.length;
      } else {
        if (writing) {
          // the bundles first, then the tables of a fresh clone
          await importAll();
        } else if (shipped !== null && !imported) {
          await importAll();
        }
        const inputs = writing ? await _recordInputs(ctx, file) : null;
        let reads: number[][];
        ({ tables, exp, keys, reads } = await _buildTablesOf(
          ctx,
          file,
          memo,
          options.memoOut === undefined,
        ));
        if (writing) {
          recorded[file] = {
            ..._record(ctx, file, exp, keys, tables, reads),
            ...(inputs !== null ? { inputs } : {}),
          };
          warnings = recorded[file]!.warnings;
        }
      }
    } catch (e) {
      if (files.length > 0 || !(e instanceof UnkeyableExperimentError)) throw e;
      ctx.output.err(`skipped ${file}: ${e.message}`);
      continue;
    }
    if (tables.length === 0 && files.length > 0) {
      ctx.output.err(`${file} has no tables`);
    }
    for (const t of tables) {
      count++;
      ctx.output.out(
        tableMarkdown(t, { wide: options.wide ?? false, csvDir: out }),
      );
      for (const u of t.unmatched ?? []) {
        ctx.output.err(`warning: table ${t.name}: ${u}`);
      }
      _writeOut(out, `${t.name}.csv`, tableCsv(t));
      if (t.comparison) {
        _writeOut(out, `${t.name}.compare.csv`, comparisonCsv(t.comparison));
        if (t.comparison.improvement) {
          _writeOut(
            out,
            `${t.name}.improvement.csv`,
            improvementCsv(t.comparison),
          );
        }
      }
      _writeOut(out, `${t.name}.json`, JSON.stringify(t, null, 2) + "\n");
      if (t.missing.length) incomplete = true;
    }
    if (tables.length > 0) {
      for (
        const w of warnings ??
          experimentWarningLines(exp!, new Store(ctx.cache), keys!)
      ) {
        ctx.output.out(w + "\n");
      }
    }
  }
  if (count > 0) {
    ctx.output.err(
      `wrote ${count} table${count > 1 ? "s" : ""} (CSV and JSON) to ${out}/`,
    );
  }
  if (options.memoOut !== undefined) {
    const n = onDisk(
      options.memoOut,
      "write",
      () => writeMemoFile(options.memoOut!, memo.used),
    );
    ctx.output.err(`wrote ${n} table comparisons to ${options.memoOut}`);
  }
  if (writing) {
    const path = shippedTablesFileOf(options.memoOut!);
    const n = onDisk(path, "write", () =>
      writeShippedTables(path, {
        format: SHIPPED_TABLES_FORMAT,
        bundles: bundleIdentities(imports),
        files: recorded,
      }));
    ctx.output.err(
      `wrote ${n} tables of ${
        Object.keys(recorded).length
      } experiment files to ${path} (printed without importing ${
        imports.join(" and ")
      } while they match)`,
    );
  }
  if (served > 0) {
    ctx.output.err(
      `${served} table${served > 1 ? "s" : ""} printed from ${
        shipped!.path
      } without importing ${imports.join(" and ")}${
        imported ? " (the rest after importing them)" : ""
      }`,
    );
  }
  return incomplete ? 1 : 0;
}

/** Writes a table file; a full, read-only or forbidden directory is one line naming it and --out. */
function _writeOut(dir: string, name: string, text: string): void {
  const path = join(dir, name);
  onDisk(
    path,
    "write",
    () => {
      Deno.mkdirSync(dir, { recursive: true });
      Deno.writeTextFileSync(path, text);
    },
    (problem) =>
      problem === "full"
        ? "Free some space, or write the tables elsewhere with --out DIR."
        : "Write the tables elsewhere with --out DIR.",
  );
}

/** The shipped tables memo beside the first import when it was built from these bundles (same bytes), else null (and one line why, when there is one). */
function _shippedTables(
  ctx: CommandContext,
  imports: readonly string[],
): { path: string; memo: ShippedTables } | null {
  if (imports.length === 0 || imports.some((b) => isBundleUrl(b))) return null;
  const path = shippedTablesFileOf(imports[0]!);
  if (!existsSync(path)) return null;
  let memo: ShippedTables;
  try {
    memo = readShippedTables(path);
  } catch (e) {
    ctx.output.err(`warning: ${(e as Error).message}; importing the bundles`);
    return null;
  }
  let now: { name: string; sha256: string }[];
  try {
    now = bundleIdentities(imports.filter((b) => existsSync(b)));
  } catch {
    return null;
  }
  const same = now.length === memo.bundles.length &&
    now.every((b, i) =>
      b.name === memo.bundles[i]!.name && b.sha256 === memo.bundles[i]!.sha256
    );
  if (!same) {
    ctx.output.err(
      `${path} was built from other bundles than ${
        imports.join(" and ")
      } (sha256 differs): importing them`,
    );
    return null;
  }
  return { path, memo };
}

/**
 * Whether the store has an entry, asking the file system once per shard
 * directory that does not exist (a fresh clone's cache has none: thousands
 * of failed lookups otherwise).
 */
function _entryProbe(store: Store): (key: string) => boolean {
  const shards = new Map<string, boolean>();
  return (key) => {
    const shard = dirname(store.entryPath(key));
    let there = shards.get(shard);
    if (there === undefined) shards.set(shard, there = existsSync(shard));
    return there && store.hasEntry(key);
  };
}

/** A node's state here without the bundles (see {@linkcode depHolds}). */
function _stateNow(
  exp: Experiment,
  keys: ReturnType<typeof computeKeys>,
  has: (key: string) => boolean,
  importedKeys: () => Set<string>,
  index: number,
): string | undefined {
  const node = exp.nodes[index];
  if (node === undefined) return undefined;
  if (node.skipped) return `skipped: ${node.skipped}`;
  const k = keys[index]!;
  if (!k.cacheable) return `uncacheable: ${k.reason}`;
  return _keyState(k.key, has, importedKeys);
}

/** A cacheable node's state by its key: `absent`, `imported` or `ok` (computed here). */
function _keyState(
  key: string,
  has: (key: string) => boolean,
  importedKeys: () => Set<string>,
): string {
  if (!has(key)) return `absent ${key}`;
  return `${importedKeys().has(key) ? "imported" : "ok"} ${key}`;
}

/** The tables and warnings of `file` from the shipped memo when every table and every dep matches; else null, with one line why. */
async function _servedFromShipped(
  ctx: CommandContext,
  file: string,
  memo: ShippedTables,
  path: string,
): Promise<{ tables: Table[]; warnings: string[] } | null> {
  const entry = memo.files[file];
  const same = entry?.inputs !== undefined &&
    _keyInputsHere(ctx, file, entry.inputs);
  if (same) {
    const served = _servedByRecordedKeys(ctx, entry);
    if (served !== null) return served;
  }
  // Keyed first: a file that cannot be keyed here is skipped either way.
  const exp = await load(ctx, file);
  const keys = _keysOf(exp);
  if (entry === undefined) {
    ctx.output.err(`${path} has no tables of ${file}: importing the bundles`);
    return null;
  }
  const base = _tableMemoBase(exp, file);
  if (base === null || entry.tables.length !== exp.tables.length) {
    ctx.output.err(
      `${path} does not hold ${file}'s tables as they are now: importing the bundles`,
    );
    return null;
  }
  const store = new Store(ctx.cache);
  const has = _entryProbe(store);
  let marks: Set<string> | undefined;
  const state = (i: number) =>
    _stateNow(exp, keys, has, () => marks ??= store.importedKeys(), i);
  const tables: Table[] = [];
  for (const [j, spec] of exp.tables.entries()) {
    const t = entry.tables[j]!;
    if (t.key !== hashJson({ ...base, spec })) {
      ctx.output.err(
        `${path}: table ${spec.name} of ${file} changed (its spec, the file or the tables code): importing the bundles`,
      );
      return null;
    }
    const moved = firstMoved(t.deps, state);
    if (moved !== -1) {
      ctx.output.err(
        `${path}: table ${spec.name} of ${file} read ${
          exp.nodes[moved]?.id ?? `node ${moved}`
        }, whose key or state moved since: importing the bundles`,
      );
      return null;
    }
    tables.push(t.table);
  }
  if (firstMoved(entry.warningDeps, state) !== -1) {
    ctx.output.err(
      `${path}: the results ${file}'s warnings read moved: importing the bundles`,
    );
    return null;
  }
  return { tables, warnings: entry.warnings };
}

/** The options a file is loaded with that its keys depend on: overrides, limits and the registered kinds (name and module, relative to the program root). */
function _loadOptions(ctx: CommandContext, root: string): string | null {
  const kinds: [string, string][] = [];
  for (const k of ctx.kinds) {
    if (!k.module.startsWith("file:")) return null;
    const rel = relative(root, fromFileUrl(k.module)).replaceAll("\\", "/");
    if (rel.startsWith("..")) return null;
    kinds.push([k.name, rel]);
  }
  kinds.sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
  return JSON.stringify({
    overrides: ctx.overrides ?? [],
    limits: ctx.limits ?? {},
    kinds,
  });
}

/** The program's root: the directory of the main module (`cli.ts`), or null when it is not a file. */
function _programRoot(): string | null {
  return Deno.mainModule.startsWith("file:")
    ? dirname(fromFileUrl(Deno.mainModule))
    : null;
}

/**
 * The program root and load options the key inputs of this command are
 * recorded and checked with; null when they cannot cover its keys (no
 * program file, plugins from the command line, a kind outside the root).
 */
function _inputsBasis(
  ctx: CommandContext,
): { root: string; options: string } | null {
  const root = ctx.programRoot ?? _programRoot();
  if (root === null || (ctx.plugins?.length ?? 0) > 0) return null;
  const options = _loadOptions(ctx, root);
  return options === null ? null : { root, options };
}

/** Whether `file` would be compiled and keyed here exactly as when `inputs` were recorded. */
function _keyInputsHere(
  ctx: CommandContext,
  file: string,
  inputs: KeyInputs,
): boolean {
  const basis = _inputsBasis(ctx);
  return basis !== null &&
    keyInputsHold(inputs, basis.root, file, basis.options);
}

/**
 * Compiles and keys `file` (through `load`, which remembers it for the
 * build that follows) while recording what the keys were computed from;
 * null when the record cannot cover them (see {@linkcode _inputsBasis},
 * a file that loads plugins, a directory read outside the source).
 */
async function _recordInputs(
  ctx: CommandContext,
  file: string,
): Promise<KeyInputs | null> {
  const basis = _inputsBasis(ctx);
  if (basis === null) return null;
  clearDigestCache(); // each file's record sees every read its keys make
  const { value: exp, inputs } = await recordKeyInputs(
    basis.root,
    file,
    basis.options,
    async () => {
      const exp = await load(ctx, file);
      _keysOf(exp);
      return exp;
    },
  );
  return (exp.plugins?.modules.length ?? 0) > 0 ? null : inputs;
}

/**
 * The tables and warnings of `file` from the memo by its recorded keys
 * (its inputs hold, so compiling would give the same keys), each dep's
 * state read from the local cache by the key the memo recorded; null when
 * one moved (the compiling path then names it).
 */
function _servedByRecordedKeys(
  ctx: CommandContext,
  entry: ShippedFile,
): { tables: Table[]; warnings: string[] } | null {
  const store = new Store(ctx.cache);
  const has = _entryProbe(store);
  let marks: Set<string> | undefined;
  const importedKeys = () => marks ??= store.importedKeys();
  const recorded = new Map<number, string>(
    [...entry.tables.flatMap((t) => t.deps), ...entry.warningDeps],
  );
  const state = (i: number): string | undefined => {
    const st = recorded.get(i);
    const key = st === undefined
      ? undefined
      : /^(?:imported|ok|absent) (.+)$/.exec(st)?.[1];
    return key === undefined ? st : _keyState(key, has, importedKeys);
  };
  const moved = entry.tables.some((t) => firstMoved(t.deps, state) !== -1) ||
    firstMoved(entry.warningDeps, state) !== -1;
  return moved
    ? null
    : { tables: entry.tables.map((t) => t.table), warnings: entry.warnings };
}

/** What the shipped memo holds of one file built in a fresh cache with the bundles. */
function _record(
  ctx: CommandContext,
  file: string,
  exp: Experiment,
  keys: ReturnType<typeof computeKeys>,
  tables: Table[],
  reads: number[][],
): ShippedFile {
  const store = new Store(ctx.cache);
  const marks = store.importedKeys();
  const state = (i: number): string =>
    _stateNow(exp, keys, (k) => store.hasEntry(k), () => marks, i)!;
  const base = _tableMemoBase(exp, file) ?? {};
  const read = new Set<number>();
  const warnings = experimentWarningLines(
    exp,
    store,
    keys,
    (n) => read.add(n.index),
  );
  const deps = (is: Iterable<number>): ShippedDep[] =>
    [...is].sort((a, b) => a - b).map((i) => [i, state(i)]);
  return {
    tables: exp.tables.map((spec, j) => ({
      key: hashJson({ ...base, spec }),
      deps: deps(reads[j] ?? []),
      table: tables[j]!,
    })),
    warnings,
    warningDeps: deps(read),
  };
}
