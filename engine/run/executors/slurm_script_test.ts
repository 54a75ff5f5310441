import assert from "node:assert/strict";
import { join } from "node:path";
import { batchScript } from "./slurm_script.ts";
import { shellQuote } from "./job_script.ts";

/** Writes the script `text` to `path` as an executable file; the path. */
function executable(path: string, text: string): string {
  Deno.writeTextFileSync(path, text, { mode: 0o755 });
  return path;
}

Deno.test("shellQuote: plain words stay, everything else is single-quoted", () => {
  assert.equal(shellQuote("/usr/bin/deno"), "/usr/bin/deno");
  assert.equal(shellQuote("a b"), "'a b'");
  assert.equal(shellQuote("it's"), `'it'\\''s'`);
  assert.equal(shellQuote("$(rm -rf /)"), "'$(rm -rf /)'");
});

async function runScript(
  script: string,
  env: Record<string, string>,
): Promise<{ code: number; out: string }> {
  const out = await new Deno.Command("bash", {
    args: [script],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const dec = new TextDecoder();
  return {
    code: out.code,
    out: dec.decode(out.stdout) + dec.decode(out.stderr),
  };
}

Deno.test("batchScript: the array task picks its node, runs the command with the key and leaves its exit status", async () => {
  const dir = await Deno.makeTempDir();
  try {
    // A stand-in for deno: prints its arguments, fails for key k2.
    const fakeDeno = executable(
      join(dir, "fake deno"),
      `#!/bin/sh\necho "ARGS $*"\necho "PROGRESS=$ENVSMITH_PROGRESS_FILE"\ncase "$*" in *k2) exit 3;; esac\n`,
    );
    const tasks = ["k1", "k2"].map((k, i) => ({
      key: k,
      id: `node '${i}' [x=1]`,
      status: join(dir, `${k}.status`),
      progress: join(dir, `${k}.progress`),
    }));
    const script = join(dir, "job.sbatch");
    Deno.writeTextFileSync(
      script,
      batchScript({
        deno: fakeDeno,
        args: ["run", "-A", "/repo/cli.ts", "--cache", "/shared/cache dir"],
        cwd: dir,
        tasks,
        title: "test",
      }),
    );
    const ok = await runScript(script, {
      SLURM_JOB_ID: "77",
      SLURM_ARRAY_JOB_ID: "76",
      SLURM_ARRAY_TASK_ID: "0",
    });
    assert.equal(ok.code, 0);
    assert.match(
      ok.out,
      /^# envsmith node node '0' \[x=1\] key k1: slurm job 77 \(array task 76_0\) on \S+ at \d{4}-/,
    );
    assert.match(
      ok.out,
      /ARGS run -A \/repo\/cli.ts --cache \/shared\/cache dir run-node k1\n/,
    );
    assert.match(ok.out, new RegExp(`PROGRESS=${dir}/k1.progress`));
    const s1 = JSON.parse(Deno.readTextFileSync(tasks[0]!.status));
    assert.equal(s1.rc, 0);
    assert.equal(s1.signal, "");
    assert.equal(s1.job, "77");

    const bad = await runScript(script, {
      SLURM_JOB_ID: "78",
      SLURM_ARRAY_TASK_ID: "1",
    });
    assert.equal(bad.code, 3);
    assert.equal(JSON.parse(Deno.readTextFileSync(tasks[1]!.status)).rc, 3);
    // no temporary status files left behind
    assert.deepEqual(
      [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) =>
        n.includes(".tmp")
      ),
      [],
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("batchScript: SIGTERM (scancel, time limit) is passed to run-node and recorded", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const fakeDeno = executable(
      join(dir, "deno"),
      `#!/bin/bash\nsleep 30 &\ntrap 'echo got-term; kill $!; exit 130' TERM\necho started\nwait\n`,
    );
    const status = join(dir, "s.status");
    const script = join(dir, "job.sbatch");
    Deno.writeTextFileSync(
      script,
      batchScript({
        deno: fakeDeno,
        args: [],
        cwd: dir,
        tasks: [{ key: "k", id: "n", status, progress: join(dir, "p") }],
        title: "t",
      }),
    );
    const child = new Deno.Command("bash", {
      args: [script],
      stdout: "piped",
      stderr: "null",
    }).spawn();
    await new Promise((r) => setTimeout(r, 500));
    child.kill("SIGTERM");
    const out = await child.output();
    assert.equal(out.code, 130);
    assert.match(new TextDecoder().decode(out.stdout), /started\ngot-term/);
    const s = JSON.parse(Deno.readTextFileSync(status));
    assert.deepEqual([s.rc, s.signal], [130, "TERM"]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
