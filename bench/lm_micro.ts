/**
 * The micro LM policy end to end (`./envsmith lm:micro`): instances of
 * `lm/configs/micro.yaml` (3x3-5x5 maps, 1-3 agents, impassable holes),
 * lm-data with solver references, then per seed the Python trainer
 * (`python -m envsmith_lm micro`: tokenizer, micro Llama, SFT on solver
 * plans, GRPO stages rewarded by `cli reward`), and a summary of held-out
 * success after SFT and after RL with a paired 95% crossed bootstrap
 * interval over seeds and held-out instances.
 *
 * ```sh
 * ./envsmith setup:lm
 * ./envsmith lm:micro [--seeds 1,2,3,4] [--jobs 2] [--heldout-seed 2] [--heldout-count 400]
 *   [--out DIR] [-- TRAINER FLAGS ...]
 * ```
 *
 * Finished stages are kept under DIR (default `.envsmith/lm-micro`): a rerun
 * resumes from the last finished stage of each seed.
 *
 * @module
 */
import { join, resolve } from "node:path";
import { UserError } from "@envsmith/engine";
import {
  bootstrapP,
  crossedResamples,
  percentileInterval,
  prepareGroup,
} from "@envsmith/engine/tables";
import { LM_DIR, lmPython } from "../nodes/lm_env.ts";
import { takeFlag } from "./_common.ts";

const args = [...Deno.args];
const flag = (name: string, def: string) => takeFlag(args, name) ?? def;
const seeds = flag("--seeds", "1,2,3,4").split(",").map(Number);
const jobs = Number(flag("--jobs", "2"));
const heldoutSeed = Number(flag("--heldout-seed", "2"));
const heldoutCount = Number(flag("--heldout-count", "400"));
const out = resolve(flag("--out", ".envsmith/lm-micro"));
const dash = args.indexOf("--");
const extra = dash >= 0 ? args.slice(dash + 1) : [];
let python: string;
try {
  python = lmPython();
} catch (e) {
  if (e instanceof UserError) {
    console.error(e.message);
    Deno.exit(2);
  }
  throw e;
}
const cli = ["run", "-A", resolve("cli.ts")];
const data = join(out, "data");
await Deno.mkdir(data, { recursive: true });

async function sh(cmd: string, a: string[], stdoutFile?: string, cwd?: string) {
  const o = await new Deno.Command(cmd, {
    args: a,
    stdout: stdoutFile ? "piped" : "inherit",
    stderr: "inherit",
    ...(cwd ? { cwd } : {}),
  }).output();
  if (o.code !== 0) {
    throw new Error(`${cmd} ${a.join(" ")} failed (exit ${o.code})`);
  }
  if (stdoutFile) await Deno.writeFile(stdoutFile, o.stdout);
}

const t0 = performance.now();
const heldout = `heldout-${heldoutSeed}`;
const sets = [
  ["sft", 1, 4000],
  ["rl", 3, 1000],
  [heldout, heldoutSeed, heldoutCount],
] as const;
for (const [name, seed, count] of sets) {
  const inst = join(data, `${name}_instances.jsonl`);
  try {
    await Deno.stat(join(data, `${name}.jsonl`));
    continue;
  } catch { /* not yet */ }
  await sh(Deno.execPath(), [
    ...cli,
    "generate",
    "--config",
    "lm/configs/micro.yaml",
    "--count",
    String(count),
    "--seed",
    String(seed),
    "--out",
    inst,
  ]);
  await sh(
    Deno.execPath(),
    [...cli, "lm-data", inst, "--prompt", "bare"],
    join(data, `${name}.jsonl`),
  );
}
const all = (await Promise.all(
  ["rl", heldout].map((n) =>
    Deno.readTextFile(join(data, `${n}_instances.jsonl`))
  ),
)).join("");
await Deno.writeTextFile(join(data, "instances.jsonl"), all);

