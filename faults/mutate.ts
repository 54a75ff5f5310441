/**
 * `deno task mutate`: the mutation check. Every mutation of
 * `faults/mutations.ts` (a small wrong edit of the code that decides
 * results) is applied, one at a time, to a copy of the tree in a temporary
 * directory (tracked and untracked-but-not-ignored files copied,
 * `node_modules` hard-linked; the tree's own files are never written), and
 * the tests it names are run there (`deno test -A --no-check --fail-fast`). A mutation
 * the tests fail on is killed; one they pass is a survivor: a change to
 * results no test would notice. Exits 1 on any survivor, and before running
 * anything when a mutation's original snippet is missing (or not unique) in
 * its file, or a test it names is not beside the code it mutates, so the
 * list keeps in step with the code.
 *
 * Usage: `deno task mutate [--fast] [--only NAME[,NAME...]] [--no-baseline]`
 * - `--fast`: only the mutations marked `fast` (a quicker subset: no worker pool, no repeated file; CI runs the whole list while it fits in 4 minutes).
 * - `--only`: only the named mutations.
 * - `--no-baseline`: skip the first run of the named tests on the unmutated
 *   copy (by default a failing baseline stops the run: a mutation cannot be
 *   killed by a test that already fails).
 *
 * @module
 */
import { cpSync, linkSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { fromFileUrl } from "./_paths.ts";
import { type Mutation, MUTATIONS } from "./mutations.ts";

/** The repository root. */
export const ROOT: string = fromFileUrl(new URL("../", import.meta.url));

/** Problems of a mutation list against a tree: one line each, naming the mutation and the fix. */
export function checkMutations(
  list: readonly Mutation[],
  root: string = ROOT,
): string[] {
  const problems: string[] = [];
  const names = new Set<string>();
  for (const m of list) {
    if (names.has(m.name)) problems.push(`${m.name}: the name is used twice`);
    names.add(m.name);
    let text: string;
    try {
      text = Deno.readTextFileSync(join(root, m.file));
    } catch {
      problems.push(
        `${m.name}: ${m.file} does not exist (update faults/mutations.ts)`,
      );
      continue;
    }
    const count = text.split(m.from).length - 1;
    if (count === 0) {
      problems.push(
        `${m.name}: its original snippet is no longer in ${m.file} (the code moved: update the mutation in faults/mutations.ts)`,
      );
    } else if (count > 1) {
      problems.push(
        `${m.name}: its original snippet occurs ${count} times in ${m.file} (lengthen it in faults/mutations.ts until it is unique)`,
      );
    }
    if (m.from === m.to) {
      problems.push(`${m.name}: the replacement equals the original`);
    }
    if (m.tests.length === 0) problems.push(`${m.name}: names no test`);
    for (const t of m.tests) {
      if (dirname(t) !== dirname(m.file)) {
        problems.push(
          `${m.name}: ${t} is not beside ${m.file} (a mutation dies by a test in the mutated file's folder)`,
        );
      }
      try {
        if (!statSync(join(root, t)).isFile()) throw new Error();
      } catch {
        problems.push(`${m.name}: the test ${t} does not exist`);
      }
    }
  }
  return problems;
}

/** The files a copy of the tree holds: tracked, and untracked ones git does not ignore. */
function treeFiles(root: string): string[] {
  const out = new Deno.Command("git", {
    args: ["ls-files", "-z", "--cached", "--others", "--exclude-standard"],
    cwd: root,
    stdout: "piped",
    stderr: "piped",
  }).outputSync();
  if (!out.success) {
    throw new Error(
      `git ls-files failed in ${root}: ${
        new TextDecoder().decode(out.stderr).trim()
      }`,
    );
  }
  return new TextDecoder().decode(out.stdout).split("\0").filter((f) => f);
}

/** Hard-link a directory tree (the copy's node_modules: shared, never written). */
function linkTree(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const e of readdirSync(from, { withFileTypes: true })) {
    const a = join(from, e.name), b = join(to, e.name);
    if (e.isDirectory()) linkTree(a, b);
    else if (e.isSymbolicLink()) {
      Deno.symlinkSync(Deno.readLinkSync(a), b);
    } else linkSync(a, b);
  }
}

/** Copy the tree at `root` to a new temporary directory; returns its path. */
export function copyTree(root: string = ROOT): string {
  const dir = Deno.makeTempDirSync({ prefix: "envsmith-mutate-" });
  for (const f of treeFiles(root)) {
    let st;
    try {
      st = Deno.lstatSync(join(root, f));
    } catch {
      continue; // deleted in the working tree, not yet in git
    }
    if (!st.isFile) continue;
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    cpSync(join(root, f), join(dir, f));
  }
  try {
    linkTree(join(root, "node_modules"), join(dir, "node_modules"));
  } catch (e) {
    if (!(e instanceof Deno.errors.NotFound)) throw e;
  }
  return dir;
}

/** Seconds a mutation's tests may take before the run counts as failed (a hang). */
export const TEST_TIMEOUT_S = 120;

