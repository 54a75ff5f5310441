/**
 * "Did you mean ...?" suggestions by edit distance.
 *
 * @module
 */

/** Damerau-Levenshtein (optimal string alignment) distance between two strings. */
export function editDistance(a: string, b: string): number {
  const n = a.length, m = b.length;
  if (n === 0) return m;
  if (m === 0) return n;
  let prev2 = new Array<number>(m + 1).fill(0);
  let prev = Array.from({ length: m + 1 }, (_, j) => j);
  let cur = new Array<number>(m + 1).fill(0);
  for (let i = 1; i <= n; i++) {
    cur[0] = i;
    for (let j = 1; j <= m; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let d = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, prev2[j - 2]! + 1);
      }
      cur[j] = d;
    }
    [prev2, prev, cur] = [prev, cur, prev2];
  }
  return prev[m]!;
}

/**
 * The candidates closest to `word` (at most 3, best first), among those within
 * a distance of max(1, ⌊len/3⌋) (case-insensitive prefix matches also count).
 *
 * @example
 * ```ts
 * import { suggest } from "./suggest.ts";
 * import assert from "node:assert/strict";
 * assert.deepEqual(suggest("evns", ["envs", "policy"]), ["envs"]);
 * assert.deepEqual(suggest("benchmark", ["bench", "start"]), ["bench"]);
 * ```
 */
export function suggest(word: string, candidates: Iterable<string>): string[] {
  const limit = Math.max(1, Math.floor(word.length / 3));
  const lw = word.toLowerCase();
  const scored: [number, string][] = [];
  for (const c of new Set(candidates)) {
    if (c === word) continue;
    const d = editDistance(lw, c.toLowerCase());
    if (d <= limit) scored.push([d, c]);
    else if (lw.length >= 3 && c.toLowerCase().startsWith(lw)) {
      scored.push([limit + 1, c]);
    } else if (c.length >= 3 && lw.startsWith(c.toLowerCase())) {
      // The word extends a candidate: `benchmark` for `bench`.
      scored.push([limit + 2, c]);
    }
  }
  scored.sort((x, y) => x[0] - y[0] || (x[1] < y[1] ? -1 : 1));
  return scored.slice(0, 3).map((s) => s[1]);
}

/**
 * `; did you mean "x"?` (or `"x" or "y"`), or the empty string.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { didYouMean } from "./suggest.ts";
 * const kinds = ["train", "rollout", "evaluate"];
 * assert.equal(`unknown kind "trian"${didYouMean("trian", kinds)}`,
 *   'unknown kind "trian"; did you mean "train"?');
 * assert.equal(didYouMean("zzzzzzzz", kinds), "");
 * ```
 */
export function didYouMean(word: string, candidates: Iterable<string>): string {
  const s = suggest(word, candidates);
  if (s.length === 0) return "";
  return `; did you mean ${s.map((x) => `"${x}"`).join(" or ")}?`;
}

/** Options of {@linkcode missingFileMessage}. */
export interface MissingFileOptions {
  /**
   * Offer only files with one of these extensions (e.g. `[".yaml", ".yml"]`
   * for experiment files: a test file beside them is never what was meant).
   * @default every file
   */
  readonly extensions?: readonly string[];
}

/**
 * Why `path` cannot be opened as an input file, with the nearest existing
 * file of its directory ("did you mean") or, failing that, what the
 * directory holds; `null` when it is a readable file.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { missingFileMessage } from "./suggest.ts";
 * const dir = Deno.makeTempDirSync();
 * Deno.writeTextFileSync(`${dir}/quick.yaml`, "");
 * assert.equal(
 *   missingFileMessage(`${dir}/quik.yaml`, "experiment file"),
 *   `No experiment file ${dir}/quik.yaml; did you mean "${dir}/quick.yaml"?`,
 * );
 * assert.equal(missingFileMessage(`${dir}/quick.yaml`), null);
 * // only the extensions asked for are offered
 * Deno.writeTextFileSync(`${dir}/quick_test.ts`, "");
 * assert.equal(
 *   missingFileMessage(`${dir}/quick`, "experiment file", {
 *     extensions: [".yaml", ".yml"],
 *   }),
 *   `No experiment file ${dir}/quick; did you mean "${dir}/quick.yaml"?`,
 * );
 * ```
 */
export function missingFileMessage(
  path: string,
  what = "file",
  options: MissingFileOptions = {},
): string | null {
  try {
    const st = Deno.statSync(path);
    if (st.isFile) return null;
    return `${what[0]!.toUpperCase()}${what.slice(1)} ${path} is a directory`;
  } catch { /* not there: say what is */ }
  const slash = path.lastIndexOf("/");
  const dir = slash >= 0 ? path.slice(0, slash) : "";
  const base = path.slice(slash + 1);
  let names: string[] = [];
  try {
    names = [...Deno.readDirSync(dir || ".")].filter((e) =>
      e.isFile || e.isSymlink
    ).map((e) => e.name).filter((n) =>
      options.extensions?.some((x) => n.endsWith(x)) ?? true
    );
  } catch {
    return `No ${what} ${path}: the directory ${dir} does not exist`;
  }
  const prefix = dir ? `${dir}/` : "";
  const stem = (n: string) => n.replace(/\.[A-Za-z0-9]+$/, "");
  let near = suggest(base, names);
  if (near.length === 0) {
    // `ablate.yaml` for `ablate-context.yaml`: compare the names without
    // their extensions (a prefix counts).
    const byStem = new Map(names.map((n) => [stem(n), n]));
    near = suggest(stem(base), byStem.keys()).map((s) => byStem.get(s)!);
  }
  if (near.length > 0) {
    return `No ${what} ${path}; did you mean ${
      near.map((n) => `"${prefix}${n}"`).join(" or ")
    }?`;
  }
  const ext = /\.[A-Za-z0-9]+$/.exec(base)?.[0];
  const same = names.filter((n) => ext && n.endsWith(ext)).sort();
  return `No ${what} ${path}` +
    (same.length
      ? ` (${dir || "."}/ holds ${same.slice(0, 8).join(", ")}${
        same.length > 8 ? ", …" : ""
      })`
      : "");
}
