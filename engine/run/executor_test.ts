import assert from "node:assert/strict";
import { compileExperiment } from "../compile/experiment.ts";
import { ExperimentError, UserError } from "../errors.ts";
import { createExecutor } from "./executor.ts";
import { executors as builtinExecutors } from "./executors/builtin.ts";
import { RemoteExecutor } from "./executors/remote.ts";
import { Store } from "../cache/store.ts";
import { kinds } from "../testdata/kinds.ts";

const NODES = `nodes:
  a: { kind: test.add, with: { a: 1 } }
`;

function diags(text: string): string[] {
  try {
    compileExperiment("exp.yaml", text, { kinds, executors: builtinExecutors });
  } catch (e) {
    if (e instanceof ExperimentError) {
      return e.diagnostics.map((d) =>
        `${d.line}:${d.col} ${d.code} ${d.message}`
      );
    }
    throw e;
  }
  assert.fail("expected an ExperimentError");
}

Deno.test("executor block: every mistake reported at once with line:col and the valid alternatives", () => {
  const d = diags(`experiment: x
seed: 1
executor:
  type: slurm
  partiton: debug
  resources: { mem: 4GB, time: "1:2:3:4", cpu: 2 }
  kinds:
    test.slep: { time: 5 }
    test.add: { sbatch: ["--array=0-3", "-t", "qos"] }
  poll_seconds: 0
${NODES}`);
  assert.deepEqual(d, [
    `5:3 executor unknown key of the slurm executor "partiton"; did you mean "partition"? (valid: type, jobs, deno, poll_seconds, grace_seconds, partition, account, qos, array, resources, kinds, sbatch)`,
    `6:21 executor resources.mem: memory as megabytes or a number with a unit: K, M, G or T (e.g. "4G")`,
    `6:32 executor resources.time: a Slurm time limit: minutes, "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM" or "D-HH:MM:SS"`,
    `6:43 executor unknown resource "cpu"; did you mean "cpus"? (valid: cpus, mem, time, partition, gres, sbatch)`,
    `8:5 executor unknown kind "test.slep" in executor.kinds; did you mean "test.sleep" or "test.blob" or "test.spin"?`,
    `9:26 executor sbatch flag "--array=0-3" is set by envsmith itself (job names, logs, arrays and working directory are managed per node); remove it`,
    `9:41 executor sbatch flag "-t": use the executor's "time:" field instead`,
    `9:47 executor kinds.test.add.sbatch.2: an sbatch flag starts with "-" (e.g. "--qos=normal", "--gres=gpu:1")`,
    `10:17 executor poll_seconds: Invalid value: Expected >=0.1 but received 0`,
  ]);
});

Deno.test("executor block: unknown or missing type, non-mapping, local jobs", () => {
  assert.deepEqual(
    diags(`experiment: x\nseed: 1\nexecutor: { type: slurmm }\n${NODES}`),
    [
      `3:19 executor unknown executor type "slurmm"; did you mean "slurm"? (valid: local, slurm)`,
    ],
  );
  assert.deepEqual(
    diags(`experiment: x\nseed: 1\nexecutor: { partition: a }\n${NODES}`),
    [`3:11 executor executor needs a type: local or slurm`],
  );
  assert.deepEqual(
    diags(`experiment: x\nseed: 1\nexecutor: slurm\n${NODES}`),
    [`3:11 executor executor is a mapping with a type: local or slurm`],
  );
  assert.deepEqual(
    diags(
      `experiment: x\nseed: 1\nexecutor: { type: local, jobs: 0, partition: p }\n${NODES}`,
    ),
    [
      `3:32 executor jobs: Invalid value: Expected >=1 but received 0`,
      `3:35 executor unknown key of the local executor "partition" (valid: type, jobs, workers, worker_memory_mb)`,
    ],
  );
});

Deno.test("executor block: a valid slurm block is parsed with its values", () => {
  const exp = compileExperiment(
    "exp.yaml",
    `experiment: x
seed: 1
executor:
  type: slurm
  partition: cpu
  account: proj
  deno: /opt/deno/bin/deno
  resources: { cpus: 1, mem: 2G, time: "1-00:00:00" }
  kinds:
    test.sleep: { cpus: 4, mem: 8192, time: 90, sbatch: [--gres=gpu:1] }
  sbatch: [--nice=10, --constraint=avx2]
${NODES}`,
    { kinds, executors: builtinExecutors },
  );
  assert.deepEqual(exp.executor, {
    type: "slurm",
    partition: "cpu",
    account: "proj",
    deno: "/opt/deno/bin/deno",
    resources: { cpus: 1, mem: "2G", time: "1-00:00:00" },
    kinds: {
      "test.sleep": { cpus: 4, mem: 8192, time: 90, sbatch: ["--gres=gpu:1"] },
    },
    sbatch: ["--nice=10", "--constraint=avx2"],
  });
});

Deno.test("createExecutor: --executor wins over the file; defaults; errors", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const store = new Store(dir);
    const slurmFile = compileExperiment(
      "exp.yaml",
      `experiment: x\nseed: 1\nexecutor: { type: slurm, jobs: 7 }\n${NODES}`,
      { kinds, executors: builtinExecutors },
    );
    const plain = compileExperiment(
      "exp.yaml",
      `experiment: x\nseed: 1\n${NODES}`,
      { kinds, executors: builtinExecutors },
    );
    const command = ["run", "-A", "cli.ts"];
    const s = createExecutor(builtinExecutors, {
      exp: slurmFile,
      store,
      runId: "r1",
      command,
    });
    assert.ok(s instanceof RemoteExecutor);
    assert.equal(s.name, "slurm");
    assert.equal(s.jobs, 7);
    assert.match(
      s.describe(),
      /executor slurm \(default partition, up to 7 jobs queued\); job logs in .*\/runs\/x\/r1\/slurm$/,
    );
    assert.equal(
      createExecutor(builtinExecutors, {
        exp: slurmFile,
        store,
        runId: "r",
        command,
        jobs: 3,
      }).jobs,
      3,
    );
    const l = createExecutor(builtinExecutors, {
      exp: slurmFile,
      store,
      runId: "r",
    }, "local");
    assert.equal(l.name, "local");
    assert.equal(
      createExecutor(builtinExecutors, { exp: plain, store, runId: "r" }).name,
      "local",
    );
    const d = createExecutor(builtinExecutors, {
      exp: plain,
      store,
      runId: "r",
      command,
    }, "slurm");
    assert.equal(d.name, "slurm");
    assert.equal(d.jobs, 100);
    const create = (name: string) => () =>
      createExecutor(builtinExecutors, { exp: plain, store, runId: "r" }, name);
    assert.throws(
      create("pbs"),
      (e) =>
        e instanceof UserError &&
        /Unknown executor "pbs": use local or slurm/.test(e.message),
    );
    assert.throws(create("slurm"), UserError);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
