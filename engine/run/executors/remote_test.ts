import assert from "node:assert/strict";
import { join } from "node:path";
import { runOutputs, tmpProject } from "../../_test_util.ts";
import {
  type CommandContext,
  planCommand,
  runCommand,
} from "../../cli/commands.ts";
import {
  checkExecutor,
  type ExecutorKind,
  executorsOfModule,
  missingPrograms,
  registerExecutors,
} from "../executor.ts";
import { UserError } from "../../errors.ts";
import { readManifest } from "../../cache/manifest.ts";
import { fromFileUrl } from "../../paths.ts";
import { SilentReporter } from "../progress.ts";
import { kinds } from "../../testdata/kinds.ts";
import { executors as builtinExecutors } from "./builtin.ts";
import { remoteExecutorKind } from "./remote.ts";
import { experimentJsonSchema } from "../../compile/json_schema.ts";
import * as plugin from "../../testdata/executors.ts";

const PLUGIN = fromFileUrl(
  new URL("../../testdata/executors.ts", import.meta.url),
);

/** The registry a `plugins:` entry naming the test module gives. */
function registry(): ExecutorKind[] {
  return registerExecutors(
    builtinExecutors,
    executorsOfModule(plugin, PLUGIN),
    PLUGIN,
  );
}

function ctxOf(
  cache: string,
  extra: Partial<CommandContext> = {},
): { ctx: CommandContext; err: string[]; out: string[] } {
  const err: string[] = [], out: string[] = [];
  return {
    ctx: {
      kinds,
      cache,
      output: { out: (l) => void out.push(l), err: (l) => void err.push(l) },
      reporter: new SilentReporter(),
      command: [
        "run",
        "-A",
        fromFileUrl(new URL("../../testdata/run_node.ts", import.meta.url)),
      ],
      executors: registry(),
      ...extra,
    },
    err,
    out,
  };
}

const FAN = `experiment: procfan
seed: 3
matrix:
  k: [1, 2, 3, 4, 5]
executor: { type: proc, batch: 3, poll_seconds: 0.1 }
nodes:
  a: { kind: test.add, with: { a: 1, b: 2 } }
  b: { kind: test.add, with: { a: $a.sum, b: $matrix.k } }
  c: { kind: test.add, with: { a: $b.sum, b: 10 } }
`;

Deno.test("remote base: a user-defined executor, registered as a plugin module's, runs a graph with the same outputs as local", async () => {
  await using t = await tmpProject(FAN);
  const local = join(t.dir, "local");
  const lr = await runCommand(ctxOf(local).ctx, t.file, { executor: "local" });
  assert.equal(lr.code, 0);
  const before = plugin.procSubmissions.length;
  const { ctx } = ctxOf(t.cache);
  const r = await runCommand(ctx, t.file);
  assert.equal(r.code, 0, r.result.failures.map((f) => f.message).join("\n"));
  assert.deepEqual(
    runOutputs(t.cache, r.result.manifestPath),
    runOutputs(local, lr.result.manifestPath),
  );
  const m = readManifest(r.result.manifestPath)!;
  assert.equal(m.executor, "proc");
  assert.deepEqual(m.counts, { done: 11 });
  // a alone; the five b nodes, ready together, in submissions of at most 3
  const subs = plugin.procSubmissions.slice(before);
  assert.equal(subs[0], "envsmith:procfan:a");
  assert.deepEqual(
    subs.filter((s) => s.startsWith("envsmith:procfan:b")),
    ["envsmith:procfan:b[*]", "envsmith:procfan:b[*]"],
  );
  for (const n of m.nodes) {
    assert.match(n.job ?? "", /^\d+(\.\d)?$/);
    const log = Deno.readTextFileSync(join(t.cache, n.log!));
    assert.match(log, new RegExp(`# envsmith node .* key ${n.key}: proc job`));
  }
  const rows = Deno.readTextFileSync(
    join(t.cache, "runs", "procfan", m.run, "proc", "jobs.tsv"),
  ).trim().split("\n");
  assert.equal(rows.length, 11);
  // A rerun submits nothing.
  const n = plugin.procSubmissions.length;
  const again = await runCommand(ctx, t.file);
  assert.deepEqual(again.result.manifest.counts, { cached: 11 });
  assert.equal(plugin.procSubmissions.length, n);
});

Deno.test("remote base: a failing job of a user-defined executor is reported with its id, state, exit and the log's error; dependents blocked", async () => {
  await using t = await tmpProject(`experiment: procfail
seed: 1
executor: { type: proc, poll_seconds: 0.1 }
nodes:
  bad: { kind: test.fail, with: { message: "boom in a process" } }
  after: { kind: test.add, with: { a: 1, note: $bad } }
`);
  const { ctx } = ctxOf(t.cache);
  const r = await runCommand(ctx, t.file);
  assert.equal(r.code, 1);
  const f = r.result.failures[0]!;
  assert.match(
    f.message,
    /^proc job \d+ FAILED \(exit 1\): boom in a process$/,
  );
  assert.match(f.details.proc!, /^job \d+ FAILED on localhost$/);
  assert.deepEqual(
    Object.fromEntries(r.result.manifest.nodes.map((n) => [n.id, n.status])),
    { bad: "failed", after: "blocked" },
  );
});

