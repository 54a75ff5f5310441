/**
 * Every YAML and shell block of the README and of docs/*.md, checked: YAML
 * blocks validate against the shipped JSON Schema (with ajv; whole
 * experiments also compile with the registered kinds, fragments are checked
 * inside a minimal experiment), and each shell command names a real
 * `deno task`, a real subcommand, options that subcommand has, and shipped
 * files that exist.
 *
 * @module
 */
import assert from "node:assert/strict";
import Ajv from "ajv";
import addFormats from "ajv-formats";
import { parse } from "yaml";
import type { Command } from "@commander-js/extra-typings";
import { compileExperiment, EXPERIMENT_KEYS } from "@envsmith/engine/compile";
import { allKinds } from "./mod.ts";
import { createProgram, subcommands } from "./cli.ts";

const ROOT = new URL("./", import.meta.url);

/** README.md and docs/*.md: path -> text. */
function documents(): Map<string, string> {
  const out = new Map<string, string>();
  out.set("README.md", Deno.readTextFileSync(new URL("README.md", ROOT)));
  const names = [...Deno.readDirSync(new URL("docs/", ROOT))]
    .filter((e) => e.isFile && e.name.endsWith(".md")).map((e) => e.name)
    .sort();
  for (const n of names) {
    out.set(`docs/${n}`, Deno.readTextFileSync(new URL(`docs/${n}`, ROOT)));
  }
  return out;
}

/** Fenced blocks of one language: where (file:line) and the text. */
function blocks(lang: string): { where: string; text: string }[] {
  const out: { where: string; text: string }[] = [];
  for (const [file, text] of documents()) {
    const re = new RegExp("^```" + lang + "\\n([\\s\\S]*?)^```", "gm");
    for (const m of text.matchAll(re)) {
      const line = text.slice(0, m.index).split("\n").length;
      out.push({ where: `${file}:${line}`, text: m[1]! });
    }
  }
  return out;
}

function validator() {
  // deno-lint-ignore no-explicit-any
  const ajv = new (Ajv as any)({ allErrors: true, strict: true });
  // deno-lint-ignore no-explicit-any
  (addFormats as any)(ajv);
  return ajv.compile(
    JSON.parse(
      Deno.readTextFileSync(new URL("schemas/experiment.schema.json", ROOT)),
    ),
  );
}

const BASE = { experiment: "docs", seed: 1 };
const A_NODE = {
  a: {
    kind: "generate",
    with: { suites: ["base"], split: "test", per_suite: 2 },
  },
};

/**
 * A YAML block as a whole experiment: itself when it is one; a fragment of
 * top-level keys (matrix, tables, executor) with a node added; a map of
 * nodes under `nodes`; an `each:` map as the stages of a `stages` node.
 */
function asExperiment(value: Record<string, unknown>): Record<string, unknown> {
  if ("experiment" in value && "nodes" in value) return value;
  const keys = Object.keys(value);
  if (keys.length === 1 && keys[0] === "each") {
    return {
      ...BASE,
      nodes: { curriculum: { kind: "stages", count: 2, each: value.each } },
    };
  }
  if (keys.every((k) => (EXPERIMENT_KEYS as readonly string[]).includes(k))) {
    return { ...BASE, nodes: A_NODE, ...value };
  }
  return { ...BASE, nodes: value };
}

Deno.test("docs: every YAML block validates against the schema; whole experiments compile", () => {
  const validate = validator();
  const list = blocks("yaml");
  assert.ok(list.length >= 8, `YAML blocks: ${list.length}`);
  let compiled = 0;
  for (const { where, text } of list) {
    const value = parse(text) as Record<string, unknown>;
    assert.ok(value && typeof value === "object", `${where}: not a mapping`);
    const exp = asExperiment(value);
    assert.ok(
      validate(exp),
      `${where}: ${
        JSON.stringify(
          (validate.errors ?? []).map((
            e: { instancePath: string; message: string },
          ) => `${e.instancePath} ${e.message}`),
        )
      }`,
    );
    if (exp === value) {
      compileExperiment(where, text, { kinds: allKinds });
      compiled++;
    }
  }
  assert.ok(compiled >= 2, "the README's and docs/experiments.md's examples");
});

/** The CLI's command tree with the engine's and the domain's subcommands. */
function program(): Command {
  const p = createProgram(
    () => Promise.reject(new Error("not run")),
    () => {},
  ) as unknown as Command;
  for (const make of subcommands) p.addCommand(make() as Command);
  return p;
}

