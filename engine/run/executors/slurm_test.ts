import assert from "node:assert/strict";
import { join } from "node:path";
import { runOutputs, scaledMs, tmpProject } from "../../_test_util.ts";
import { BashSlurm, ScriptedSlurm } from "./_slurm_fake.ts";
import { type CommandContext, runCommand } from "../../cli/commands.ts";
import { readManifest } from "../../cache/manifest.ts";
import { fromFileUrl } from "../../paths.ts";
import { type Reporter, SilentReporter } from "../progress.ts";
import { resourcesOf, sbatchArgs, slurmExecutorKind } from "./slurm.ts";
import { errorFromLog } from "./remote.ts";
import { local } from "./local.ts";
import type { SlurmClient } from "./slurm_client.ts";
import { executeJob } from "../job.ts";
import { jobFromSpec } from "../job_spec.ts";
import { Store } from "../../cache/store.ts";
import { kinds } from "../../testdata/kinds.ts";
import type { NodeKind } from "../../types.ts";
import * as v from "valibot";

/** What a CLI would pass: the engine's test command line with the test kinds. */
const COMMAND = [
  "run",
  "-A",
  fromFileUrl(new URL("../../testdata/run_node.ts", import.meta.url)),
];

function ctxOf(
  cache: string,
  client: SlurmClient,
  extra: Partial<CommandContext> = {},
) {
  const err: string[] = [];
  const info: string[] = [];
  const silent = new SilentReporter();
  const reporter: Reporter = {
    start: () => silent.start(),
    progress: () => silent.progress(),
    waiting: () => silent.waiting(),
    end: () => silent.end(),
    info: (l) => void info.push(l),
    close: () => silent.close(),
  };
  const ctx: CommandContext = {
    kinds,
    cache,
    output: { out: () => {}, err: (l) => void err.push(l) },
    reporter,
    command: COMMAND,
    executors: [local, slurmExecutorKind({ client })],
    ...extra,
  };
  return { ctx, err, info };
}

const FAN = `experiment: fan
seed: 4
matrix:
  k: [1, 2, 3]
executor:
  type: slurm
  poll_seconds: 0.2
  resources: { mem: 100M, time: "0:30" }
  kinds:
    test.sleep: { cpus: 2, time: 2 }
nodes:
  a: { kind: test.add, with: { a: 1, b: 2 } }
  b: { kind: test.add, with: { a: $a.sum, b: $matrix.k } }
  c: { kind: test.sleep, with: { ms: 20, steps: 2, value: $b.sum } }
`;

/** Runs the job of `key` from its spec in `store`, as a compute node would. */
function runJobOf(store: Store, key: string): void {
  const job = jobFromSpec(store, key, new Map(kinds.map((k) => [k.name, k])));
  void executeJob(job, store);
}