Deno.test("registration: names are unique across modules, kinds are checked, the export must be an array", () => {
  const reg = registry();
  assert.deepEqual(reg.map((e) => e.name), ["local", "slurm", "proc"]);
  assert.throws(
    () => registerExecutors(reg, [plugin.proc], "other.ts"),
    (e) =>
      e instanceof UserError &&
      e.message ===
        `other.ts: an executor named "proc" is already registered by ${
          new URL("../../testdata/executors.ts", import.meta.url).href
        }; rename it`,
  );
  assert.throws(
    () => registerExecutors(reg, [{ ...plugin.proc, name: "slurm" }], "x.ts"),
    /x\.ts: an executor named "slurm" is already registered by .*slurm\.ts; rename it/,
  );
  assert.throws(
    () => registerExecutors(reg, [{ ...plugin.proc, name: "local" }], "y.ts"),
    /y\.ts: an executor named "local" is already registered by .*executors\/local\.ts; rename it/,
  );
  assert.throws(
    () =>
      registerExecutors(
        reg,
        [{ name: "pbs", description: "d", create() {} }],
        "p.ts",
      ),
    /^UserError: p\.ts: executors\[0\]: executor "pbs" has no block schema/,
  );
  assert.throws(
    () =>
      registerExecutors(reg, [{ ...plugin.proc, name: "Bad Name" }], "p.ts"),
    /p\.ts: executors\[0\]: its name must be lower-case/,
  );
  assert.throws(
    () => executorsOfModule({ executors: plugin.proc }, "m.ts"),
    /m\.ts: "executors" must be an array/,
  );
  assert.deepEqual(executorsOfModule({ kinds: [] }, "m.ts"), []);
  // a registered executor's block is in the JSON Schema
  const types = JSON.stringify(experimentJsonSchema(kinds, reg));
  assert.match(types, /"const":"proc"/);
  assert.doesNotMatch(
    JSON.stringify(experimentJsonSchema(kinds, builtinExecutors)),
    /"const":"proc"/,
  );
});

Deno.test("missingPrograms: executable files on the given PATH only", async () => {
  const dir = await Deno.makeTempDir();
  try {
    Deno.writeTextFileSync(join(dir, "qsub"), "#!/bin/sh\n", { mode: 0o755 });
    Deno.writeTextFileSync(join(dir, "qstat"), "not executable", {
      mode: 0o644,
    });
    assert.deepEqual(
      missingPrograms(["qsub", "qstat", "qdel"], `/nonexistent:${dir}`),
      ["qstat", "qdel"],
    );
    assert.deepEqual(missingPrograms(["qsub"], ""), ["qsub"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/** An executor whose program this machine does not have. */
const needsMissing = remoteExecutorKind({
  name: "lsf",
  description: "needs a program nobody has",
  spec: plugin.proc.spec as never,
  programs: ["envsmith-no-such-bsub", "bash"],
  programsFix: "run envsmith on an LSF login node",
  backend: () => {
    throw new Error("never created: the check comes first");
  },
});

Deno.test("a missing program is reported once, at plan and before run, naming the executor and the fix; nothing runs", async () => {
  await using t = await tmpProject(FAN);
  const { ctx, out } = ctxOf(t.cache, {
    executors: [...registry(), needsMissing],
  });
  await assert.rejects(
    () => planCommand(ctx, t.file, { executor: "lsf" }),
    (e) =>
      e instanceof UserError &&
      e.message ===
        "--executor lsf: envsmith-no-such-bsub is not on PATH on this machine; run envsmith on an LSF login node",
  );
  assert.deepEqual(out, []);
  await assert.rejects(
    () => runCommand(ctx, t.file, { executor: "lsf" }),
    /^UserError: --executor lsf: envsmith-no-such-bsub is not on PATH/,
  );
  assert.throws(
    () => Deno.statSync(join(t.cache, "runs")),
    Deno.errors.NotFound,
  );
  // from the file's block: the file is named
  assert.throws(
    () =>
      checkExecutor(ctx.executors!, {
        file: "exp.yaml",
        executor: { type: "lsf" },
      }),
    /^UserError: exp\.yaml: executor lsf: envsmith-no-such-bsub is not on PATH/,
  );
  // plan of an executor whose workers share the cache says so once
  const { ctx: c2, err } = ctxOf(t.cache);
  assert.equal(await planCommand(c2, t.file), 0);
  assert.equal(
    err.filter((l) =>
      /^executor proc: .* must be on a file system the workers share$/.test(l)
    ).length,
    1,
  );
});
