/**
 * `deno bench` cases of MAPF-FrozenLake (`deno bench -A bench/mapf_bench.ts`);
 * the side-by-side tables with targets come from `bench/mapf.ts`.
 *
 * @module
 */
import {
  BatchEnv,
  compileInstance,
  generate,
  InstancePool,
  Rng,
  solveCBS,
  solvePP,
} from "../mapf/mod.ts";
import { STEPPING_16X16 } from "./_mapf.ts";

const generated = generate(STEPPING_16X16, { count: 64, seed: 1 }).instances;
const i16 = generated.map((i) => ({
  ...i,
  collision: "block" as const,
  holes: "blocked" as const,
}));
const pool = InstancePool.from(i16);
const rng = new Rng(3);
const batched = new BatchEnv(pool, { envs: 1024 });
batched.resetAll();
const actions = Uint8Array.from({ length: 1024 * 8 }, () => rng.int(5));
const single = new BatchEnv(pool, { envs: 1 });
single.resetAll();
const singleActions = actions.subarray(0, 8);

Deno.bench("step 1024 envs x 8 agents, 16x16 (8192 agent-steps)", {
  group: "step",
  baseline: true,
}, () => {
  batched.step(actions);
  batched.resetDone();
});
Deno.bench(
  "step 1 env x 8 agents, 16x16 (8 agent-steps)",
  { group: "step" },
  () => {
    single.step(singleActions);
    single.resetDone();
  },
);

const i8 = generate({
  width: 8,
  height: 8,
  agents: 4,
  hole_density: 0.1,
  interaction: 0.5,
  distance: { min: 1, max: 16 },
}, {
  count: 32,
  seed: 3,
}).instances.map(compileInstance);
let k = 0;
Deno.bench("PP, 8x8, 4 agents", { group: "solve", baseline: true }, () => {
  solvePP(i8[k++ % i8.length]!);
});
Deno.bench("CBS, 8x8, 4 agents", { group: "solve" }, () => {
  solveCBS(i8[k++ % i8.length]!);
});
let seed = 0;
Deno.bench("generate 10 easy instances", { group: "generate" }, () => {
  generate({ preset: "easy" }, { count: 10, seed: seed++ });
});
