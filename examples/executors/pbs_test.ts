/**
 * The PBS executor plugin of docs/engine.md, run against stand-ins for
 * qsub, qstat and qdel (testdata/: they run job scripts on this machine):
 * registered as a plugin's executors are, it runs an experiment with the
 * same outputs as the local executor, sends nodes ready together as one job
 * array, reports a failing node with its PBS job id and error, and without
 * qsub on PATH `plan` stops with one line.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { main } from "../../cli.ts";
import { canonicalJson } from "@envsmith/engine/hash";
import { Store } from "@envsmith/engine/cache";
import { SilentReporter } from "@envsmith/engine/run";
import { kinds as testKinds } from "../../engine/testdata/kinds.ts";
import { executors } from "./pbs.ts";
import { lastManifest } from "../../_test_util.ts";

const FAKES = new URL("./testdata/", import.meta.url);

const YAML = `experiment: pbsfan
seed: 2
matrix:
  k: [1, 2, 3]
executor: { type: pbs, bin: BIN, queue: workq, poll_seconds: 0.2, resources: { ncpus: 1, mem: 1gb } }
nodes:
  a: { kind: test.add, with: { a: 1, b: 2 } }
  b: { kind: test.add, with: { a: $a.sum, b: $matrix.k } }
  c: { kind: test.fail, with: { message: "no luck on pbs", input: $b.sum } }
    `;

async function cli(args: string[], path?: string) {
  const out: string[] = [], err: string[] = [];
  const code = await main(args, {
    kinds: testKinds,
    executors,
    reporter: new SilentReporter(),
    output: { out: (l) => out.push(l), err: (l) => err.push(l) },
    // a PATH for the commands' checks only (test files run in parallel)
    ...(path !== undefined
      ? { env: (n: string) => n === "PATH" ? path : Deno.env.get(n) }
      : {}),
  });
  return { code, out, err };
}

Deno.test("pbs plugin (fake qsub/qstat/qdel): same outputs as local, arrays, failures with the PBS job id; qsub missing stops plan", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-pbs-" });
  try {
    const file = join(dir, "exp.yaml");
    // the stand-ins keep their state in state/ beside them
    const bin = join(dir, "bin");
    const state = join(bin, "state");
    Deno.mkdirSync(state, { recursive: true });
    for (const f of ["qsub", "qstat", "qdel"]) {
      Deno.copyFileSync(new URL(f, FAKES), join(bin, f));
      Deno.chmodSync(join(bin, f), 0o755);
    }
    Deno.writeTextFileSync(file, YAML.replace("BIN", bin));
    const local = join(dir, "local");
    const l = await cli(["--cache", local, "run", "--executor", "local", file]);
    assert.equal(l.code, 1);
    const cache = join(dir, "cache");
    const r = await cli(["--cache", cache, "run", file]);
    assert.equal(r.code, 1, r.err.join("\n"));
    const m = lastManifest(cache, "pbsfan");
    assert.equal(m.executor, "pbs");
    assert.deepEqual(m.counts, { done: 4, failed: 3 });
    // the stored outputs equal the local run's
    const lm = lastManifest(local, "pbsfan");
    const values = (c: string, mf: typeof m) =>
      Object.fromEntries(
        mf.nodes.filter((n) => n.status === "done").map((n) => [
          n.id,
          canonicalJson(new Store(c).loadVerified(n.key)!.value),
        ]),
      );
    assert.deepEqual(values(cache, m), values(local, lm));
    // a alone, then the three b nodes (ready together) as one array; the c
    // nodes go out as their b nodes finish: 3 tasks in 1 to 3 submissions
    const subs = Deno.readTextFileSync(join(state, "submissions")).trim()
      .split("\n").map((l) => l.split("|")[1]!);
    assert.deepEqual(subs.slice(0, 2), ["", "0-2"]);
    assert.equal(
      subs.slice(2).reduce((n, r) => n + (r ? Number(r.slice(2)) + 1 : 1), 0),
      3,
    );
    assert.match(
      Deno.readTextFileSync(join(state, "submissions")),
      /-q workq -l select=1:ncpus=1:mem=1gb/,
    );
    const text = r.err.join("\n");
    assert.match(
      text,
      /✗ node {4}c\[k=1\]\n(.*\n){2} {2}error {3}pbs job \d+(\[\d\])?\.fake F \(exit 1\): no luck on pbs/,
    );
    assert.match(text, / {2}pbs {5}job \d+(\[\d\])?\.fake F on fakehost/);
    assert.ok(m.nodes.every((n) => /^\d+(\[\d\])?\.fake$/.test(n.job ?? "")));
    // without the commands: one line at plan, exit 2, for a bin directory
    // without them and for a PATH without them
    Deno.removeSync(join(bin, "qstat"));
    const p = await cli(["--cache", cache, "plan", file]);
    assert.equal(p.code, 2);
    assert.deepEqual(p.err, [
      `${file}: executor pbs: ${bin}/qstat is not an executable file on this machine; run envsmith on a login node of the PBS cluster`,
    ]);
    Deno.writeTextFileSync(file, YAML.replace("bin: BIN, ", ""));
    const q = await cli(["--cache", cache, "plan", file], dir);
    assert.equal(q.code, 2);
    assert.deepEqual(q.err, [
      `${file}: executor pbs: qsub, qstat, qdel are not on PATH on this machine; run envsmith on a login node of the PBS cluster`,
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
