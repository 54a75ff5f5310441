/**
 * Engine overhead benchmark: a generated 10,000-node experiment.
 *
 * Measures load + validate + expand + key (compile), plan against an empty
 * and a full cache, a fully cached rerun in-process, and the same through the
 * CLI as a subprocess (Deno start-up included). Two shapes of the same size:
 * `stages` (a compact file unrolled by the engine) and `flat` (10,000 nodes
 * written out in YAML, which stresses the parser and validation).
 *
 * Run: `deno run -A bench/engine.ts` (prints a markdown table; takes ~1 min).
 *
 * @module
 */
import { join } from "node:path";
import { compileExperiment } from "@envsmith/engine/compile";
import { Store } from "@envsmith/engine/cache";
import { makePlan, runPlan, SilentReporter } from "@envsmith/engine/run";
import { kinds } from "../engine/testdata/kinds.ts";
import { fixtureKindsCli } from "./_cli.ts";

const CONTEXTS = ["none", "stats", "failures", "behavior", "full"];
const SEEDS = [1, 2, 3, 4];

/** 5 contexts x 4 seeds x 101 stages x 5 nodes, less what minimal expansion shares: 10,034 nodes. */
function stagesYaml(): string {
  return `experiment: bench_stages
seed: 7
matrix:
  context: [${CONTEXTS.join(", ")}]
  seed: [${SEEDS.join(", ")}]
nodes:
  bench: { kind: test.add, with: { a: 1000 } }
  curriculum:
    kind: stages
    count: 101
    from: { config: { size: 8 }, policy: { weights: 0 } }
    each:
      envs: { kind: test.add, with: { a: $stage, note: { config: $prev.config, count: 512 } } }
      policy: { kind: test.add, with: { a: $seed, note: [$prev.policy, $envs.sum], more: [1, 2] } }
      rollouts: { kind: test.add, with: { a: $policy.sum, note: $envs } }
      findings: { kind: test.add, with: { a: $rollouts.sum } }
      config: { kind: test.add, with: { a: 1, note: { context: $matrix.context, findings: $findings, config: $prev.config } } }
`;
}

/** 10,000 explicit nodes: chains of 50 nodes, each reading its predecessor and a shared node. */
function flatYaml(): string {
  const lines = [
    "experiment: bench_flat",
    "seed: 7",
    "nodes:",
    "  root: { kind: test.add, with: { a: 1 } }",
  ];
  for (let c = 0; c < 200; c++) {
    for (let i = 0; i < 50; i++) {
      const prev = i === 0 ? "$root" : `$n${c}_${i - 1}.sum`;
      lines.push(
        `  n${c}_${i}: { kind: test.add, with: { a: ${i}, b: ${c}, note: { prev: ${prev}, tag: "chain ${c}" } } }`,
      );
    }
  }
  return lines.join("\n") + "\n";
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function time<T>(
  f: () => T | Promise<T>,
  reps = 3,
): Promise<{ ms: number; last: T }> {
  const ts: number[] = [];
  let last!: T;
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    last = await f();
    ts.push(performance.now() - t0);
  }
  return { ms: median(ts), last };
}

async function cli(args: string[]): Promise<number> {
  const t0 = performance.now();
  const out = await fixtureKindsCli(args, { stdout: "null", stderr: "piped" })
    .output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return performance.now() - t0;
}

const rows: string[] = [];
const dir = await Deno.makeTempDir({ prefix: "envsmith-bench-" });
try {
  for (
    const [shape, yaml] of [["stages", stagesYaml()], [
      "flat",
      flatYaml(),
    ]] as const
  ) {
    const file = join(dir, `${shape}.yaml`);
    await Deno.writeTextFile(file, yaml);
    const cache = join(dir, `cache-${shape}`);
    const store = new Store(cache);
    const compile = await time(() => compileExperiment(file, yaml, { kinds }));
    const exp = compile.last;
    const planEmpty = await time(() =>
      makePlan(compileExperiment(file, yaml, { kinds }), store)
    );
    const t0 = performance.now();
    const cold = await runPlan(makePlan(exp, store), store, {
      jobs: 2,
      reporter: new SilentReporter(),
    });
    const coldMs = performance.now() - t0;
    if (cold.failures.length) throw new Error(cold.failures[0]!.message);
    const planFull = await time(() =>
      makePlan(compileExperiment(file, yaml, { kinds }), store)
    );
    const rerun = await time(async () => {
      const e = compileExperiment(file, yaml, { kinds });
      const r = await runPlan(makePlan(e, store), store, {
        jobs: 2,
        reporter: new SilentReporter(),
      });
      if (r.manifest.counts.cached !== e.nodes.length) {
        throw new Error("not fully cached");
      }
      return r;
    });
    const cliPlan = median([
      await cli(["--cache", cache, "plan", file]),
      await cli(["--cache", cache, "plan", file]),
      await cli(["--cache", cache, "plan", file]),
    ]);
    const cliRun = median([
      await cli(["--cache", cache, "run", file]),
      await cli(["--cache", cache, "run", file]),
      await cli(["--cache", cache, "run", file]),
    ]);
    const n = exp.nodes.length;
    rows.push(
      `| ${shape} | ${n} | ${(yaml.length / 1024).toFixed(0)} KiB | ${
        compile.ms.toFixed(0)
      } | ${planEmpty.ms.toFixed(0)} | ${planFull.ms.toFixed(0)} | ${
        rerun.ms.toFixed(0)
      } | ${cliPlan.toFixed(0)} | ${cliRun.toFixed(0)} | ${
        (coldMs / 1000).toFixed(1)
      } s (${(n / (coldMs / 1000)).toFixed(0)} nodes/s) |`,
    );
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}
console.log(
  `Engine overhead, 10,000-node experiments (median of 3; ms unless noted), deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores\n`,
);
console.log(
  "| shape | nodes | file | load + validate + expand | load … + keys + plan, empty cache | load … + keys + plan, full cache (verifies every entry) | fully cached rerun, in-process | CLI `plan FILE` (new process) | CLI `run FILE`, fully cached (new process) | cold run, trivial kinds, --jobs 2 |",
);
console.log("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
for (const r of rows) console.log(r);