/**
 * Run `deno test -A --no-check --fail-fast` on `tests` in `dir`: "pass", "fail", or
 * "timeout" (killed after `timeoutS` seconds: a mutation that makes a test
 * hang is caught by it).
 */
async function runTests(
  dir: string,
  tests: readonly string[],
  timeoutS = TEST_TIMEOUT_S,
): Promise<"pass" | "fail" | "timeout"> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["test", "-A", "--no-check", "--quiet", "--fail-fast", ...tests],
    cwd: dir,
    env: { NO_COLOR: "1", CI: "1" },
    stdin: "null",
    stdout: "null",
    stderr: "null",
  }).spawn();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    try {
      child.kill("SIGKILL");
    } catch { /* already exited */ }
  }, timeoutS * 1000);
  const status = await child.status;
  clearTimeout(timer);
  return timedOut ? "timeout" : status.success ? "pass" : "fail";
}

/** The outcome of one mutation. */
export interface MutationResult {
  /** The mutation's name. */
  name: string;
  /** The tests failed on the mutated code (or hung past the timeout). */
  killed: boolean;
  /** Killed by the timeout rather than a failing assertion. */
  timeout: boolean;
  /** Wall-clock seconds of its test run. */
  seconds: number;
}

/**
 * Apply each mutation in turn to the copy at `dir` (restoring the file
 * after), run its tests, and report.
 */
export async function runMutations(
  dir: string,
  list: readonly Mutation[],
  log: (line: string) => void = console.log,
): Promise<MutationResult[]> {
  const results: MutationResult[] = [];
  for (const m of list) {
    const path = join(dir, m.file);
    const original = Deno.readTextFileSync(path);
    Deno.writeTextFileSync(path, original.replace(m.from, () => m.to));
    const t0 = performance.now();
    let outcome: "pass" | "fail" | "timeout";
    try {
      outcome = await runTests(dir, m.tests, m.timeoutS ?? TEST_TIMEOUT_S);
    } finally {
      Deno.writeTextFileSync(path, original);
    }
    const seconds = (performance.now() - t0) / 1000;
    const pass = outcome === "pass";
    results.push({
      name: m.name,
      killed: !pass,
      timeout: outcome === "timeout",
      seconds,
    });
    log(
      `${
        pass ? "SURVIVED" : outcome === "timeout" ? "timeout " : "killed  "
      } ${m.name} (${m.file}; ${m.tests.join(" ")}) ${seconds.toFixed(1)}s`,
    );
  }
  return results;
}

function parseArgs(args: string[]) {
  let fast = false, baseline = true;
  let only: string[] | null = null;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--fast") fast = true;
    else if (a === "--no-baseline") baseline = false;
    else if (a === "--only" && i + 1 < args.length) {
      only = args[++i]!.split(",");
    } else if (a.startsWith("--only=")) only = a.slice(7).split(",");
    else {
      throw new Error(
        `mutate: unknown argument ${a} (use --fast, --only NAME[,NAME], --no-baseline)`,
      );
    }
  }
  return { fast, baseline, only };
}

async function main(args: string[]): Promise<number> {
  let opts;
  try {
    opts = parseArgs(args);
  } catch (e) {
    console.error((e as Error).message);
    return 2;
  }
  const problems = checkMutations(MUTATIONS);
  if (problems.length > 0) {
    for (const p of problems) console.error(`faults/mutations.ts: ${p}`);
    return 1;
  }
  let list = MUTATIONS.filter((m) => !opts.fast || m.fast);
  if (opts.only) {
    const unknown = opts.only.filter((n) =>
      !MUTATIONS.some((m) => m.name === n)
    );
    if (unknown.length > 0) {
      console.error(
        `mutate: no mutation named ${
          unknown.join(", ")
        } in faults/mutations.ts`,
      );
      return 2;
    }
    list = list.filter((m) => opts.only!.includes(m.name));
  }
  const t0 = performance.now();
  const dir = copyTree();
  try {
    console.log(
      `mutate: ${list.length} mutations on a copy of the tree (${
        ((performance.now() - t0) / 1000).toFixed(1)
      }s to copy)`,
    );
    if (opts.baseline) {
      const tests = [...new Set(list.flatMap((m) => m.tests))].sort();
      const b0 = performance.now();
      if ((await runTests(dir, tests, 600)) !== "pass") {
        console.error(
          `mutate: the named tests fail on the unmutated tree; fix them first (deno test -A ${
            tests.join(" ")
          })`,
        );
        return 1;
      }
      console.log(
        `baseline: ${tests.length} test files pass unmutated (${
          ((performance.now() - b0) / 1000).toFixed(1)
        }s)`,
      );
    }
    const results = await runMutations(dir, list);
    const survivors = results.filter((r) => !r.killed);
    console.log(
      `mutate: ${
        results.length - survivors.length
      } killed, ${survivors.length} survived, ${
        ((performance.now() - t0) / 1000).toFixed(0)
      }s in all`,
    );
    if (survivors.length > 0) {
      console.log(`survivors: ${survivors.map((r) => r.name).join(", ")}`);
      return 1;
    }
    return 0;
  } finally {
    Deno.removeSync(dir, { recursive: true });
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));
