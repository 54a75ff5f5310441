/**
 * Integration tests of `run --executor slurm` against a real Slurm cluster
 * (`.ci/run` starts a single-node one). Skipped, with the reason in the test
 * name, when sbatch is not on PATH or no controller answers.
 *
 * The time-limit case cannot be shorter than Slurm allows: limits are whole
 * minutes and the controller checks them every 30 s, so that run takes 60 to
 * 90 s; it is started first and the other cases run meanwhile.
 */
import assert from "node:assert/strict";
import { SMOKE_NODES, smokeYaml } from "./experiments/smoke.ts";
import { join } from "node:path";
import { canonicalJson } from "@envsmith/engine/hash";
import { readManifest, Store } from "@envsmith/engine/cache";
import {
  builtinExecutors,
  type SlurmExecutorSpec,
  slurmUnavailable,
} from "@envsmith/engine/executor";
import { kinds as testKinds } from "./engine/testdata/kinds.ts";
import { lastManifest, runCli } from "./_test_util.ts";

const UNAVAILABLE = await slurmUnavailable();
const TAG = UNAVAILABLE ? ` [skipped: ${UNAVAILABLE}]` : "";

const cli = (args: string[]) => runCli(args, { kinds: testKinds });

/** A report without wall-clock measurements (e.g. train's `seconds`), which differ between any two runs. */
function _untimed(x: unknown): unknown {
  if (Array.isArray(x)) return x.map(_untimed);
  if (x === null || typeof x !== "object") return x;
  return Object.fromEntries(
    Object.entries(x).filter(([k]) => !/^(seconds|ms|elapsed)$/.test(k))
      .map(([k, v]) => [k, _untimed(v)]),
  );
}

/**
 * Node id -> "key value report" of the newest run of `experiment`: the value
 * (what dependents read, blob hashes included) byte for byte, the report
 * without its wall-clock fields.
 */
function outputs(cache: string, experiment: string): Record<string, string> {
  const store = new Store(cache);
  const dir = join(cache, "runs", experiment);
  const last = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) =>
    n.endsWith(".json")
  ).sort().pop()!;
  const m = readManifest(join(dir, last))!;
  const out: Record<string, string> = {};
  for (const n of m.nodes) {
    const e = store.loadVerified(n.key);
    assert.ok(e, `${n.id} has no entry`);
    out[n.id] = `${n.key} ${canonicalJson(e.value)} ${
      canonicalJson(_untimed(e.report ?? null) as never)
    }`;
  }
  return out;
}

async function squeue(): Promise<
  { id: string; name: string; state: string }[]
> {
  const r = await new Deno.Command("squeue", {
    args: ["-h", "-r", "-o", "%i|%j|%T"],
    stdout: "piped",
    stderr: "null",
  }).output();
  return new TextDecoder().decode(r.stdout).split("\n").filter((l) => l)
    .map((l) => {
      const [id, name, state] = l.split("|");
      return { id: id!, name: name!, state: state! };
    });
}

/**
 * Runs the experiment `file` locally into the cache `<prefix>-local` and on
 * Slurm into `<prefix>-slurm`, asserting that both succeed; the two caches.
 */
async function runLocallyAndOnSlurm(
  file: string,
  prefix: string,
): Promise<{ local: string; slurm: string }> {
  const caches = { local: `${prefix}-local`, slurm: `${prefix}-slurm` };
  const local = await cli([
    "--cache",
    caches.local,
    "run",
    file,
    "--executor",
    "local",
  ]);
  assert.equal(local.code, 0, local.err);
  const slurm = await cli(["--cache", caches.slurm, "run", file]);
  assert.equal(slurm.code, 0, slurm.err);
  return caches;
}

const SUFFIX = `${Deno.pid}`;

/**
 * Writes the experiment named `it-<stem>-<pid>`, whose text `text` makes from
 * that name, to `<dir>/<stem>.yaml`.
 */
function writeExperiment(
  dir: string,
  stem: string,
  text: (name: string) => string,
): { file: string; name: string } {
  const name = `it-${stem}-${SUFFIX}`;
  const file = join(dir, `${stem}.yaml`);
  Deno.writeTextFileSync(file, text(name));
  return { file, name };
}
// Memory is given: a cluster without DefMemPerCPU gives a job the whole node.
const EXECUTOR = (extra = "") =>
  `executor:\n  type: slurm\n  poll_seconds: 0.5\n  resources: { mem: 256M, time: 10 }\n${extra}`;

