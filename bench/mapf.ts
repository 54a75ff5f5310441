/**
 * MAPF-FrozenLake benchmarks: stepping throughput (batched and single, with
 * and without the policy's observations), solver time per instance, and
 * generation rate and rejection rates per preset and per suite.
 *
 * ```sh
 * deno run -A bench/mapf.ts            # everything (about a minute)
 * deno run -A bench/mapf.ts step       # one section: step | solve | generate
 * ```
 *
 * Prints markdown tables (the numbers recorded in bench/RESULTS.md). Every
 * throughput is the median of 3 repetitions in this process; the machine is
 * shared, so compare ratios within one run.
 *
 * @module
 */
import {
  BatchEnv,
  type CompiledInstance,
  compileInstance,
  generate,
  generateSuite,
  type Instance,
  InstancePool,
  Rng,
  solveCBS,
  solvePP,
  SUITE_NAMES,
} from "../mapf/mod.ts";
import {
  DEFAULT_OBS,
  ObservationEncoder,
  ReferenceObservationEncoder,
} from "../policy/mod.ts";
import type { EnvConfigInput } from "../schemas/mod.ts";
import { STEPPING_16X16 } from "./_mapf.ts";

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2
    ? s[(s.length - 1) / 2]!
    : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const quantile = (xs: number[], q: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
};
const fmt = (x: number, d = 2) => x.toFixed(d);

function instancesFor(
  config: EnvConfigInput,
  count: number,
  seed = 1,
): Instance[] {
  return generate(config, { count, seed }).instances;
}

/** Observation encoder of a stepping row: none, the TS reference, or the WebAssembly kernel. */
type ObsMode = false | "reference" | "wasm";

/**
 * Agent-steps per second of `envs` environments with random actions
 * (resetting ended ones every step), encoding every agent's observation
 * before each step when `withObs` names an encoder.
 */
function stepRate(
  instances: Instance[],
  envs: number,
  steps: number,
  withObs: ObsMode,
): number {
  const pool = InstancePool.from(instances);
  const env = new BatchEnv(pool, { envs, seed: 1 });
  env.resetAll((e) => e % pool.count);
  const m = env.maxAgents;
  const rng = new Rng(7);
  const buffers = Array.from({ length: 32 }, () => {
    const a = new Uint8Array(envs * m);
    for (let i = 0; i < a.length; i++) a[i] = rng.int(5);
    return a;
  });
  let enc: ObservationEncoder | ReferenceObservationEncoder | undefined;
  let slots = new Int32Array(0), obs = new Float32Array(0);
  if (withObs) {
    enc = withObs === "wasm"
      ? new ObservationEncoder(DEFAULT_OBS, env)
      : new ReferenceObservationEncoder(DEFAULT_OBS, env);
    slots = new Int32Array(envs * m);
    // the wasm encoder writes its own rows (what rollouts read, no copy)
    obs = enc instanceof ObservationEncoder
      ? enc.output
      : new Float32Array(envs * m * enc.size);
  }
  let agentSteps = 0;
  const run = (k: number) => {
    for (let s = 0; s < k; s++) {
      if (enc) {
        let n = 0;
        for (let e = 0; e < envs; e++) {
          const na = env.agentCount[e]!;
          for (let a = 0; a < na; a++) slots[n++] = e * m + a;
        }
        enc.encode(slots, n, obs);
      }
      let active = 0;
      for (let e = 0; e < envs; e++) active += env.agentCount[e]!;
      env.step(buffers[s & 31]!);
      agentSteps += active;
      env.resetDone();
    }
  };
  run(Math.max(5, steps / 10)); // warm up
  agentSteps = 0;
  const t0 = performance.now();
  run(steps);
  return agentSteps / ((performance.now() - t0) / 1000);
}

