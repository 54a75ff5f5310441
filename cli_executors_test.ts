/**
 * Executors at the command line: the registry reaches `--help`, a
 * user-defined executor runs an experiment, and an executor whose program
 * is missing stops `plan` and `run` with one line (exit 2).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { main } from "./cli.ts";
import { SilentReporter } from "@envsmith/engine/run";
import { kinds as testKinds } from "./engine/testdata/kinds.ts";
import { executors as testExecutors } from "./engine/testdata/executors.ts";
import { lastManifest, tmpExperiment } from "./_test_util.ts";

async function cli(args: string[], withProc = false, path?: string) {
  const out: string[] = [], err: string[] = [];
  const code = await main(args, {
    kinds: testKinds,
    reporter: new SilentReporter(),
    output: { out: (l) => out.push(l), err: (l) => err.push(l) },
    ...(withProc ? { executors: testExecutors } : {}),
    // a PATH for the commands' checks only (the process's is left alone:
    // test files run in parallel)
    ...(path !== undefined
      ? { env: (n: string) => n === "PATH" ? path : Deno.env.get(n) }
      : {}),
  });
  return { code, out, err };
}

const SLURM = `experiment: nosbatch
seed: 1
executor: { type: slurm }
nodes:
  a: { kind: test.add, with: { a: 1 } }
  b: { kind: test.add, with: { a: $a.sum } }
  c: { kind: test.add, with: { a: $a.sum, b: 2 } }
`;

Deno.test("cli: sbatch missing is one line at plan and at run, naming the executor and the fix; exit 2, nothing run", async () => {
  await using p = await tmpExperiment("executors", SLURM);
  const { dir, file, cache } = p;
  for (const cmd of ["plan", "run"]) {
    const r = await cli(["--cache", cache, cmd, file], false, dir);
    assert.equal(r.code, 2, cmd);
    assert.deepEqual(r.out, [], cmd);
    assert.deepEqual(r.err, [
      `${file}: executor slurm: sbatch, squeue, scontrol, scancel are not on PATH on this machine; run envsmith where the Slurm client commands are (e.g. a login node of the cluster), or choose another executor (--executor local)`,
    ], cmd);
  }
  const viaFlag = await cli(
    ["--cache", cache, "plan", "--executor", "slurm", file],
    false,
    dir,
  );
  assert.equal(viaFlag.code, 2);
  assert.match(viaFlag.err.join("\n"), /^--executor slurm: sbatch, /);
  assert.throws(
    () => Deno.statSync(join(cache, "runs")),
    Deno.errors.NotFound,
  );
  // --executor local needs nothing: the same file plans and runs
  const local = await cli(
    ["--cache", cache, "run", "--executor", "local", file],
    false,
    dir,
  );
  assert.equal(local.code, 0, local.err.join("\n"));
});

Deno.test("cli: --help lists the registered executors, a user-defined one included; unknown names get a did-you-mean", async () => {
  const plain = await cli(["run", "--help"]);
  assert.equal(plain.code, 0);
  const help = plain.out.join("\n").replace(/\s+/g, " ");
  assert.match(
    help,
    /--executor <name> where nodes run .*local: nodes run on this machine/,
  );
  assert.match(
    help,
    /\. slurm: one sbatch job per node .* over a shared cache directory\./,
  );
  assert.doesNotMatch(help, /proc/);
  const withProc = (await cli(["run", "--help"], true)).out.join("\n")
    .replace(/\s+/g, " ");
  assert.match(
    withProc,
    /\. proc: each node a detached process on this machine \(tests\)\./,
  );
  await using p = await tmpExperiment("executors", SLURM);
  const { file } = p;
  const r = await cli(["plan", "--executor", "slurn", file]);
  assert.equal(r.code, 2);
  assert.match(
    r.err.join("\n"),
    /Unknown executor "slurn": use local or slurm.*"slurm"/,
  );
});

Deno.test("cli: a user-defined executor runs an experiment end to end (--executor proc)", async () => {
  await using p = await tmpExperiment(
    "executors",
    SLURM.replace("{ type: slurm }", "{ type: proc, poll_seconds: 0.1 }"),
  );
  const { file, cache } = p;
  const r = await cli(["--cache", cache, "run", file], true);
  assert.equal(r.code, 0, r.err.join("\n"));
  const m = lastManifest(cache, "nosbatch");
  assert.equal(m.executor, "proc");
  assert.deepEqual(m.counts, { done: 3 });
  assert.ok(m.nodes.every((n) => /^\d+(\.\d)?$/.test(n.job ?? "")));
});