Deno.test("slurm executor (bash fake cluster): same keys and outputs as local, fan-outs as job arrays, names, logs, jobs.tsv", async () => {
  await using t = await tmpProject(FAN);
  const local = join(t.dir, "local");
  const lr = await runCommand(ctxOf(local, new ScriptedSlurm()).ctx, t.file, {
    executor: "local",
  });
  assert.equal(lr.code, 0);
  const fake = new BashSlurm();
  const { ctx } = ctxOf(t.cache, fake);
  const sr = await runCommand(ctx, t.file);
  await fake.settle();
  assert.equal(sr.code, 0);
  assert.deepEqual(
    runOutputs(t.cache, sr.result.manifestPath),
    runOutputs(local, lr.result.manifestPath),
  );
  const m = readManifest(sr.result.manifestPath)!;
  assert.equal(m.executor, "slurm");
  assert.deepEqual(m.counts, { done: 7 });
  // a alone, then the three b nodes as one array (they become ready together).
  const names = fake.submissions.map((s) =>
    s.args.find((a) => a.startsWith("--job-name="))
  );
  assert.equal(names[0], "--job-name=envsmith:fan:a");
  assert.equal(names[1], "--job-name=envsmith:fan:b[*]");
  assert.ok(fake.submissions[1]!.args.includes("--array=0-2"));
  // resources: every node gets the executor's, test.sleep its own
  assert.ok(fake.submissions[0]!.args.includes("--mem=100M"));
  assert.ok(fake.submissions[0]!.args.includes("--time=0:30"));
  const cSub = fake.submissions.filter((s) =>
    s.args.some((a) => a.includes(":c"))
  );
  assert.ok(cSub.length >= 1);
  for (const s of cSub) {
    assert.ok(s.args.includes("--cpus-per-task=2"));
    assert.ok(s.args.includes("--time=2"));
  }
  const dir = join(t.cache, "runs", "fan", m.run, "slurm");
  const rows = Deno.readTextFileSync(join(dir, "jobs.tsv")).trim().split("\n");
  assert.equal(rows.length, 7);
  for (const n of m.nodes) {
    assert.match(n.job ?? "", /^\d+(_\d)?$/);
    const log = Deno.readTextFileSync(join(t.cache, n.log!));
    assert.match(log, new RegExp(`# envsmith node .* key ${n.key}: slurm job`));
    const status = JSON.parse(
      Deno.readTextFileSync(
        join(
          dir,
          `${n.id.replace(/[^A-Za-z0-9._=,+-]/g, "_")}.${
            n.key.slice(0, 12)
          }.status`,
        ),
      ),
    );
    assert.equal(status.rc, 0);
  }
  // A rerun submits nothing.
  const before = fake.submissions.length;
  const again = await runCommand(ctx, t.file);
  assert.equal(again.code, 0);
  assert.deepEqual(again.result.manifest.counts, { cached: 7 });
  assert.equal(fake.submissions.length, before);
});

Deno.test("slurm executor: a failing job is reported with job id, state, reason, error and log; dependents blocked", async () => {
  const yaml = `experiment: f
seed: 1
executor: { type: slurm, poll_seconds: 0.2 }
nodes:
  ok: { kind: test.add, with: { a: 1 } }
  bad: { kind: test.fail, with: { message: "boom on the cluster", input: $ok.sum } }
  after: { kind: test.add, with: { a: 1, note: $bad } }
`;
  await using t = await tmpProject(yaml);
  const fake = new BashSlurm();
  const { ctx, err } = ctxOf(t.cache, fake);
  const r = await runCommand(ctx, t.file);
  await fake.settle();
  assert.equal(r.code, 1);
  const f = r.result.failures[0]!;
  assert.equal(f.id, "bad");
  assert.match(
    f.message,
    /^slurm job (\d+) FAILED \(reason NonZeroExitCode, exit 1:0.*\): boom on the cluster$/,
  );
  assert.match(f.details.slurm!, /^job \d+ FAILED \(reason NonZeroExitCode\)/);
  assert.match(Deno.readTextFileSync(f.log), /boom on the cluster/);
  const text = err.join("\n");
  assert.match(text, /✗ node {4}bad/);
  assert.match(text, new RegExp(`  log {5}${f.log}`));
  assert.match(text, / {2}slurm {3}job \d+ FAILED/);
  const st = Object.fromEntries(
    r.result.manifest.nodes.map((n) => [n.id, n.status]),
  );
  assert.deepEqual(st, { ok: "done", bad: "failed", after: "blocked" });
  assert.equal(
    r.result.manifest.nodes.find((n) => n.id === "bad")!.job,
    f.job,
  );
});