/** Nanoseconds per observation row of each encoder alone (every agent of 1024 environments, alternating, median of 3). */
function encodeCost(
  instances: Instance[],
): { reference: number; wasm: number } {
  const pool = InstancePool.from(instances);
  const env = new BatchEnv(pool, { envs: 1024, seed: 1 });
  env.resetAll((e) => e % pool.count);
  const m = env.maxAgents;
  const slots = new Int32Array(env.envs * m);
  let n = 0;
  for (let e = 0; e < env.envs; e++) {
    for (let a = 0; a < env.agentCount[e]!; a++) slots[n++] = e * m + a;
  }
  const ref = new ReferenceObservationEncoder(DEFAULT_OBS, env);
  const fast = new ObservationEncoder(DEFAULT_OBS, env);
  const out = new Float32Array(n * ref.size);
  const time = (fn: () => void) => {
    for (let i = 0; i < 3; i++) fn();
    let c = 0;
    const t0 = performance.now();
    while (performance.now() - t0 < 500) {
      fn();
      c++;
    }
    return ((performance.now() - t0) * 1e6) / c / n;
  };
  const r: number[] = [], w: number[] = [];
  for (let rep = 0; rep < 3; rep++) {
    r.push(time(() => ref.encode(slots, n, out)));
    w.push(time(() => fast.encode(slots, n)));
  }
  return { reference: median(r), wasm: median(w) };
}

function withModes(
  insts: Instance[],
  collision: "fail" | "block",
  holes: "lethal" | "blocked",
): Instance[] {
  return insts.map((i) => ({ ...i, collision, holes }));
}

function benchStep() {
  console.log(
    "\n### Stepping (random actions, ended episodes reset every step)\n",
  );
  console.log(
    "| setting | envs x agents | grid | M agent-steps/s (median of 3) | target |",
  );
  console.log("|---|---|---|---|---|");
  const i16 = instancesFor(STEPPING_16X16, 256);
  const i8 = instancesFor({
    width: 8,
    height: 8,
    agents: 4,
    hole_density: 0.1,
    distance: { min: 2, max: 12 },
  }, 64);
  const rows: [string, Instance[], number, number, ObsMode, string][] = [
    [
      "batched, fail/lethal (episodes end early)",
      i16,
      1024,
      300,
      false,
      ">= 10",
    ],
    [
      "batched, block/blocked (full-length episodes)",
      withModes(i16, "block", "blocked"),
      1024,
      300,
      false,
      ">= 10",
    ],
    [
      "batched + observations (radius 2, TS reference encoder), fail/lethal",
      i16,
      1024,
      60,
      "reference",
      ">= 3",
    ],
    [
      "batched + observations (radius 2, wasm encoder), fail/lethal",
      i16,
      1024,
      60,
      "wasm",
      ">= 3x reference",
    ],
    [
      "batched + observations (radius 2, TS reference encoder), block/blocked",
      withModes(i16, "block", "blocked"),
      1024,
      60,
      "reference",
      ">= 3",
    ],
    [
      "batched + observations (radius 2, wasm encoder), block/blocked",
      withModes(i16, "block", "blocked"),
      1024,
      60,
      "wasm",
      ">= 3x reference",
    ],
    ["single instance, fail/lethal", i16, 1, 200000, false, ">= 2"],
    [
      "single instance, block/blocked",
      withModes(i16, "block", "blocked"),
      1,
      200000,
      false,
      ">= 2",
    ],
    [
      "single instance 8x8 x 4, block/blocked",
      withModes(i8, "block", "blocked"),
      1,
      300000,
      false,
      ">= 2",
    ],
  ];
  // round robin over the rows, 3 times: the reference and wasm encoder rows
  // alternate, so a change in machine load hits both alike
  const rates: number[][] = rows.map(() => []);
  for (let rep = 0; rep < 3; rep++) {
    rows.forEach(([, insts, envs, steps, obs], i) => {
      rates[i]!.push(stepRate(insts, envs, steps, obs) / 1e6);
    });
  }
  rows.forEach(([name, insts, envs, , obs, target], i) => {
    const agents = insts[0]!.starts.length;
    const r = rates[i]!;
    // the wasm row's ratio to the reference row just before it
    const ratio = obs === "wasm"
      ? ` = ${fmt(median(r) / median(rates[i - 1]!), 1)}x reference`
      : "";
    console.log(
      `| ${name} | ${envs} x ${agents} | ${insts[0]!.width}x${
        insts[0]!.height
      } | ${fmt(median(r))} (${
        r.map((x) => fmt(x, 1)).join(", ")
      })${ratio} | ${target} |`,
    );
  });
  const enc = encodeCost(i16);
  console.log(
    `\nEncoding alone (every agent of 1024 x 8, 16x16, radius 2), ns per row: reference ${
      fmt(enc.reference, 1)
    }, wasm ${fmt(enc.wasm, 1)} (${fmt(enc.reference / enc.wasm, 1)}x)`,
  );
}

