/**
 * The engine's doors are as narrow as their use: every name a door
 * (`engine/deno.json` "exports") exports is imported by code outside
 * `engine/` (the command line, node kinds, engineers, families, examples,
 * tests, the code blocks of the docs), or is kept for plugin authors in
 * {@linkcode KEPT}. Inside `engine/` files import each other by path, so a
 * name only the engine uses has no place in a door.
 *
 * `deno run -A engine/doors_test.ts` prints, per door, how many names it
 * exports and how many of them code outside `engine/` imports.
 *
 * @module
 */
import assert from "node:assert/strict";
import { dirname, join, relative } from "node:path";
import { fromFileUrl } from "./paths.ts";

const ENGINE = fromFileUrl(new URL("./", import.meta.url).href);
const ROOT = join(ENGINE, "..");

/**
 * Names a door keeps that nothing in this repository imports yet, each with
 * the reason: what docs/engine.md tells a plugin author to use (node kinds,
 * executors, engineers, tables) or what the package's own example names.
 */
const KEPT: Readonly<Record<string, readonly string[]>> = {
  // The library surface the root mod.ts example runs (load, plan, run, store);
  // mod.ts re-exports the whole door with `export *`.
  "@envsmith/engine": [
    "loadExperiment",
    "makePlan",
    "runPlan",
    "Store",
  ],
  // docs/engine.md "Writing a node kind": the interface, its context, JSON.
  "@envsmith/engine/kind": ["NodeKind", "NodeContext", "Json", "NodeResult"],
  // docs/engine.md "An executor": what an executor that is not a cluster
  // implements (`ExecutorKind.create(spec, run)` returns an `Executor`), and
  // the views of the experiment and the cache `run` gives it.
  "@envsmith/engine/executor": [
    "Executor",
    "ExecutorRun",
    "ExecutorExperiment",
    "ExecutorStore",
  ],
};

/** The doors: specifier -> project-relative file. */
function doors(): Map<string, string> {
  const cfg = JSON.parse(
    Deno.readTextFileSync(join(ENGINE, "deno.json")),
  ) as { exports: Record<string, string> };
  const out = new Map<string, string>();
  for (const [sub, file] of Object.entries(cfg.exports)) {
    const spec = sub === "."
      ? "@envsmith/engine"
      : `@envsmith/engine${sub.slice(1)}`;
    out.set(spec, join("engine", file));
  }
  return out;
}

/** The names inside `{ a, type B, c as d }`: the exported (or imported) side. */
function braceNames(list: string, side: "local" | "exported"): string[] {
  const out: string[] = [];
  for (let part of list.split(",")) {
    part = part.replace(/\/\/[^\n]*|\/\*[\s\S]*?\*\//g, "").trim()
      .replace(/^type\s+/, "");
    if (!part) continue;
    const m = /^([\w$]+)(?:\s+as\s+([\w$]+))?$/.exec(part);
    if (!m) continue;
    out.push(side === "exported" ? (m[2] ?? m[1]!) : m[1]!);
  }
  return out;
}

/** The names a door file exports (re-export lists and declarations). */
export function exportedNames(text: string): string[] {
  const names = new Set<string>();
  for (const m of text.matchAll(/^export\s+(?:type\s+)?\{([^}]*)\}/gm)) {
    for (const n of braceNames(m[1]!, "exported")) names.add(n);
  }
  for (
    const m of text.matchAll(
      /^export\s+(?:declare\s+)?(?:default\s+)?(?:abstract\s+)?(?:async\s+)?(?:function\*?|class|const|let|var|interface|type|enum)\s+([\w$]+)/gm,
    )
  ) names.add(m[1]!);
  return [...names].sort();
}

