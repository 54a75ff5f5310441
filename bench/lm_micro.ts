/**
 * The micro LM policy end to end (`deno task lm:micro`): instances of
 * `lm/configs/micro.yaml` (3x3-5x5 maps, 1-3 agents, impassable holes),
 * lm-data with solver references, then per seed the Python trainer
 * (`python -m envsmith_lm micro`: tokenizer, micro Llama, SFT on solver
 * plans, GRPO stages rewarded by `cli reward`), and a summary of held-out
 * success after SFT and after RL with a paired 95% bootstrap interval over
 * seeds and held-out instances.
 *
 * ```sh
 * deno task setup:lm
 * deno task lm:micro --seeds 1,2,3 [--out DIR] [-- TRAINER FLAGS ...]
 * ```
 *
 * Finished stages are kept under DIR (default `.envsmith/lm-micro`): a rerun
 * resumes from the last finished stage of each seed.
 *
 * @module
 */
import { join, resolve } from "node:path";
import { UserError } from "@envsmith/engine";
import { LM_DIR, lmPython } from "../nodes/lm_env.ts";

const args = [...Deno.args];
const flag = (name: string, def: string) => {
  const i = args.indexOf(name);
  if (i < 0) return def;
  const v = args[i + 1]!;
  args.splice(i, 2);
  return v;
};
const seeds = flag("--seeds", "1,2,3").split(",").map(Number);
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
const sets = [["sft", 1, 4000], ["rl", 3, 1000], ["heldout", 2, 400]] as const;
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
  ["rl", "heldout"].map((n) =>
    Deno.readTextFile(join(data, `${n}_instances.jsonl`))
  ),
)).join("");
await Deno.writeTextFile(join(data, "instances.jsonl"), all);

const results: Record<string, unknown>[] = [];
for (const seed of seeds) {
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
      "--reward-cmd",
      `${Deno.execPath()} ${cli.join(" ")}`,
      ...extra,
    ],
    undefined,
    LM_DIR,
  );
  results.push(JSON.parse(await Deno.readTextFile(join(dir, "results.json"))));
}
const minutes = (performance.now() - t0) / 60000;
const last = (r: Record<string, unknown>) => {
  const ks = Object.keys(r).filter((k) => /^rl-\d+$/.test(k)).sort();
  return r[ks.at(-1)!] as { success: number } | undefined;
};
console.log(`lm micro: seeds ${seeds.join(",")}, ${minutes.toFixed(1)} min`);
const diffs: number[] = [];
for (const [i, r] of results.entries()) {
  const sft = (r.sft as { success: number }).success, rl = last(r)?.success;
  console.log(
    `  seed ${seeds[i]}: held-out success SFT ${sft.toFixed(3)}, after RL ${
      rl?.toFixed(3) ?? "-"
    } (${r.heldout} instances)`,
  );
  if (rl !== undefined) diffs.push(rl - sft);
}
if (diffs.length > 0) {
  // bootstrap over seeds of the paired difference (instances are shared by seeds)
  let s = 12345;
  const rnd =
    () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const boot: number[] = [];
  for (let b = 0; b < 10000; b++) {
    let m = 0;
    for (let j = 0; j < diffs.length; j++) {
      m += diffs[Math.floor(rnd() * diffs.length)]!;
    }
    boot.push(m / diffs.length);
  }
  boot.sort((a, b) => a - b);
  const mean = diffs.reduce((a, b) => a + b, 0) / diffs.length;
  console.log(
    `  RL - SFT: mean ${mean.toFixed(3)}, 95% bootstrap over seeds [${
      boot[250]!.toFixed(3)
    }, ${boot[9749]!.toFixed(3)}]`,
  );
}