// seeds run `--jobs` at a time, each trainer on its own share of the cores
const threads = String(
  Math.max(1, Math.floor(navigator.hardwareConcurrency / jobs)),
);
async function trainSeed(seed: number): Promise<Record<string, unknown>> {
  const dir = join(out, `seed-${seed}`);
  await sh(
    python,
    [
      "-m",
      "envsmith_lm",
      "micro",
      "--data",
      data,
      "--out",
      dir,
      "--seed",
      String(seed),
      "--threads",
      threads,
      "--heldout-file",
      join(data, `${heldout}.jsonl`),
      "--reward-cmd",
      `${Deno.execPath()} ${cli.join(" ")}`,
      ...extra,
    ],
    undefined,
    LM_DIR,
  );
  return JSON.parse(await Deno.readTextFile(join(dir, "results.json")));
}
const results: Record<string, unknown>[] = new Array(seeds.length);
let next = 0;
await Promise.all(
  Array.from({ length: Math.min(jobs, seeds.length) }, async () => {
    while (next < seeds.length) {
      const i = next++;
      results[i] = await trainSeed(seeds[i]!);
    }
  }),
);
const minutes = (performance.now() - t0) / 60000;
console.log(`lm micro: seeds ${seeds.join(",")}, ${minutes.toFixed(1)} min`);
type Eval = { success: number; outcomes?: Record<string, string> };
const lastRl = (r: Record<string, unknown>) => {
  const ks = Object.keys(r).filter((k) => /^rl-\d+$/.test(k)).sort();
  return r[ks.at(-1)!] as Eval | undefined;
};
const paired: [Eval, Eval][] = [];
for (const [i, r] of results.entries()) {
  const sft = r.sft as Eval, rl = lastRl(r);
  console.log(
    `  seed ${seeds[i]}: held-out success SFT ${
      sft.success.toFixed(3)
    }, after RL ${rl?.success.toFixed(3) ?? "-"} (${r.heldout} instances)`,
  );
  if (rl?.outcomes && sft.outcomes) paired.push([sft, rl]);
}
if (paired.length > 0) {
  const s = summarise(paired);
  console.log(
    `  RL - SFT: ${s.mean >= 0 ? "+" : ""}${
      s.mean.toFixed(3)
    }, 95% crossed bootstrap over ${paired.length} seeds x ${s.instances} held-out instances [${
      s.low.toFixed(3)
    }, ${s.high.toFixed(3)}], p ${s.p.toFixed(4)}`,
  );
}

/**
 * The paired difference of held-out success after RL and after SFT, with a
 * crossed bootstrap (seeds and held-out instances drawn independently, as
 * the tables do; 10,000 resamples, seed 1) over the instances every seed
 * scored.
 */
function summarise(pairs: [Eval, Eval][]) {
  const ids = Object.keys(pairs[0]![0].outcomes!).filter((id) =>
    pairs.every(([a, b]) => id in a.outcomes! && id in b.outcomes!)
  );
  const n = pairs.length;
  const entries: Float64Array[] = new Array(2 * n);
  pairs.forEach(([sft, rl], k) => {
    const win = (e: Eval) =>
      Float64Array.from(ids, (id) => e.outcomes![id] === "success" ? 1 : 0);
    entries[k] = win(sft);
    entries[n + k] = win(rl);
  });
  const group = prepareGroup({ entries }, 2, n);
  const diff = (means: Float64Array, pick: (k: number) => number) => {
    let d = 0;
    for (let k = 0; k < n; k++) {
      const j = pick(k);
      d += means[n + j]! - means[j]!;
    }
    return d / n;
  };
  const boot = new Float64Array(10_000);
  crossedResamples([group], 2, n, boot.length, 1, (b, means, draws) => {
    boot[b] = diff(means, (k) => Math.floor(draws[k]! * n));
  });
  boot.sort();
  const [low, high] = percentileInterval(boot, 0.95);
  return {
    mean: diff(group.means, (k) => k),
    low,
    high,
    p: bootstrapP(boot, 0),
    instances: ids.length,
  };
}