/** Door specifier -> names imported from it, in one source text. */
export function importedNames(text: string): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  const add = (spec: string, names: Iterable<string>) => {
    const set = out.get(spec) ?? new Set<string>();
    for (const n of names) set.add(n);
    out.set(spec, set);
  };
  const door = `["'](@envsmith/engine(?:/[\\w-]+)?)["']`;
  // import { a, type B } from "door"; import type { ... }; export { ... } from
  for (
    const m of text.matchAll(
      new RegExp(
        `(?:import|export)\\s+(?:type\\s+)?\\{([^}]*)\\}\\s*from\\s*${door}`,
        "g",
      ),
    )
  ) add(m[2]!, braceNames(m[1]!, "local"));
  // const { a, b } = await import(DOOR);
  for (
    const m of text.matchAll(
      new RegExp(
        `\\{([^}]*)\\}\\s*=\\s*await\\s+import\\(\\s*${door}\\s*\\)`,
        "g",
      ),
    )
  ) {
    add(m[2]!, m[1]!.split(",").map((s) => s.split(":")[0]!.trim()));
  }
  // import * as ns from "door" ... ns.name
  for (
    const m of text.matchAll(
      new RegExp(
        `import\\s+(?:type\\s+)?\\*\\s+as\\s+([\\w$]+)\\s+from\\s*${door}`,
        "g",
      ),
    )
  ) {
    const used = [...text.matchAll(new RegExp(`\\b${m[1]}\\.([\\w$]+)`, "g"))];
    add(m[2]!, used.map((u) => u[1]!));
  }
  // typeof import(DOOR).name
  for (
    const m of text.matchAll(
      new RegExp(`import\\(\\s*${door}\\s*\\)\\.([\\w$]+)`, "g"),
    )
  ) add(m[1]!, [m[2]!]);
  return out;
}

/** The code outside engine/: TypeScript and JavaScript files, and the docs' code blocks. */
function outsideSources(): Map<string, string> {
  const out = new Map<string, string>();
  const skip = new Set(["engine", "node_modules", "results"]);
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(dir)) {
      if (e.name.startsWith(".")) continue;
      const p = join(dir, e.name);
      if (e.isDirectory) {
        if (!(dir === ROOT && skip.has(e.name))) walk(p);
      } else if (/\.(m?[jt]sx?)$/.test(e.name)) {
        out.set(relative(ROOT, p), Deno.readTextFileSync(p));
      } else if (e.name.endsWith(".md")) {
        const text = Deno.readTextFileSync(p);
        const blocks = [
          ...text.matchAll(/```(?:ts|typescript|js)[^\n]*\n([\s\S]*?)```/g),
        ]
          .map((b) => b[1]!);
        if (blocks.length) out.set(relative(ROOT, p), blocks.join("\n"));
      }
    }
  };
  walk(ROOT);
  return out;
}

/**
 * The JSDoc of a door name's declaration, following re-exports from the
 * door file to the file that declares it; null when none is found.
 */
export function declarationDoc(
  file: string,
  name: string,
  depth = 0,
): { file: string; doc: string } | null {
  const text = Deno.readTextFileSync(join(ROOT, file));
  const decl = new RegExp(
    `(/\\*\\*(?:(?!\\*/)[\\s\\S])*\\*/\\s*(?://[^\\n]*\\n\\s*)*)?export\\s+(?:declare\\s+)?(?:abstract\\s+)?(?:async\\s+)?(?:function\\*?|class|const|let|interface|type|enum)\\s+${name}\\b`,
  );
  const m = decl.exec(text);
  if (m) return { file, doc: m[1] ?? "" };
  if (depth > 3) return null;
  for (
    const r of text.matchAll(
      /export\s+(?:type\s+)?\{([^}]*)\}\s*from\s*"([^"]+)"/g,
    )
  ) {
    for (const part of r[1]!.split(",")) {
      const mm = /^(?:type\s+)?([\w$]+)(?:\s+as\s+([\w$]+))?$/.exec(
        part.replace(/\/\/[^\n]*/g, "").trim(),
      );
      if (mm && (mm[2] ?? mm[1]) === name) {
        return declarationDoc(join(dirname(file), r[2]!), mm[1]!, depth + 1);
      }
    }
  }
  // `import type { X } from "./x.ts"; export type { X };`
  for (
    const r of text.matchAll(
      /import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*"([^"]+)"/g,
    )
  ) {
    const names = r[1]!.split(",").map((x) => x.trim().replace(/^type\s+/, ""));
    if (names.includes(name)) {
      return declarationDoc(join(dirname(file), r[2]!), name, depth + 1);
    }
  }
  return null;
}