Deno.test("slurm executor: an interrupt scancels the run's jobs and exits 130; the rerun finishes", async () => {
  const yaml = `experiment: i
seed: 1
executor: { type: slurm, poll_seconds: 0.2 }
nodes:
  long: { kind: test.sleep, with: { ms: 30000, steps: 300 } }
  after: { kind: test.add, with: { a: $long.seed } }
`;
  await using t = await tmpProject(yaml);
  const fake = new BashSlurm();
  const controller = new AbortController();
  const { ctx, info } = ctxOf(t.cache, fake, { signal: controller.signal });
  const t0 = performance.now();
  const running = runCommand(ctx, t.file);
  while (fake.jobs.size === 0) await new Promise((r) => setTimeout(r, 50));
  await new Promise((r) => setTimeout(r, 1500)); // let run-node start
  controller.abort();
  const r = await running;
  await fake.settle();
  assert.equal(r.code, 130);
  assert.ok(performance.now() - t0 < scaledMs(15_000));
  const id = [...fake.jobs.keys()][0]!;
  assert.deepEqual(fake.cancelled, [id]);
  assert.ok(info.some((l) => l === `scancel ${id} (interrupted)`));
  assert.equal(r.result.manifest.status, "interrupted");
  // The cancelled job's script recorded the signal.
  const status = [...Deno.readDirSync(
    join(t.cache, "runs", "i", r.result.manifest.run, "slurm"),
  )].find((e) => e.name.endsWith(".status"))!;
  const s = JSON.parse(
    Deno.readTextFileSync(
      join(t.cache, "runs", "i", r.result.manifest.run, "slurm", status.name),
    ),
  );
  assert.equal(s.signal, "TERM");
  assert.notEqual(s.rc, 0);
  // A rerun (short sleep now) completes the graph.
  Deno.writeTextFileSync(t.file, yaml.replace("ms: 30000", "ms: 10"));
  const again = await runCommand(ctxOf(t.cache, fake).ctx, t.file);
  await fake.settle();
  assert.equal(again.code, 0);
  assert.deepEqual(again.result.manifest.counts, { done: 2 });
});

const ONE = `experiment: one
seed: 1
executor: { type: slurm, poll_seconds: 0.1, grace_seconds: 0.4 }
nodes:
  n: { kind: test.add, with: { a: 1 } }
`;

