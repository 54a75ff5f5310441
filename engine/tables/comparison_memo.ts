/**
 * Comparisons remembered by their inputs. A table's comparison (the
 * crossed bootstrap, the tests, the intervals) is a pure function of the
 * compared cells, the per-instance records of the nodes they come from,
 * the `compare:` spec and the statistics code; 10,000 resamples of a
 * 14-row, 20-seed, 8-suite table cost seconds, so its result is stored
 * under the sha256 of those inputs (the nodes by their content keys, the
 * code by the digest of the statistics modules) and reused while they are
 * the same. Any change (a node recomputed under another key, an edited
 * statistics module, another resample count) is another key, so a stale
 * result is never used.
 *
 * @module
 */
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { canonicalJson, sha256Hex } from "../canonical.ts";
import { codeDigest } from "../cache/digest.ts";
import { writeAtomic } from "../cache/atomic_write.ts";
import type { TableCompare } from "../compile/experiment_schema.ts";
import { DEFAULT_RESAMPLES } from "../compile/table_spec.ts";
import type { Experiment } from "../compile/experiment.ts";
import {
  type ComparedTable,
  compareRows,
  type Comparison,
  type ValueOf,
} from "./table_compare.ts";

/** Where remembered comparisons are looked up and stored. */
export interface ComparisonMemo {
  /** The comparison stored under `key`, if any. */
  get(key: string): Comparison | undefined;
  /** Stores a comparison (best effort: a failure only costs the next call time). */
  set(key: string, comparison: Comparison): void;
}

/** Format of the memo's key and files. */
const _FORMAT = "envsmith-comparison-memo 1";

let _code: string | null | undefined;

/**
 * The digest of the statistics code: the module graph of
 * `table_compare.ts` within `engine/tables/` (the `compile/` files it
 * reaches give types, the schema and the default resample count, which
 * the key holds resolved). Null when the code cannot be digested (not
 * local files): then nothing is remembered.
 */