/** Whether a JSDoc has an `@example` whose code the doc tests run (or say why not). */
function hasRunExample(doc: string): boolean {
  if (!/@example/.test(doc)) return false;
  const ex = doc.slice(doc.indexOf("@example"));
  if (/```ts\s*\n/.test(ex)) return true;
  // A skipped example counts only with its reason, a `Not run:` line above it.
  return /Not run:[^\n]*\n\s*\*\s*```ts ignore/.test(ex);
}

/** Per door: what it exports, what code outside engine/ imports from it, and which files do. */
export interface DoorUse {
  readonly door: string;
  readonly file: string;
  readonly exported: readonly string[];
  readonly used: ReadonlyMap<string, readonly string[]>;
}

/** Measures every door against the code outside engine/. */
export function measureDoors(): DoorUse[] {
  const sources = outsideSources();
  const users = new Map<string, Map<string, string[]>>();
  for (const [path, text] of sources) {
    for (const [spec, names] of importedNames(text)) {
      const byName = users.get(spec) ?? new Map<string, string[]>();
      for (const n of names) byName.set(n, [...(byName.get(n) ?? []), path]);
      users.set(spec, byName);
    }
  }
  return [...doors()].map(([door, file]) => {
    const exported = exportedNames(Deno.readTextFileSync(join(ROOT, file)));
    const all = users.get(door) ?? new Map<string, string[]>();
    const used = new Map<string, string[]>();
    for (const n of exported) if (all.has(n)) used.set(n, all.get(n)!);
    return { door, file, exported, used };
  });
}

Deno.test("the export parser reads re-export lists and declarations", () => {
  const src = [
    "export {",
    "  a,",
    "  type B,",
    "  c as d, // trailing comment",
    '} from "./x.ts";',
    'export type { E } from "./e.ts";',
    "export function f() {}",
    "export class G {}",
    "export const H = 1;",
    "export interface I {}",
    "export type J = string;",
    "function notExported() {}",
  ].join("\n");
  assert.deepEqual(exportedNames(src), [
    "B",
    "E",
    "G",
    "H",
    "I",
    "J",
    "a",
    "d",
    "f",
  ]);
});

Deno.test("the import parser reads every form code outside engine/ uses", () => {
  const src = [
    'import { a, type B as C } from "@envsmith/engine/cache";',
    'import type { D } from "@envsmith/engine";',
    'export { e } from "@envsmith/engine/run";',
    'const { f, g: h } = await IMPORT("@envsmith/engine/compile");',
    'import * as ns from "@envsmith/engine/hash";',
    "ns.sha256Hex(x);",
    'type T = typeof IMPORT("@envsmith/engine/kind").NodeKind;',
    'import { z } from "./not_a_door.ts";',
    // IMPORT( stands for the dynamic import, which the architecture test
    // would otherwise read as this file's own import.
  ].join("\n").replaceAll("IMPORT(", "import(");
  const got = Object.fromEntries(
    [...importedNames(src)].map(([k, v]) => [k, [...v].sort()]),
  );
  assert.deepEqual(got, {
    "@envsmith/engine/cache": ["a", "B"].sort(),
    "@envsmith/engine": ["D"],
    "@envsmith/engine/run": ["e"],
    "@envsmith/engine/compile": ["f", "g"],
    "@envsmith/engine/hash": ["sha256Hex"],
    "@envsmith/engine/kind": ["NodeKind"],
  });
});

Deno.test("every name a door exports is used outside engine/ or kept for plugin authors", () => {
  const unused: string[] = [];
  for (const d of measureDoors()) {
    const kept = new Set(KEPT[d.door] ?? []);
    for (const n of d.exported) {
      if (!d.used.has(n) && !kept.has(n)) unused.push(`${d.door}: ${n}`);
    }
  }
  assert.deepEqual(
    unused,
    [],
    `these names are exported by a door but imported by nothing outside engine/; ` +
      `remove them from the door (engine code imports the file), or, if plugin ` +
      `authors need them, add them to KEPT in engine/doors_test.ts with the reason`,
  );
});

Deno.test("every name kept for plugin authors is still exported by its door", () => {
  const missing: string[] = [];
  const byDoor = new Map(measureDoors().map((d) => [d.door, d]));
  for (const [door, names] of Object.entries(KEPT)) {
    const d = byDoor.get(door);
    assert.ok(d, `KEPT names a door engine/deno.json does not have: ${door}`);
    for (const n of names) {
      if (!d.exported.includes(n)) missing.push(`${door}: ${n}`);
    }
  }
  assert.deepEqual(missing, []);
});

/**
 * Door names whose declaration has no run `@example` yet ("door name"). The
 * list may only shrink: the test below fails for a name that gains an
 * example and is still listed, and for any other name without one. What is
 * left is the tables door and the tables command (`engine/tables/`,
 * `engine/cli/tables_command.ts`).
 */
const WITHOUT_EXAMPLE: readonly string[] = [
  "@envsmith/engine/cli buildTables",
  "@envsmith/engine/cli experimentsWithTables",
  "@envsmith/engine/cli importResultsBundle",
  "@envsmith/engine/cli tablesCommand",
  "@envsmith/engine/cli unkeyableReason",
  "@envsmith/engine/tables CompareCell",
  "@envsmith/engine/tables Lookup",
  "@envsmith/engine/tables Table",
  "@envsmith/engine/tables buildTable",
  "@envsmith/engine/tables comparisonCaption",
  "@envsmith/engine/tables crossedResamples",
  "@envsmith/engine/tables experimentWarningLines",
  "@envsmith/engine/tables formatCell",
  "@envsmith/engine/tables formatDifference",
  "@envsmith/engine/tables formatPValues",
  "@envsmith/engine/tables memoFileOf",
  "@envsmith/engine/tables percentileInterval",
  "@envsmith/engine/tables prepareGroup",
  "@envsmith/engine/tables readMemoFile",
  "@envsmith/engine/tables statisticsCodeDigest",
  "@envsmith/engine/tables tableNotes",
];

/** Door names (`door name`) whose declaration has no run example, or whose declaration was not found. */
function namesWithoutExample(): string[] {
  const out: string[] = [];
  for (const d of measureDoors()) {
    for (const n of d.exported) {
      const decl = declarationDoc(d.file, n);
      if (!decl || !hasRunExample(decl.doc)) out.push(`${d.door} ${n}`);
    }
  }
  return out.sort();
}

Deno.test("every name a door exports has a JSDoc example the doc tests run, but the listed ones", () => {
  const missing = namesWithoutExample();
  const listed = new Set(WITHOUT_EXAMPLE);
  assert.deepEqual(
    missing.filter((n) => !listed.has(n)),
    [],
    "give these names JSDoc with an @example (```ts, run by deno test --doc)",
  );
  assert.deepEqual(
    WITHOUT_EXAMPLE.filter((n) => !missing.includes(n)),
    [],
    "these names have an example now: remove them from WITHOUT_EXAMPLE",
  );
});

if (import.meta.main) {
  let exported = 0, used = 0;
  for (const d of measureDoors()) {
    exported += d.exported.length;
    used += d.used.size;
    console.log(
      `${d.door.padEnd(27)} ${d.file.padEnd(28)} exports ${
        String(d.exported.length).padStart(3)
      }, used outside engine/ ${String(d.used.size).padStart(3)}`,
    );
    if (Deno.args.includes("--unused")) {
      const kept = new Set(KEPT[d.door] ?? []);
      const un = d.exported.filter((n) => !d.used.has(n));
      console.log(
        "   unused: " + un.map((n) => kept.has(n) ? `${n}(kept)` : n).join(" "),
      );
    }
  }
  console.log(`all doors: exports ${exported}, used outside engine/ ${used}`);
  if (Deno.args.includes("--without-example")) {
    for (const n of namesWithoutExample()) console.log(JSON.stringify(n) + ",");
  }
}