Deno.test({
  name: `cli --executor slurm against a real cluster${TAG}`,
  ignore: UNAVAILABLE !== null,
  sanitizeOps: false,
  sanitizeResources: false,
  async fn(t) {
    const dir = await Deno.makeTempDir({ prefix: "envsmith-slurm-" });
    try {
      // Started first: a node over its time limit (1 minute, the least Slurm knows).
      const tl = writeExperiment(
        dir,
        "timelimit",
        (name) =>
          `experiment: ${name}\nseed: 1\n${
            EXECUTOR("  kinds:\n    test.sleep: { time: 1 }\n")
          }nodes:\n  slow: { kind: test.sleep, with: { ms: 300000, steps: 300 } }\n`,
      );
      const timelimit = cli(["--cache", join(dir, "c-tl"), "run", tl.file]);

      await t.step(
        "test kinds: same keys and outputs as local, fan-out as a job array",
        async () => {
          const { file, name } = writeExperiment(
            dir,
            "fan",
            (name) =>
              `experiment: ${name}\nseed: 9\nmatrix:\n  k: [1, 2, 3]\n${EXECUTOR()}nodes:
  a: { kind: test.add, with: { a: 1, b: 2 } }
  b: { kind: test.add, with: { a: $a.sum, b: $matrix.k } }
  c: { kind: test.blob, with: { size: 4096 } }
  d: { kind: test.blob, with: { read: $c.blob } }
  e: { kind: test.sleep, with: { ms: 20, value: [$b.sum, $d.sum] } }
`,
          );
          const caches = await runLocallyAndOnSlurm(file, join(dir, "c"));
          assert.deepEqual(
            outputs(caches.slurm, name),
            outputs(caches.local, name),
          );
          const m = lastManifest(caches.slurm, name);
          assert.equal(m.executor, "slurm");
          const jobs = m.nodes.map((n) => n.job!);
          assert.ok(jobs.every((j) => /^\d+(_\d+)?$/.test(j)), jobs.join(" "));
          // the three b nodes became ready together: one array
          const bs = m.nodes.filter((n) => n.id.startsWith("b[")).map((n) =>
            n.job!.split("_")[0]
          );
          assert.equal(new Set(bs).size, 1);
          const again = await cli(["--cache", caches.slurm, "run", file]);
          assert.equal(again.code, 0);
          assert.match(again.err, /0 computed, 9 cached/);
        },
      );

      await t.step(
        "domain kinds: the shipped smoke experiment gives byte-identical outputs on Slurm and locally",
        async () => {
          const { file, name } = writeExperiment(
            dir,
            "curriculum",
            (name) => smokeYaml(name, EXECUTOR()),
          );
          const caches = await runLocallyAndOnSlurm(file, join(dir, "d"));
          const a = outputs(caches.slurm, name);
          assert.equal(Object.keys(a).length, SMOKE_NODES);
          assert.deepEqual(a, outputs(caches.local, name));
          // blobs (ONNX policies) are content-addressed: same hashes, verified bytes
          assert.match(
            a["curriculum.1.policy[context=full]"]!,
            /"\$blob":"[0-9a-f]{64}"/,
          );
        },
      );

      await t.step(
        "a job killed with scancel mid-run is reported failed with job id, state and log; the rerun finishes the graph",
        async () => {
          const { file, name } = writeExperiment(
            dir,
            "cancel",
            (name) =>
              `experiment: ${name}\nseed: 1\n${EXECUTOR()}nodes:
  a: { kind: test.add, with: { a: 1 } }
  long: { kind: test.sleep, with: { ms: 6000, steps: 30, value: $a.sum } }
  after: { kind: test.add, with: { a: $long.seed } }
`,
          );
          const cache = join(dir, "c-cancel");
          const running = cli(["--cache", cache, "run", file]);
          let victim: string | undefined;
          // (generous: other test runs may share the cluster)
          for (let i = 0; i < 1500 && !victim; i++) {
            await new Promise((r) => setTimeout(r, 100));
            victim = (await squeue()).find((j) =>
              j.name === `envsmith:${name}:long` && j.state === "RUNNING"
            )?.id;
          }
          assert.ok(victim, "the long node never ran");
          await new Promise((r) => setTimeout(r, 1000));
          const sc = await new Deno.Command("scancel", { args: [victim] })
            .output();
          assert.ok(sc.success);
          const r = await running;
          assert.equal(r.code, 1, r.err);
          assert.match(
            r.err,
            new RegExp(`error   slurm job ${victim} CANCELLED \\(`),
          );
          assert.match(r.err, new RegExp(`slurm   job ${victim} CANCELLED`));
          const log = /\n {2}log {5}(\S+)/.exec(r.err)![1]!;
          assert.match(
            Deno.readTextFileSync(log),
            new RegExp(`JOB ${victim} ON \\S+ CANCELLED AT`),
          );
          const m = lastManifest(cache, name);
          assert.deepEqual(
            Object.fromEntries(m.nodes.map((n) => [n.id, n.status])),
            { a: "done", long: "failed", after: "blocked" },
          );
          const again = await cli(["--cache", cache, "run", file]);
          assert.equal(again.code, 0, again.err);
          assert.match(again.err, /2 computed, 1 cached, 0 failed/);
        },
      );

      await t.step(
        "a node over its time limit is reported with Slurm's reason (TIMEOUT, TimeLimit)",
        async () => {
          const r = await timelimit;
          assert.equal(r.code, 1, r.err);
          assert.match(
            r.err,
            /error {3}slurm job (\d+) TIMEOUT \(reason TimeLimit, .*time limit 00:01:00\)/,
          );
          const log = /\n {2}log {5}(\S+)/.exec(r.err)![1]!;
          assert.match(Deno.readTextFileSync(log), /DUE TO TIME LIMIT/);
        },
      );
    } finally {
      await Deno.remove(dir, { recursive: true }).catch(() => {});
    }
  },
});

Deno.test("docs/cluster.md: its executor block is valid with the registered kinds", async () => {
  const { allKinds } = await import("./mod.ts");
  const { compileExperiment } = await import("@envsmith/engine");
  const doc = Deno.readTextFileSync(
    new URL("./docs/cluster.md", import.meta.url),
  );
  const block = /```yaml\n(executor:[\s\S]*?)```/.exec(doc)![1]!;
  const exp = compileExperiment(
    "docs/cluster.md",
    `experiment: x\nseed: 1\n${block}nodes:\n  a: { kind: generate, with: { suites: [base], split: test, per_suite: 2 } }\n`,
    { kinds: allKinds, executors: builtinExecutors },
  );
  assert.equal(exp.executor?.type, "slurm");
  const spec = exp.executor as SlurmExecutorSpec;
  assert.deepEqual(Object.keys(spec.kinds ?? {}), [
    "train",
    "evaluate",
    "train.lm",
  ]);
  assert.equal(spec.kinds?.["train.lm"]?.gres, "gpu:1");
  assert.equal(spec.resources?.time, "0:30:00");
});