function benchSolve() {
  console.log(
    "\n### Solvers (ms per instance; generated instances, hole density 0.1, interaction 0.5)\n",
  );
  console.log(
    "| grid | agents | PP median | PP p90 | PP solved | CBS median | CBS p90 | CBS solved (5000 nodes) |",
  );
  console.log("|---|---|---|---|---|---|---|---|");
  const cases: [number, number[]][] = [[8, [2, 4, 8]], [16, [4, 8, 16]], [32, [
    8,
    16,
    32,
  ]]];
  for (const [size, counts] of cases) {
    for (const n of counts) {
      const insts: CompiledInstance[] = instancesFor(
        {
          width: size,
          height: size,
          agents: n,
          hole_density: 0.1,
          interaction: 0.5,
          distance: { min: 1, max: 2 * size },
          horizon: { factor: 3 },
        },
        20,
        3,
      ).map(compileInstance);
      const pp: number[] = [], cbs: number[] = [];
      let ppOk = 0, cbsOk = 0;
      for (const inst of insts) {
        let t0 = performance.now();
        if (solvePP(inst)) ppOk++;
        pp.push(performance.now() - t0);
        t0 = performance.now();
        if (solveCBS(inst, { maxNodes: 5000 })) cbsOk++;
        cbs.push(performance.now() - t0);
      }
      console.log(
        `| ${size}x${size} | ${n} | ${fmt(median(pp), 3)} | ${
          fmt(quantile(pp, 0.9), 3)
        } | ${ppOk}/${insts.length} | ${fmt(median(cbs), 3)} | ${
          fmt(quantile(cbs, 0.9), 3)
        } | ${cbsOk}/${insts.length} |`,
      );
    }
  }
}

function benchGenerate() {
  console.log("\n### Generation (rate and rejections)\n");
  console.log(
    "| config | instances | instances/s (median of 3) | draws | rejection rate | rejected (space/placement/unsolved/horizon) | CBS references |",
  );
  console.log("|---|---|---|---|---|---|---|");
  const row = (
    name: string,
    count: number,
    run: () => ReturnType<typeof generate>,
  ) => {
    const times: number[] = [];
    let last: ReturnType<typeof generate> | undefined;
    for (let k = 0; k < 3; k++) {
      const t0 = performance.now();
      last = run();
      times.push(performance.now() - t0);
    }
    const r = last!.report;
    const rej = r.rejected;
    console.log(
      `| ${name} | ${count} | ${
        fmt(count / (median(times) / 1000), 0)
      } | ${r.attempts} | ${r.rejection_rate} | ${rej.space}/${rej.placement}/${rej.unsolved}/${rej.horizon} | ${r.solvers.cbs} |`,
    );
  };
  for (const preset of ["easy", "medium", "hard"] as const) {
    row(
      `preset ${preset}`,
      500,
      () => generate({ preset }, { count: 500, seed: 11 }),
    );
  }
  for (const name of SUITE_NAMES) {
    row(`suite ${name}`, 200, () => generateSuite(name, { count: 200 }));
  }
}

const which = Deno.args[0];
console.log(
  `MAPF-FrozenLake bench, deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cores`,
);
if (!which || which === "step") benchStep();
if (!which || which === "solve") benchSolve();
if (!which || which === "generate") benchGenerate();
