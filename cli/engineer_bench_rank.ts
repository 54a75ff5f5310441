/**
 * How well the cheap engineer benchmark predicts a full ablation's
 * ranking: Spearman's rank correlation between each row's benchmark score
 * (minus its mean regret) and its mean success in the ablation table, over
 * the rows both tables have numbers for. Reads the JSON files `tables`
 * writes.
 *
 * @module
 */
import { spearman } from "../engineer/learned_bench.ts";

/** A table as `tables` writes it (the fields read here). */
interface TableJson {
  readonly rows: string[];
  readonly cells: {
    readonly row: string;
    readonly column: string;
    readonly mean: number | null;
  }[];
}

/** The rank correlation and the rows it is over. */
export interface RankAgreement {
  /** Rows both tables have numbers for. */
  readonly rows: string[];
  /** Per row: mean regret in the benchmark. */
  readonly regret: number[];
  /** Per row: the ablation's mean success. */
  readonly success: number[];
  /** Spearman's rho of (−regret, success); null below 3 rows or with no spread. */
  readonly rho: number | null;
}

/**
 * The agreement of a benchmark table (column `regretColumn`) with an
 * ablation table (column `successColumn`).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { rankAgreement } from "./engineer_bench_rank.ts";
 * const t = (col: string, xs: Record<string, number | null>) => ({
 *   rows: Object.keys(xs),
 *   cells: Object.entries(xs).map(([row, mean]) => ({ row, column: col, mean })),
 * });
 * const r = rankAgreement(
 *   t("regret", { a: 0.1, b: 0.2, c: 0.3, d: null }),
 *   t("mean", { a: 0.9, b: 0.5, c: 0.4, d: 0.1 }),
 * );
 * assert.deepEqual(r.rows, ["a", "b", "c"]);
 * assert.equal(r.rho, 1);
 * ```
 */
export function rankAgreement(
  bench: TableJson,
  ablation: TableJson,
  regretColumn = "regret",
  successColumn = "mean",
): RankAgreement {
  const cell = (t: TableJson, row: string, col: string) =>
    t.cells.find((c) => c.row === row && c.column === col)?.mean ?? null;
  const rows: string[] = [];
  const regret: number[] = [];
  const success: number[] = [];
  for (const row of bench.rows) {
    const r = cell(bench, row, regretColumn);
    const s = cell(ablation, row, successColumn);
    if (r === null || s === null) continue;
    rows.push(row);
    regret.push(r);
    success.push(s);
  }
  return {
    rows,
    regret,
    success,
    rho: spearman(regret.map((x) => -x), success),
  };
}

/** One paragraph saying what the agreement is and over which rows. */
export function rankAgreementText(r: RankAgreement): string {
  if (r.rho === null) {
    return `rank correlation with the ablation: not available (${r.rows.length} rows have both a benchmark regret and an ablation success; at least 3 with spread are needed)`;
  }
  return `rank correlation with the ablation (Spearman, -regret vs mean success, ${r.rows.length} rows: ${
    r.rows.join(", ")
  }): ${r.rho.toFixed(3)}`;
}

/**
 * Prints the rank agreement of experiment `file`'s benchmark table
 * (`NAME-bench.json` in `out`) with its ablation table (`NAME.json`);
 * returns the exit code (0; a missing table is said, not an error).
 */
export function engineerBenchRank(
  file: string,
  out: string,
  print: (line: string) => void,
): number {
  const tables: (TableJson & { name: string; file: string })[] = [];
  for (const e of Deno.readDirSync(out)) {
    if (!e.isFile || !e.name.endsWith(".json")) continue;
    try {
      const t = JSON.parse(Deno.readTextFileSync(`${out}/${e.name}`));
      if (typeof t?.name === "string" && Array.isArray(t.cells)) tables.push(t);
    } catch {
      // not a table
    }
  }
  const norm = (p: string) => p.replace(/^\.\//, "");
  const bench = tables.find((t) =>
    norm(t.file) === norm(file) && t.name.endsWith("-bench")
  );
  const ablation = bench === undefined
    ? undefined
    : tables.find((t) => t.name === bench.name.slice(0, -"-bench".length));
  if (bench === undefined || ablation === undefined) {
    print(
      `rank correlation with the ablation: not available (${file} has no NAME-bench and NAME tables in ${out})`,
    );
    return 0;
  }
  print(rankAgreementText(rankAgreement(bench, ablation)));
  return 0;
}
