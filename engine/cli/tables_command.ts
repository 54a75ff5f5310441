/**
 * `tables FILE...`: builds every table of the given experiments from the
 * cache alone (never runs anything), prints markdown, writes CSV and JSON.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { cacheImportCommand } from "./cache_commands.ts";
import { type CommandContext, load, resumeCommand } from "./commands.ts";
import { CorruptEntryError, UserError } from "../errors.ts";
import { computeKeys } from "../cache/keys.ts";
import type { Experiment } from "../compile/experiment.ts";
import { onDisk } from "../fs_errors.ts";
import { Store } from "../cache/store.ts";
import {
  buildTable,
  type Table,
  tableCsv,
  tableMarkdown,
} from "../tables/tables.ts";
import { comparisonCsv, improvementCsv } from "../tables/table_compare.ts";
import { experimentWarningLines } from "../tables/result_warnings.ts";

/**
 * Imports a results bundle into the cache before tables or a report are
 * built from it (`--import`): its entries are verified and added, nothing
 * cached is overwritten. A file that does not exist is skipped with a note,
 * so a checkout without shipped results still prints what its cache holds.
 */
export async function importResultsBundle(
  ctx: CommandContext,
  bundle: string,
): Promise<void> {
  if (existsSync(bundle)) await cacheImportCommand(ctx, bundle);
  else ctx.output.err(`no results bundle at ${bundle}; using the cache only`);
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

/** Builds the tables of one experiment file. */
export async function buildTables(
  ctx: CommandContext,
  file: string,
): Promise<Table[]> {
  const exp = await load(ctx, file);
  const store = new Store(ctx.cache);
  const keys = _keysOf(exp);
  const imported = store.importedKeys();
  return exp.tables.map((spec) =>
    buildTable(exp, spec, (node) => {
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
          ...(e.report !== undefined ? { report: e.report } : {}),
          ...(imported.has(k.key) ? { imported: true } : {}),
        };
      } catch (e) {
        if (e instanceof CorruptEntryError) {
          return { status: "missing", why: e.message };
        }
        throw e;
      }
    }, (ids) => {
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
    })
  );
}

/** Above this many missing nodes, the suggested command runs the whole file. */
const MAX_LISTED_IDS = 12;

/**
 * `tables [FILE...] [--out DIR] [--wide]`: returns 0 when complete, 1 when
 * cells are missing. Without files, an experiment whose nodes cannot be keyed
 * here is skipped with one line saying why. Without `wide`, tables with an aggregate column print
 * the aggregates and a compact comparison summary (under 120 columns); the
 * per-suite numbers go to the CSV.
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
  },
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
  let incomplete = false;
  let count = 0;
  for (const file of list) {
    // Without files, every experiment with tables: one that cannot be keyed
    // here (say, it needs an environment this machine lacks) is skipped with
    // its reason; named, it is refused like any other command would.
    let tables: Table[];
    try {
      tables = await buildTables(ctx, file);
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
      const exp = await load(ctx, file);
      for (const w of experimentWarningLines(exp, new Store(ctx.cache))) {
        ctx.output.out(w + "\n");
      }
    }
  }
  if (count > 0) {
    ctx.output.err(
      `wrote ${count} table${count > 1 ? "s" : ""} (CSV and JSON) to ${out}/`,
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