/** Long option names of a command and of the program (global options). */
function optionsOf(c: Command, root: Command): Set<string> {
  const names = new Set<string>(["--help"]);
  for (const o of [...c.options, ...root.options]) {
    if (o.long) names.add(o.long);
    // commander's --no-X negates an option --X.
    if (o.long?.startsWith("--no-")) names.add(`--${o.long.slice(5)}`);
  }
  return names;
}

/** Shell commands of a block: continuation lines joined, comments dropped. */
function commandsOf(text: string): string[] {
  return text.replace(/\\\n\s*/g, " ").split("\n")
    .map((l) => l.replace(/\s+#\s.*$/, "").trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
}

Deno.test("docs: every shell command names a real task, subcommand, options and files", () => {
  const tasks = (JSON.parse(
    Deno.readTextFileSync(new URL("deno.json", ROOT)),
  ) as { tasks: Record<string, string> }).tasks;
  const root = program();
  const list = blocks("sh");
  assert.ok(list.length >= 8, `shell blocks: ${list.length}`);
  let checked = 0;
  for (const { where, text } of list) {
    for (const line of commandsOf(text)) {
      for (const segment of line.split(/\s*(?:\|\||&&|\||;)\s*/)) {
        const words = segment.replace(/\s[12]?>\s*\S+/g, "")
          .replace(/[[\]]/g, "").split(/\s+/)
          .filter((w) => !/^[A-Z_][A-Z0-9_]*=/.test(w)); // VAR=value prefixes
        // `npx --yes deno@X task T` runs `deno task T`; the launcher
        // `./envsmith T` runs task T, or else the CLI's subcommand T.
        const launcher = words.indexOf("./envsmith");
        let at = words.findIndex((w, i) =>
          w === "task" && /^(deno|deno@[\d.]+)$/.test(words[i - 1] ?? "")
        );
        let task: string;
        let rest: string[];
        if (launcher >= 0 && words[launcher + 1] !== undefined) {
          at = launcher;
          const first = words[launcher + 1]!;
          task = first in tasks ? first : "cli";
          rest = words.slice(launcher + (task === "cli" ? 1 : 2));
        } else {
          if (at < 0) continue;
          task = words[at + 1]!;
          rest = words.slice(at + 2);
        }
        assert.ok(task in tasks, `${where}: no deno task "${task}"`);
        const m = /cli\.ts(?: (\S+))?/.exec(tasks[task]!);
        if (!m) continue;
        if (m[1]) rest = [m[1], ...rest.filter((w) => w !== m[1])];
        // Walk down the subcommands the words name.
        let cmd: Command = root;
        const path: string[] = [];
        while (rest.length && !rest[0]!.startsWith("-")) {
          const sub = cmd.commands.find((c) => c.name() === rest[0]) as
            | Command
            | undefined;
          if (!sub) break;
          cmd = sub;
          path.push(rest.shift()!);
        }
        assert.ok(
          path.length > 0,
          `${where}: "${segment}" names no subcommand`,
        );
        assert.equal(
          cmd.commands.length,
          0,
          `${where}: "${segment}" stops at a command group`,
        );
        const known = optionsOf(cmd, root);
        for (const w of rest) {
          if (!w.startsWith("--")) continue;
          const name = w.split("=")[0]!;
          assert.ok(
            known.has(name),
            `${where}: ${path.join(" ")} has no option ${name}`,
          );
        }
        for (const w of rest) {
          const file = w.replace(/^'|'$/g, "");
          if (/^(experiments|results|schemas)\/[^*]+\.[a-z.]+$/.test(file)) {
            assert.ok(
              Deno.statSync(new URL(file, ROOT)).isFile,
              `${where}: ${file} does not exist`,
            );
          }
        }
        checked++;
      }
    }
  }
  assert.ok(checked >= 25, `commands checked: ${checked}`);
});

Deno.test("docs: pinned Deno versions are the one deno.json pins", () => {
  const pinned = (JSON.parse(
    Deno.readTextFileSync(new URL("deno.json", ROOT)),
  ) as { denoVersion: string }).denoVersion;
  for (const [file, text] of documents()) {
    for (const m of text.matchAll(/deno@(\d+\.\d+\.\d+)/g)) {
      assert.equal(`deno@${m[1]}`, pinned, file);
    }
  }
});
