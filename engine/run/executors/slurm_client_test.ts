import assert from "node:assert/strict";
import { join } from "node:path";
import {
  commandSlurmClient,
  parseQueue,
  parseShowJob,
  SlurmCommandError,
} from "./slurm_client.ts";

Deno.test("parseQueue: one state per job and array task", () => {
  const m = parseQueue(
    "25_0|RUNNING|None|vm\n25_1|PENDING|Resources|(null)\n26|TIMEOUT|TimeLimit|vm\n\n",
  );
  assert.deepEqual([...m.keys()], ["25_0", "25_1", "26"]);
  assert.deepEqual(m.get("25_1"), {
    id: "25_1",
    state: "PENDING",
    reason: "Resources",
    nodes: "",
  });
  assert.equal(m.get("26")!.reason, "TimeLimit");
});

Deno.test("parseShowJob: state, reason, exit code, times; array tasks named JOB_TASK", () => {
  const line =
    "JobId=40 ArrayJobId=39 ArrayTaskId=1 JobName=envsmith:x:b[*] UserId=root(0) JobState=TIMEOUT Reason=TimeLimit Dependency=(null) ExitCode=0:15 RunTime=00:01:27 TimeLimit=00:01:00 NodeList=vm StdOut=/tmp/a b.log";
  assert.deepEqual(parseShowJob(line + "\n"), {
    id: "39_1",
    state: "TIMEOUT",
    reason: "TimeLimit",
    nodes: "vm",
    exitCode: "0:15",
    runTime: "00:01:27",
    timeLimit: "00:01:00",
  });
  assert.equal(
    parseShowJob(
      "JobId=7 JobName=a JobState=FAILED Reason=NonZeroExitCode ExitCode=1:0",
    )!.id,
    "7",
  );
  assert.equal(parseShowJob("slurm_load_jobs error: Invalid job id"), null);
});

Deno.test("commandSlurmClient: runs sbatch/squeue/scontrol/scancel with the right arguments and reads their output", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // Stand-in commands that log their arguments and print canned output.
    const log = join(dir, "calls");
    const tool = (name: string, body: string) => {
      Deno.writeTextFileSync(
        join(dir, name),
        `#!/bin/sh\necho "${name} $*" >> ${log}\n${body}\n`,
        { mode: 0o755 },
      );
    };
    tool("sbatch", 'echo "1234;cluster"');
    tool(
      "squeue",
      'case "$*" in *9999*) echo "slurm_load_jobs error: Invalid job id specified" >&2; exit 1;; esac\necho "1234|RUNNING|None|n1"',
    );
    tool(
      "scontrol",
      'echo "JobId=1234 JobName=x JobState=FAILED Reason=NonZeroExitCode ExitCode=2:0 RunTime=00:00:03 TimeLimit=00:10:00 NodeList=n1"',
    );
    tool("scancel", "true");
    const c = commandSlurmClient({ binDir: dir });
    assert.equal(await c.submit("/x/job.sbatch", ["--mem=1G"]), "1234");
    const q = await c.queue(["1234", "1235_2"]);
    assert.deepEqual([...q!.keys()], ["1234"]);
    assert.deepEqual(await c.queue(["9999"]), new Map()); // all unknown
    assert.equal((await c.show("1234"))!.exitCode, "2:0");
    await c.cancel(["1234", "1235_2"]);
    assert.deepEqual(Deno.readTextFileSync(log).trim().split("\n"), [
      "sbatch --parsable --mem=1G /x/job.sbatch",
      "squeue -h -r --states=all -o %i|%T|%r|%N -j 1234,1235_2",
      "squeue -h -r --states=all -o %i|%T|%r|%N -j 9999",
      "scontrol show job -o 1234",
      "scancel 1234 1235_2",
    ]);
    // A controller that does not answer: null, not "every job vanished".
    tool(
      "squeue",
      'echo "slurm_load_jobs error: Unable to contact slurm controller" >&2; exit 1',
    );
    assert.equal(await c.queue(["1234"]), null);
    tool(
      "sbatch",
      'echo "sbatch: error: invalid partition specified: nope" >&2; exit 1',
    );
    await assert.rejects(
      c.submit("/x/job.sbatch", ["--partition=nope"]),
      (e) =>
        e instanceof SlurmCommandError && e.code === 1 &&
        /invalid partition specified: nope/.test(e.message),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