Deno.test("slurm executor: a job that vanishes from the queue without entry or status is reported lost", async () => {
  await using t = await tmpProject(ONE);
  const fake = new ScriptedSlurm(); // knows no job: it vanished at once
  const r = await runCommand(ctxOf(t.cache, fake).ctx, t.file);
  assert.equal(r.code, 1);
  assert.match(
    r.result.failures[0]!.message,
    /^slurm job 500 vanished from the queue without storing its entry or an exit status \(lost/,
  );
});

/**
 * A run of ONE on a fake queue that shows every submitted job in `state`, for
 * `reason`, on `nodes`; the run's outcome and the fake.
 */
async function runOneShownAs(state: string, reason: string, nodes: string) {
  await using t = await tmpProject(ONE);
  const fake = new ScriptedSlurm();
  fake.onSubmit = (id) => fake.states!.set(id, { id, state, reason, nodes });
  const r = await runCommand(ctxOf(t.cache, fake).ctx, t.file);
  return { r, fake };
}

Deno.test("slurm executor: a job that can never start (PartitionTimeLimit) is cancelled and reported", async () => {
  const { r, fake } = await runOneShownAs("PENDING", "PartitionTimeLimit", "");
  assert.equal(r.code, 1);
  assert.deepEqual(fake.cancelled, ["500"]);
  assert.match(
    r.result.failures[0]!.message,
    /slurm job 500 can never start \(reason PartitionTimeLimit\)/,
  );
});

Deno.test("slurm executor: a job that completes without the entry appearing points at the shared cache", async () => {
  const { r } = await runOneShownAs("COMPLETED", "None", "n1");
  assert.equal(r.code, 1);
  assert.match(
    r.result.failures[0]!.message,
    /exited 0 but the entry of n did not appear in .* is the cache directory the same shared directory on the compute node\?/,
  );
});

Deno.test("slurm executor: without squeue answers, the entry appearing in the cache still completes the node", async () => {
  await using t = await tmpProject(ONE);
  const fake = new ScriptedSlurm();
  fake.states = null;
  const store = new Store(t.cache);
  fake.onSubmit = (_id, script) => {
    const key = /keys=\(([0-9a-f]{64})\)/.exec(
      Deno.readTextFileSync(script),
    )![1]!;
    // what the job would do, a little later
    setTimeout(() => {
      runJobOf(store, key);
    }, 300);
  };
  const { ctx, info } = ctxOf(t.cache, fake);
  const r = await runCommand(ctx, t.file);
  assert.equal(r.code, 0);
  assert.deepEqual(r.result.manifest.counts, { done: 1 });
  assert.equal(info.filter((l) => /squeue did not answer/.test(l)).length, 1);
});

Deno.test("slurm executor: sbatch refusing a job fails the node with sbatch's message", async () => {
  await using t = await tmpProject(ONE);
  const fake = new ScriptedSlurm();
  fake.submitError =
    "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified";
  const r = await runCommand(ctxOf(t.cache, fake).ctx, t.file);
  assert.equal(r.code, 1);
  assert.match(
    r.result.failures[0]!.message,
    /^sbatch failed: sbatch: error: Batch job submission failed: Invalid account/,
  );
});

Deno.test("slurm executor: --executor local overrides the file's slurm block; the resume line keeps --executor", async () => {
  await using t = await tmpProject(ONE.replace(
    "n: { kind: test.add, with: { a: 1 } }",
    "n: { kind: test.fail, with: { message: x } }",
  ));
  const fake = new ScriptedSlurm();
  const { ctx, err } = ctxOf(t.cache, fake);
  const r = await runCommand(ctx, t.file, { executor: "local" });
  assert.equal(r.code, 1);
  assert.equal(fake.submissions.length, 0);
  assert.equal(r.result.failures[0]!.message, "x");
  assert.match(
    err.join("\n"),
    /resume {2}\.\/envsmith run \S+ --only n --executor local/,
  );
});

Deno.test("resources: kind entries override the executor's, flags add up; sbatch args", () => {
  const spec = {
    type: "slurm" as const,
    partition: "cpu",
    account: "proj",
    qos: "normal",
    sbatch: ["--nice=10"],
    resources: { cpus: 1, mem: 512, time: 30, sbatch: ["--constraint=avx2"] },
    kinds: {
      train: {
        cpus: 4,
        mem: "8G",
        time: "4:00:00",
        partition: "gpu",
        sbatch: ["--exclusive"],
      },
      "train.lm": { partition: "gpu", gres: "gpu:1", time: 120 },
    },
  };
  assert.deepEqual(sbatchArgs(spec, resourcesOf(spec, "rollout")), [
    "--partition=cpu",
    "--account=proj",
    "--qos=normal",
    "--cpus-per-task=1",
    "--mem=512M",
    "--time=30",
    "--nice=10",
    "--constraint=avx2",
  ]);
  assert.deepEqual(sbatchArgs(spec, resourcesOf(spec, "train")), [
    "--partition=gpu",
    "--account=proj",
    "--qos=normal",
    "--cpus-per-task=4",
    "--mem=8G",
    "--time=4:00:00",
    "--nice=10",
    "--constraint=avx2",
    "--exclusive",
  ]);
  assert.deepEqual(sbatchArgs(spec, resourcesOf(spec, "train.lm")), [
    "--partition=gpu",
    "--account=proj",
    "--qos=normal",
    "--cpus-per-task=1",
    "--mem=512M",
    "--time=120",
    "--gres=gpu:1",
    "--nice=10",
    "--constraint=avx2",
  ]);
  assert.deepEqual(
    sbatchArgs({ type: "slurm" }, resourcesOf({ type: "slurm" }, "x")),
    [],
  );
});

Deno.test("errorFromLog: run-node's error line, else the last meaningful line", () => {
  const block = [
    "# envsmith node x key k: slurm job 3 on h",
    "[12:00:00] start x",
    "✗ node x",
    "  key     k",
    "  error   first line",
    "          second line",
    "  log     /c/logs/k.log",
  ].join("\n");
  assert.equal(errorFromLog(block), "first line second line");
  assert.equal(
    errorFromLog("# head\n[12:00:00] start x\nNo job spec for key k\n\n"),
    "No job spec for key k",
  );
  assert.equal(errorFromLog("# only a header\n"), null);
});

Deno.test("slurm executor: an interrupt while sbatch is still running cancels the job sbatch then creates", async () => {
  await using t = await tmpProject(ONE);
  const fake = new ScriptedSlurm();
  fake.submitDelayMs = 400;
  const controller = new AbortController();
  const { ctx } = ctxOf(t.cache, fake, { signal: controller.signal });
  const running = runCommand(ctx, t.file);
  await new Promise((r) => setTimeout(r, 150)); // sbatch in flight
  controller.abort();
  const r = await running;
  assert.equal(r.code, 130);
  await new Promise((r) => setTimeout(r, 500)); // sbatch returns
  assert.equal(fake.submissions.length, 1);
  assert.deepEqual(fake.cancelled, ["500"]);
});

Deno.test("slurm executor: a node that is not cacheable runs in this process, not on Slurm", async () => {
  const uncacheable: NodeKind<{ x: number }> = {
    name: "test.uncacheable",
    description: "its fingerprint cannot be computed",
    params: v.strictObject({ x: v.number() }),
    module: import.meta.url,
    fingerprint: () => {
      throw new Error("no fingerprint");
    },
    run: (p) => Promise.resolve({ value: { x: p.x + 1 } }),
  };
  const yaml = ONE.replace(
    "n: { kind: test.add, with: { a: 1 } }",
    "n: { kind: test.uncacheable, with: { x: 1 } }",
  );
  await using t = await tmpProject(yaml);
  const fake = new ScriptedSlurm();
  const { ctx, info } = ctxOf(t.cache, fake, {
    kinds: [...kinds, uncacheable],
  });
  const r = await runCommand(ctx, t.file);
  assert.equal(r.code, 0);
  assert.equal(fake.submissions.length, 0);
  assert.ok(
    info.some((l) => /n is not cacheable, so it runs in this process/.test(l)),
  );
  assert.deepEqual(r.result.manifest.counts, { done: 1 });
});

Deno.test("slurm executor: a job killed and requeued by Slurm (preemption) is waited for, not reported", async () => {
  await using t = await tmpProject(ONE);
  const fake = new ScriptedSlurm();
  const store = new Store(t.cache);
  fake.onSubmit = (id, script) => {
    const text = Deno.readTextFileSync(script);
    const key = /keys=\(([0-9a-f]{64})\)/.exec(text)![1]!;
    const status = /statuses=\((\S+)\)/.exec(text)![1]!;
    // first attempt: SIGTERM, exit status written; Slurm requeues the job
    Deno.writeTextFileSync(
      status,
      `{"rc":143,"signal":"TERM","host":"n1","job":"${id}","end":"x"}`,
    );
    fake.states!.set(id, {
      id,
      state: "PENDING",
      reason: "BeginTime",
      nodes: "",
    });
    setTimeout(() => {
      // second attempt runs and stores the entry
      fake.states!.set(id, {
        id,
        state: "RUNNING",
        reason: "None",
        nodes: "n2",
      });
      runJobOf(store, key);
    }, 1500);
  };
  const r = await runCommand(ctxOf(t.cache, fake).ctx, t.file);
  assert.equal(r.code, 0, r.result.failures.map((f) => f.message).join());
  assert.deepEqual(r.result.manifest.counts, { done: 1 });
});

Deno.test("slurm executor: a node another process is computing is waited for, not submitted", async () => {
  await using t = await tmpProject(ONE);
  // the same node computed elsewhere, to appear in this cache later
  const other = join(t.dir, "other");
  const lr = await runCommand(ctxOf(other, new ScriptedSlurm()).ctx, t.file, {
    executor: "local",
  });
  const key = lr.result.manifest.nodes[0]!.key;
  const store = new Store(t.cache);
  const lock = store.lock(key, "n in another run");
  assert.ok("release" in lock);
  const fake = new ScriptedSlurm();
  setTimeout(() => {
    const from = new Store(other).entryPath(key);
    const to = store.entryPath(key);
    Deno.mkdirSync(join(to, ".."), { recursive: true });
    Deno.copyFileSync(from, to);
    lock.release();
  }, 600);
  const r = await runCommand(ctxOf(t.cache, fake).ctx, t.file);
  assert.equal(r.code, 0);
  assert.equal(fake.submissions.length, 0);
  assert.deepEqual(r.result.manifest.counts, { cached: 1 });
});
