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
import {
  canonicalJson,
  readManifest,
  SilentReporter,
  Store,
} from "@envsmith/engine";
import { kinds as testKinds } from "../../engine/testdata/kinds.ts";
import { executors } from "./pbs.ts";

const FAKES = new URL("./testdata/", import.meta.url).pathname;

const YAML = `experiment: pbsfan
seed: 2
matrix:
  k: [1, 2, 3]
executor: { type: pbs, queue: workq, poll_seconds: 0.2, resources: { ncpus: 1, mem: 1gb } }
nodes:
  a: { kind: test.add, with: { a: 1, b: 2 } }
  b: { kind: test.add, with: { a: $a.sum, b: $matrix.k } }
  c: { kind: test.fail, with: { message: "no luck on pbs", input: $b.sum } }
    `;

async function cli(args: string[], path: string, state: string) {
  const saved = {
    PATH: Deno.env.get("PATH"),
    FAKE_PBS_DIR: Deno.env.get("FAKE_PBS_DIR"),
  };
  Deno.env.set("PATH", path);
  Deno.env.set("FAKE_PBS_DIR", state);
  const out: string[] = [], err: string[] = [];
  try {
    const code = await main(args, {
      kinds: testKinds,
      executors,
      reporter: new SilentReporter(),
      output: { out: (l) => out.push(l), err: (l) => err.push(l) },
    });
    return { code, out, err };
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) Deno.env.delete(k);
      else Deno.env.set(k, v);
    }
  }
}

function lastManifest(cache: string, experiment: string) {
  const dir = join(cache, "runs", experiment);
  const last = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) =>
    n.endsWith(".json")
  ).sort().pop()!;
  return readManifest(join(dir, last))!;
}

Deno.test("pbs plugin (fake qsub/qstat/qdel): same outputs as local, arrays, failures with the PBS job id; qsub missing stops plan", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-pbs-" });
  try {
    const file = join(dir, "exp.yaml");
    const state = join(dir, "pbs");
    Deno.mkdirSync(state);
    Deno.writeTextFileSync(file, YAML);
    const path = `${FAKES}:${Deno.env.get("PATH") ?? ""}`;
    const local = join(dir, "local");
    const l = await cli(
      ["--cache", local, "run", "--executor", "local", file],
      path,
      state,
    );
    assert.equal(l.code, 1);
    const cache = join(dir, "cache");
    const r = await cli(["--cache", cache, "run", file], path, state);
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
      /✗ node {4}c\[k=1\]\n(.*\n){2} {2}error {3}pbs job \d+\[\d\]\.fake F \(exit 1\): no luck on pbs/,
    );
    assert.match(text, / {2}pbs {5}job \d+\[\d\]\.fake F on fakehost/);
    assert.ok(m.nodes.every((n) => /^\d+(\[\d\])?\.fake$/.test(n.job ?? "")));
    // without qsub on PATH: one line at plan, exit 2
    const p = await cli(["--cache", cache, "plan", file], dir, state);
    assert.equal(p.code, 2);
    assert.deepEqual(p.err, [
      `${file}: executor pbs: qsub, qstat, qdel are not on PATH on this machine; run envsmith on a login node of the PBS cluster`,
    ]);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
