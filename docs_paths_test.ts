/**
 * The docs match the tree: every repository path that docs/*.md and
 * README.md name exists; the engine's folder table names files that are in
 * those folders; the abridged PBS executor in docs/engine.md imports what
 * examples/executors/pbs.ts imports; and every example the doc tests skip
 * says why, in a line starting `Not run:` just above it.
 *
 * @module
 */
import assert from "node:assert/strict";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { projectFiles } from "./_test_util.ts";

const ROOT = fileURLToPath(new URL("./", import.meta.url));

const DOCS = [
  ...[...Deno.readDirSync(join(ROOT, "docs"))]
    .filter((e) => e.name.endsWith(".md")).map((e) => `docs/${e.name}`)
    .sort(),
  "README.md",
];

/** Top-level folders of the repository: a path in the docs starts with one. */
const TOPS = [...Deno.readDirSync(ROOT)]
  .filter((e) =>
    e.isDirectory && !e.name.startsWith(".") && e.name !== "node_modules"
  )
  .map((e) => e.name);

/**
 * Paths the docs name that are not files of this repository, each with why.
 */
const NOT_HERE: Record<string, string> = {
  "examples/maze_plr.py": "a file of JaxUED's repository, cited as a reference",
  "results/tables.memo.json.gz":
    "written by `tables --memo-out`, the command docs/results.md gives",
  "results/tables.tables.json.gz":
    "written by `tables --memo-out` with the shipped bundles imported, the command docs/results.md gives",
};

function exists(path: string): boolean {
  try {
    Deno.statSync(join(ROOT, path));
    return true;
  } catch {
    return false;
  }
}

/** Repository paths named in a text: `folder/...` for a top-level folder. */
export function namedPaths(text: string, tops: readonly string[]): string[] {
  const re = new RegExp(
    `(?<![\\w./@:$-])((?:${tops.join("|")})/[\\w./-]*[\\w/])`,
    "g",
  );
  const out = new Set<string>();
  for (const m of text.matchAll(re)) {
    const p = m[1]!;
    // placeholders: CACHE/..., NAME.ts, KEY
    if (/[A-Z]{2,}/.test(p)) continue;
    out.add(p);
  }
  return [...out];
}

Deno.test("docs paths: every repository path named in docs/*.md and README.md exists", () => {
  const missing: string[] = [];
  for (const doc of DOCS) {
    const lines = Deno.readTextFileSync(join(ROOT, doc)).split("\n");
    lines.forEach((line, i) => {
      for (const p of namedPaths(line, TOPS)) {
        if (!exists(p) && !(p in NOT_HERE)) {
          missing.push(`${doc}:${i + 1}: ${p}`);
        }
      }
    });
  }
  assert.deepEqual(missing, [], "rename the path in the doc, or the file");
  // the check finds what it is meant to
  assert.deepEqual(
    namedPaths("see `engine/worker_pool.ts` and CACHE/x and nodes/NAME.ts", [
      "engine",
      "nodes",
    ]),
    ["engine/worker_pool.ts"],
  );
});

Deno.test("docs paths: every relative link in docs/*.md and README.md reaches a file", () => {
  const broken: string[] = [];
  for (const doc of DOCS) {
    const text = Deno.readTextFileSync(join(ROOT, doc));
    for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = m[1]!.split("#")[0]!;
      if (target === "" || /^[a-z]+:/.test(target)) continue;
      const path = relative(ROOT, join(ROOT, doc, "..", target));
      if (!exists(path)) broken.push(`${doc}: ${m[1]}`);
    }
  }
  assert.deepEqual(broken, []);
});

Deno.test("docs paths: the engine's folder table names files that are in those folders", () => {
  const text = Deno.readTextFileSync(join(ROOT, "docs/engine.md"));
  const rows = text.split("\n").filter((l) => /^\| (root|`\w+\/`) +\|/.test(l));
  assert.ok(rows.length >= 6, `${rows.length} rows`);
  const missing: string[] = [];
  for (const row of rows) {
    const [, folderCell, filesCell] = row.split("|");
    const folder = folderCell!.trim() === "root"
      ? "engine"
      : `engine/${folderCell!.trim().replaceAll("`", "").replace(/\/$/, "")}`;
    for (const m of filesCell!.matchAll(/`([\w./]+)`/g)) {
      if (!exists(join(folder, m[1]!))) missing.push(`${folder}/${m[1]}`);
    }
  }
  assert.deepEqual(missing, []);
});

Deno.test("docs paths: the abridged PBS executor imports from the door examples/executors/pbs.ts compiles with, names it imports", () => {
  const doc = Deno.readTextFileSync(join(ROOT, "docs/engine.md"));
  const file = Deno.readTextFileSync(join(ROOT, "examples/executors/pbs.ts"));
  const engineImport = (src: string) => {
    const m = /import \{([^}]*)\} from "(@envsmith\/engine[\w/]*)";/.exec(src);
    assert.ok(m, "an import from the engine");
    const names = m[1]!.split(",").map((s) => s.trim().replace(/^type /, ""))
      .filter((s) => s);
    return { door: m[2]!, names };
  };
  const block = doc.slice(doc.indexOf("class PbsBackend") - 2000);
  const a = engineImport(block), b = engineImport(file);
  assert.equal(a.door, b.door);
  for (const n of a.names) assert.ok(b.names.includes(n), n);
});

/** Files whose examples the doc tests read: the project's .ts and its docs. */
function exampleFiles(): string[] {
  return projectFiles((name) => /\.(ts|md)$/.test(name));
}

Deno.test("docs paths: every skipped example (```ts ignore) says why, in a `Not run:` line just above it", () => {
  const unexplained: string[] = [];
  let skipped = 0;
  for (const f of exampleFiles()) {
    const lines = Deno.readTextFileSync(join(ROOT, f)).split("\n");
    lines.forEach((line, i) => {
      if (
        !/^\s*(\*\s*)?```(ts|tsx|js|javascript|typescript)\b.*\b(ignore|no-run|no-eval)\b/
          .test(line)
      ) return;
      skipped++;
      const above = lines.slice(Math.max(0, i - 4), i).join(" ");
      if (!/Not run: \S/.test(above)) unexplained.push(`${f}:${i + 1}`);
    });
  }
  assert.ok(skipped > 0);
  assert.deepEqual(
    unexplained,
    [],
    "write `Not run: <why>` in the lines above the example, or make it run",
  );
});