export function statisticsCodeDigest(): string | null {
  if (_code !== undefined) return _code;
  try {
    const d = codeDigest(new URL("./table_compare.ts", import.meta.url).href);
    const files = Object.entries(d.files).filter(([f]) =>
      /(^|\/)tables\/[^/]+$/.test(f)
    ).map(([f, h]) => [f.replace(/^.*\/?tables\//, "tables/"), h]);
    _code = sha256Hex(canonicalJson({ files, packages: d.packages }));
  } catch {
    _code = null;
  }
  return _code;
}

/**
 * The memo key of a comparison: sha256 of its inputs, or undefined when a
 * compared value has no content key (then it is computed every time).
 *
 * @param keyOf The content key of the node with this id, if it has one.
 */
export function comparisonMemoKey(
  spec: TableCompare,
  pairedBy: string,
  table: ComparedTable,
  keyOf: (id: string) => string | undefined,
): string | undefined {
  const code = statisticsCodeDigest();
  if (code === null) return undefined;
  const cells: unknown[] = [];
  for (const c of table.cells) {
    const samples: unknown[] = [];
    for (const s of c.samples) {
      const key = s.id === "" ? "" : keyOf(s.id);
      if (key === undefined && s.value !== null) return undefined;
      samples.push([s.over, s.id, _num(s.value), key ?? null]);
    }
    cells.push([c.row, c.column, samples]);
  }
  return sha256Hex(canonicalJson({
    format: _FORMAT,
    code,
    spec: { ...spec, resamples: spec.resamples ?? DEFAULT_RESAMPLES },
    pairedBy,
    rows: table.rows,
    columns: table.columns,
    aggregate: table.aggregate ?? null,
    iqm: table.iqm ?? null,
    over: table.over ?? null,
    cells,
  }));
}

/**
 * {@linkcode compareRows}, through `memo` when the inputs have a key: a
 * remembered comparison is returned as computed (its `imported` mark is
 * the table's own), a new one is stored.
 */
export function memoizedCompareRows(
  exp: Experiment,
  table: ComparedTable,
  spec: TableCompare,
  pairedBy: string,
  valueOf: ValueOf,
  keyOf: (id: string) => string | undefined,
  memo: ComparisonMemo | undefined,
  onCompute?: () => void,
): Comparison {
  const key = memo
    ? comparisonMemoKey(spec, pairedBy, table, keyOf)
    : undefined;
  const hit = key === undefined ? undefined : memo!.get(key);
  if (hit) {
    const { imported: _, ...rest } = hit;
    const compared = new Set([hit.against, ...hit.rows]);
    const imported = table.cells.some((c) =>
      compared.has(c.row) && c.samples.some((x) => x.imported)
    );
    return imported ? { imported: true, ...rest } : rest;
  }
  onCompute?.();
  const c = compareRows(exp, table, spec, pairedBy, valueOf);
  if (key !== undefined) {
    const { imported: _, ...rest } = c;
    memo!.set(key, rest);
  }
  return c;
}

function _num(x: number | null): number | string | null {
  return x === null || Number.isFinite(x) && !Object.is(x, -0) ? x : String(x);
}

/**
 * JSON that keeps every number as it was: NaN, ±Infinity and -0 (which
 * JSON would turn into null and 0) are written as `{"$n": "NaN"}`.
 */
export function memoJson(value: unknown): string {
  return JSON.stringify(
    value,
    (_k, v) =>
      typeof v === "number" && (!Number.isFinite(v) || Object.is(v, -0))
        ? { $n: Object.is(v, -0) ? "-0" : String(v) }
        : v,
  );
}

/** Parses {@linkcode memoJson}. */
export function parseMemoJson(text: string): unknown {
  return JSON.parse(
    text,
    (_k, v) =>
      v !== null && typeof v === "object" && !Array.isArray(v) &&
        Object.keys(v).length === 1 && typeof v.$n === "string"
        ? Number(v.$n)
        : v,
  );
}

/** Whether a parsed value has the shape of a comparison. */
function _isComparison(x: unknown): x is Comparison {
  return x !== null && typeof x === "object" &&
    Array.isArray((x as Comparison).cells) &&
    Array.isArray((x as Comparison).rows) &&
    typeof (x as Comparison).against === "string";
}

/**
 * A directory of JSON values by key (`DIR/<key>.json`, written with
 * {@linkcode memoJson}). Reads that fail are misses; writes that fail (a
 * read-only cache) are skipped.
 */
export class MemoDir {
  readonly #dir: string;
  readonly #tmp: (prefix: string) => string;

  /**
   * @param dir The directory of the memo files.
   * @param tmp A temporary path on the same file system, for atomic writes.
   */
  constructor(dir: string, tmp: (prefix: string) => string) {
    this.#dir = dir;
    this.#tmp = tmp;
  }

  /** The value stored under `key`, or undefined. */
  get(key: string): unknown {
    try {
      return parseMemoJson(
        Deno.readTextFileSync(join(this.#dir, `${key}.json`)),
      );
    } catch {
      return undefined;
    }
  }

  /** Stores a value (best effort). */
  set(key: string, value: unknown): void {
    try {
      Deno.mkdirSync(this.#dir, { recursive: true });
      writeAtomic(
        join(this.#dir, `${key}.json`),
        this.#tmp("memo"),
        memoJson(value),
        "remember a table",
      );
    } catch { /* not remembered: computed again next time */ }
  }

  /** Whether `key` is stored. */
  has(key: string): boolean {
    try {
      return Deno.statSync(join(this.#dir, `${key}.json`)).isFile;
    } catch {
      return false;
    }
  }
}

/**
 * The comparison memo of a cache (`ROOT/comparisons/<key>.json`). Records
 * the keys it served or stored (`used`), for {@linkcode writeMemoFile}.
 */
export class DirComparisonMemo implements ComparisonMemo {
  /** Keys served or stored, with their comparisons. */
  readonly used: Map<string, Comparison> = new Map();
  readonly #dir: MemoDir;

  /**
   * @param dir The directory of the memo files.
   * @param tmp A temporary path on the same file system, for atomic writes.
   */
  constructor(dir: string, tmp: (prefix: string) => string) {
    this.#dir = new MemoDir(dir, tmp);
  }

  /** The comparison stored under `key`, if any. */
  get(key: string): Comparison | undefined {
    const x = this.#dir.get(key);
    if (!_isComparison(x)) return undefined;
    this.used.set(key, x);
    return x;
  }

  /** Stores a comparison (best effort). */
  set(key: string, comparison: Comparison): void {
    this.used.set(key, comparison);
    this.#dir.set(key, comparison);
  }

  /** Whether `key` is stored. */
  has(key: string): boolean {
    return this.#dir.has(key);
  }
}

/** What a memo file holds: gzip-compressed JSON. */
interface _MemoFile {
  readonly format: string;
  /** {@linkcode statisticsCodeDigest} of the code that computed them. */
  readonly code: string | null;
  readonly comparisons: Record<string, Comparison>;
}

/**
 * Writes comparisons to a file to ship beside a results bundle (gzip JSON,
 * keys sorted, so the same comparisons give the same bytes).
 */
export function writeMemoFile(
  path: string,
  comparisons: ReadonlyMap<string, Comparison>,
): number {
  const sorted: Record<string, Comparison> = {};
  for (const k of [...comparisons.keys()].sort()) {
    sorted[k] = comparisons.get(k)!;
  }
  const file: _MemoFile = {
    format: _FORMAT,
    code: statisticsCodeDigest(),
    comparisons: sorted,
  };
  const bytes = gzipSync(new TextEncoder().encode(memoJson(file)), {
    level: 9,
  });
  Deno.writeFileSync(path, bytes);
  return comparisons.size;
}

/** The comparisons of a memo file and the code digest it names; throws on a bad file. */
export function readMemoFile(
  path: string,
): { code: string | null; comparisons: Map<string, Comparison> } {
  const x = parseMemoJson(
    new TextDecoder().decode(gunzipSync(Deno.readFileSync(path))),
  ) as _MemoFile;
  if (x?.format !== _FORMAT || typeof x.comparisons !== "object") {
    throw new TypeError(`${path} is not a comparison memo (${_FORMAT})`);
  }
  const out = new Map<string, Comparison>();
  for (const [k, c] of Object.entries(x.comparisons)) {
    if (/^[0-9a-f]{64}$/.test(k) && _isComparison(c)) out.set(k, c);
  }
  return { code: x.code, comparisons: out };
}

/**
 * Adds a memo file's comparisons to a cache's memo (nothing stored is
 * overwritten); returns how many were added.
 */
export function importMemoFile(
  path: string,
  memo: DirComparisonMemo,
): { added: number; total: number; code: string | null } {
  const { code, comparisons } = readMemoFile(path);
  let added = 0;
  for (const [k, c] of comparisons) {
    if (memo.has(k)) continue;
    memo.set(k, c);
    added++;
  }
  memo.used.clear();
  return { added, total: comparisons.size, code };
}

/** The memo file shipped beside a bundle: `X.esb.gz` -> `X.memo.json.gz`. */
export function memoFileOf(bundle: string): string {
  return bundle.replace(/\.esb(\.gz)?$/, "") + ".memo.json.gz";
}
