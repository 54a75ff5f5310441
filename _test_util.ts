/**
 * What the command-line tests share (not part of the API).
 *
 * @module
 */
import { main, type MainOptions } from "./cli.ts";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { readManifest } from "@envsmith/engine/cache";
import { SilentReporter } from "@envsmith/engine/run";

/**
 * Runs the command line in-process with `args`, silently, and returns its
 * exit code with what it wrote to stdout and stderr (lines joined by "\n").
 * `options` adds to the run (kinds, executors, env).
 */
export async function runCli(
  args: string[],
  options: Omit<MainOptions, "output" | "reporter"> = {},
): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [], err: string[] = [];
  const code = await main(args, {
    ...options,
    reporter: new SilentReporter(),
    output: { out: (l) => out.push(l), err: (l) => err.push(l) },
  });
  return { code, out: out.join("\n"), err: err.join("\n") };
}

/**
 * The newest run manifest of `experiment` in `cache` (not a dot file, which
 * is one being written).
 */
export function lastManifest(
  cache: string,
  experiment: string,
): NonNullable<ReturnType<typeof readManifest>> {
  const dir = join(cache, "runs", experiment);
  const last = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) =>
    n.endsWith(".json") && !n.startsWith(".")
  ).sort().pop()!;
  return readManifest(join(dir, last))!;
}

/**
 * A temporary directory (`envsmith-<prefix>-…`, removed at the end of its
 * scope) with `file`, its `exp.yaml`, written with `yaml` when that is given,
 * and `cache`, a cache directory in it.
 */
export async function tmpExperiment(prefix: string, yaml?: string) {
  const dir = await Deno.makeTempDir({ prefix: `envsmith-${prefix}-` });
  const file = join(dir, "exp.yaml");
  if (yaml !== undefined) await Deno.writeTextFile(file, yaml);
  return {
    dir,
    file,
    cache: join(dir, "cache"),
    async [Symbol.asyncDispose]() {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    },
  };
}

/**
 * The project's files whose name `keep` accepts, as paths relative to the
 * repository root, sorted; node_modules and dot entries (caches) are left out.
 */
export function projectFiles(keep: (name: string) => boolean): string[] {
  const root = fileURLToPath(new URL(".", import.meta.url));
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(dir)) {
      if (e.name === "node_modules" || e.name.startsWith(".")) continue;
      const p = join(dir, e.name);
      if (e.isDirectory) walk(p);
      else if (keep(e.name)) out.push(relative(root, p));
    }
  };
  walk(root);
  return out.sort();
}
