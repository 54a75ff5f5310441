/**
 * The shipped tables memo (`X.tables.json.gz` beside the bundle `X.esb.gz`):
 * the tables a fresh cache holding exactly the shipped bundles prints, with
 * what each table read, so `tables` on a fresh clone prints them without
 * importing (gunzipping, checking and writing) the bundles at all.
 *
 * A table is served only when the bundles are the same bytes (by sha256),
 * its memo key (tables code, experiment text, overrides, spec) is the same,
 * and every node it read has today the key and state it had: a key that
 * moved, or an entry of the local cache that would shadow the bundle's,
 * sends the file back to the import.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { basename } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { memoJson, parseMemoJson } from "./comparison_memo.ts";
import type { Table } from "./tables.ts";
import type { KeyInputs } from "./key_inputs.ts";

/** The format line of a shipped tables memo. */
export const SHIPPED_TABLES_FORMAT = "envsmith-shipped-tables 1";

/** `[node index, state]`: `imported KEY`, `absent KEY`, `skipped: WHY` or `uncacheable: WHY`. */
export type ShippedDep = [number, string];

/** One table as a fresh cache with the bundles builds it. */
export interface ShippedTable {
  /** Its table memo key (code, file text, overrides, spec). */
  readonly key: string;
  /** The nodes it read and their states. */
  readonly deps: ShippedDep[];
  /** The table. */
  readonly table: Table;
}

/** The tables and warning lines of one experiment file. */
export interface ShippedFile {
  /** Its tables, in order. */
  readonly tables: ShippedTable[];
  /** Its result warning lines. */
  readonly warnings: string[];
  /** The nodes the warnings read and their states. */
  readonly warningDeps: ShippedDep[];
  /**
   * What its keys were computed from; when they hold, the recorded keys are
   * today's and the file is not compiled again. Absent when its compile read
   * something the record cannot cover.
   */
  readonly inputs?: KeyInputs;
}

/** A shipped tables memo. */
export interface ShippedTables {
  /** {@linkcode SHIPPED_TABLES_FORMAT}. */
  readonly format: string;
  /** The bundles it was built from, in import order. */
  readonly bundles: { name: string; sha256: string }[];
  /** Experiment file (as named on the command line) -> its tables. */
  readonly files: Record<string, ShippedFile>;
}

/** `X.esb.gz` or `X.memo.json.gz` -> `X.tables.json.gz`. */
export function shippedTablesFileOf(path: string): string {
  return path.replace(/(\.memo\.json\.gz|\.esb(\.gz)?)$/, "") +
    ".tables.json.gz";
}

/** The sha256 of a file's bytes (read in 1 MiB chunks). */
export function fileSha256(path: string): string {
  const f = Deno.openSync(path);
  const hash = createHash("sha256");
  const buf = new Uint8Array(1 << 20);
  try {
    for (;;) {
      const n = f.readSync(buf);
      if (n === null) break;
      hash.update(buf.subarray(0, n));
    }
  } finally {
    f.close();
  }
  return hash.digest("hex");
}

/** The identity of each bundle (file name and sha256), in order. */
export function bundleIdentities(
  bundles: readonly string[],
): { name: string; sha256: string }[] {
  return bundles.map((b) => ({ name: basename(b), sha256: fileSha256(b) }));
}

/** Writes a shipped tables memo (gzip JSON); returns its table count. */
export function writeShippedTables(path: string, memo: ShippedTables): number {
  Deno.writeFileSync(
    path,
    gzipSync(new TextEncoder().encode(memoJson(memo)), { level: 9 }),
  );
  return Object.values(memo.files).reduce((n, f) => n + f.tables.length, 0);
}

/** A shipped tables memo that cannot be read: its message is one line. */
export class ShippedTablesError extends Error {
  /** Creates the error. */
  constructor(message: string) {
    super(message);
    this.name = "ShippedTablesError";
  }
}

/** Reads a shipped tables memo; a damaged or foreign file throws {@linkcode ShippedTablesError}. */
export function readShippedTables(path: string): ShippedTables {
  let x: ShippedTables;
  try {
    x = parseMemoJson(
      new TextDecoder().decode(gunzipSync(Deno.readFileSync(path))),
    ) as ShippedTables;
  } catch (e) {
    throw new ShippedTablesError(
      `${path} cannot be read (${
        (e as Error).message.split("\n")[0]
      }); write it again with \`tables --memo-out\``,
    );
  }
  const ok = x?.format === SHIPPED_TABLES_FORMAT &&
    Array.isArray(x.bundles) && typeof x.files === "object" &&
    x.files !== null &&
    x.bundles.every((b) =>
      typeof b?.name === "string" && typeof b?.sha256 === "string"
    ) &&
    Object.values(x.files).every((f) =>
      Array.isArray(f?.tables) && Array.isArray(f.warnings) &&
      Array.isArray(f.warningDeps) &&
      (f.inputs === undefined || _isKeyInputs(f.inputs)) &&
      f.tables.every((t) =>
        typeof t?.key === "string" && Array.isArray(t.deps) &&
        typeof t.table === "object" && t.table !== null
      )
    );
  if (!ok) {
    throw new ShippedTablesError(
      `${path} is not a shipped tables memo (${SHIPPED_TABLES_FORMAT}); write it again with \`tables --memo-out\``,
    );
  }
  return x;
}

function _isKeyInputs(x: KeyInputs): boolean {
  return typeof x?.text === "string" && typeof x.options === "string" &&
    typeof x.tree === "string" && _isDigestMap(x.env) &&
    _isDigestMap(x.files);
}

function _isDigestMap(x: unknown): boolean {
  return typeof x === "object" && x !== null &&
    Object.values(x).every((v) => v === null || typeof v === "string");
}

/**
 * Whether a recorded dep holds today. `now` is the node's state here
 * without the bundles: `skipped: ...`, `uncacheable: ...`, `ok KEY` /
 * `imported KEY` (the local cache has it) or `absent KEY` (it does not: the
 * bundles decide, and they are the bytes the memo was built from).
 */
export function depHolds(recorded: string, now: string): boolean {
  if (now.startsWith("absent ")) {
    const key = now.slice(7);
    return recorded === `absent ${key}` || recorded === `imported ${key}`;
  }
  return recorded === now;
}

/** The first dep that does not hold (its node index), or -1. */
export function firstMoved(
  deps: readonly ShippedDep[],
  stateNow: (index: number) => string | undefined,
): number {
  for (const d of deps) {
    if (!Array.isArray(d) || typeof d[0] !== "number") return -2;
    const now = stateNow(d[0]);
    if (now === undefined || !depHolds(d[1], now)) return d[0];
  }
  return -1;
}
