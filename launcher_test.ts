/**
 * The root launcher `./envsmith`: which Deno it runs and how it passes the
 * arguments on (a task of deno.json as the task, anything else to cli.ts).
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { tmpExperiment } from "./_test_util.ts";

const ROOT = fileURLToPath(new URL(".", import.meta.url));
const LAUNCHER = join(ROOT, "envsmith");

async function launch(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string }> {
  const r = await new Deno.Command("sh", {
    args: [LAUNCHER, ...args],
    cwd: ROOT,
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return { code: r.code, out: d.decode(r.stdout), err: d.decode(r.stderr) };
}

Deno.test("launcher: a task runs as the task, a subcommand through cli.ts, with the Deno it is given", async () => {
  await using tmp = await tmpExperiment("launcher");
  const { dir } = tmp;
  // A stand-in Deno that prints how it was called.
  const fake = join(dir, "deno");
  await Deno.writeTextFile(
    fake,
    `#!/bin/sh\nif [ "$1" = --version ]; then echo "deno 2.9.6 (fake)"; exit 0; fi\necho "ARGS $*"\n`,
  );
  await Deno.chmod(fake, 0o755);
  const config = join(ROOT, "deno.json");
  const task = await launch(["tables", "experiments/quick.yaml"], {
    ENVSMITH_DENO: fake,
  });
  assert.equal(task.code, 0, task.err);
  assert.equal(
    task.out.trim(),
    `ARGS task -q --config ${config} tables experiments/quick.yaml`,
  );
  const sub = await launch(["runs", "experiments/quick.yaml"], {
    ENVSMITH_DENO: fake,
  });
  assert.equal(
    sub.out.trim(),
    `ARGS run -A --config ${config} ${
      join(ROOT, "cli.ts")
    } runs experiments/quick.yaml`,
  );
  const help = await launch([], { ENVSMITH_DENO: fake });
  assert.match(help.out, /cli\.ts --help$/m);
});

Deno.test("launcher: runs the real CLI with the Deno on PATH", async () => {
  await using tmp = await tmpExperiment("launcher");
  const { dir } = tmp;
  const r = await launch(
    ["plan", "experiments/smoke.yaml", "--cache", join(dir, "cache")],
    { PATH: Deno.env.get("PATH") ?? "" },
  );
  assert.equal(r.code, 0, r.err);
  assert.match(
    r.out,
    /^plan smoke \(experiments\/smoke\.yaml\): 20 nodes: 0 cached, 3 to run, 17 blocked, 0 skipped$/m,
  );
});
