/**
 * The fixed cost of a heavy node, and a cold `smoke` run, through the CLI:
 * this tree with warm workers (the default), this tree with a fresh worker
 * per node (`executor: { type: local, workers: fresh }`, the behaviour
 * before warm workers), and optionally another tree (`--base DIR`, e.g. a
 * worktree of an earlier commit, run through its own `cli.ts`). Modes
 * alternate round by round; every run starts from an empty cache.
 *
 * - `minimal`: 40 heavy nodes that do almost nothing (10 x generate 8 easy
 *   instances, train 1 update of 4 environments x 4 steps, rollout and
 *   evaluate on them), run with `--jobs 1`: the median node time per kind is
 *   the fixed cost of a node plus a few milliseconds of work, read from the
 *   run manifest (`nodes[].ms`).
 * - `smoke`: `experiments/smoke.yaml` with `--jobs 2`, wall time and CPU
 *   time (user + system, all threads, by `/usr/bin/time`) of the whole
 *   command (process start included) and the median heavy node time.
 *
 * - `slice` (only with `--only slice`; minutes): one curriculum of the
 *   context ablation (`--slice 'score[variant=full,seed=1]'`), wall and CPU
 *   time and its heavy nodes' times per kind.
 *
 * Run: `deno run -A bench/node_cost.ts [--base DIR] [--rounds 3] [--only minimal|smoke|slice]`
 *
 * @module
 */
import { join } from "node:path";
import { arg, median } from "./_common.ts";

const BASE = arg("base", "");
const ROUNDS = Number(arg("rounds", "3"));
const ONLY = arg("only", "");
const HERE = new URL("..", import.meta.url).pathname;
const HEAVY = ["generate", "train", "rollout", "evaluate"];

const MINIMAL = `experiment: node-cost
seed: 1
nodes:
  start: { kind: policy.init, with: { hidden: [16], seed: 1 } }
` + Array.from({ length: 10 }, (_, i) =>
  `  g${i}: { kind: generate, with: { config: { preset: easy }, count: 8, seed: ${
    i + 1
  } } }
  t${i}: { kind: train, with: { policy: $start, envs: $g${i}, updates: 1, parallel: 4, steps: 4, minibatch: 16, seed: ${
    i + 1
  } } }
  r${i}: { kind: rollout, with: { policy: $t${i}, envs: $g${i} } }
  e${i}: { kind: evaluate, with: { policy: $t${i}, envs: $g${i} } }
`).join("");

interface Mode {
  name: string;
  dir: string;
  fresh: boolean;
}
const modes: Mode[] = [
  { name: "warm", dir: HERE, fresh: false },
  { name: "fresh", dir: HERE, fresh: true },
  ...(BASE ? [{ name: "base", dir: BASE, fresh: false }] : []),
];

const tmp = await Deno.makeTempDir({ prefix: "envsmith-node-cost-" });

/** Runs `file` cold in `mode`; returns wall ms and node ms per kind. */
async function run(
  mode: Mode,
  yaml: string,
  jobs: number,
  tag: string,
  extra: readonly string[] = [],
): Promise<{ wall: number; cpu: number; nodes: Record<string, number[]> }> {
  const file = join(tmp, `${tag}-${mode.name}.yaml`);
  await Deno.writeTextFile(
    file,
    mode.fresh ? `${yaml}\nexecutor: { type: local, workers: fresh }\n` : yaml,
  );
  const cache = join(tmp, `cache-${tag}-${mode.name}-${crypto.randomUUID()}`);
  const t0 = performance.now();
  const timeFile = join(tmp, "time.txt");
  // /usr/bin/time: the CPU seconds of the whole command (all threads)
  const out = await new Deno.Command("/usr/bin/time", {
    args: [
      "-o",
      timeFile,
      "-f",
      "%U %S",
      Deno.execPath(),
      "run",
      "-A",
      join(mode.dir, "cli.ts"),
      "--cache",
      cache,
      "run",
      file,
      "--jobs",
      String(jobs),
      ...extra,
    ],
    cwd: mode.dir,
    env: { CI: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const wall = performance.now() - t0;
  const [user, sys] = (await Deno.readTextFile(timeFile)).trim().split(/\s+/)
    .slice(-2).map(Number);
  const cpu = 1000 * (user! + sys!);
  if (!out.success) {
    throw new Error(
      `${mode.name}: ${new TextDecoder().decode(out.stderr).slice(-2000)}`,
    );
  }
  const nodes: Record<string, number[]> = {};
  const runsDir = join(cache, "runs");
  for await (const exp of Deno.readDir(runsDir)) {
    for await (const f of Deno.readDir(join(runsDir, exp.name))) {
      if (!f.name.endsWith(".json")) continue;
      const m = JSON.parse(
        await Deno.readTextFile(join(runsDir, exp.name, f.name)),
      ) as { nodes: { kind: string; ms?: number; status: string }[] };
      for (const n of m.nodes) {
        if (n.status !== "done" || n.ms === undefined) continue;
        (nodes[n.kind] ??= []).push(n.ms);
      }
    }
  }
  await Deno.remove(cache, { recursive: true });
  return { wall, cpu, nodes };
}

const load = () => Deno.loadavg()[0]!.toFixed(2);
const lines: string[] = [];

if (!ONLY || ONLY === "minimal") {
  const per: Record<string, Record<string, number[]>> = {};
  const loads: string[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [...modes].reverse() : modes;
    for (const mode of order) {
      const { nodes } = await run(mode, MINIMAL, 1, "minimal");
      const p = per[mode.name] ??= {};
      for (const [k, ms] of Object.entries(nodes)) (p[k] ??= []).push(...ms);
    }
    loads.push(load());
  }
  lines.push(
    `Minimal heavy nodes (--jobs 1, ${ROUNDS} rounds x 10 nodes per kind), median node ms; load ${
      loads.join(" ")
    }:\n`,
    `| kind | ${modes.map((m) => m.name).join(" | ")} | fresh - warm |${
      BASE ? " base - warm |" : ""
    }`,
    `|---|${modes.map(() => "---:|").join("")}---:|${BASE ? "---:|" : ""}`,
  );
  const all: Record<string, number[]> = {};
  for (const kind of HEAVY) {
    const med = modes.map((m) => median(per[m.name]![kind]!));
    modes.forEach((m) => (all[m.name] ??= []).push(...per[m.name]![kind]!));
    lines.push(
      `| ${kind} | ${med.map((x) => x.toFixed(0)).join(" | ")} | ${
        (med[1]! - med[0]!).toFixed(0)
      } |${BASE ? ` ${(med[2]! - med[0]!).toFixed(0)} |` : ""}`,
    );
  }
  lines.push(
    `| all heavy | ${
      modes.map((m) => median(all[m.name]!).toFixed(0)).join(" | ")
    } | ${(median(all.fresh!) - median(all.warm!)).toFixed(0)} |${
      BASE ? ` ${(median(all.base!) - median(all.warm!)).toFixed(0)} |` : ""
    }`,
  );
}

if (!ONLY || ONLY === "smoke") {
  const smoke = await Deno.readTextFile(
    join(HERE, "experiments", "smoke.yaml"),
  );
  const walls: Record<string, number[]> = {};
  const cpus: Record<string, number[]> = {};
  const heavy: Record<string, number[]> = {};
  const loads: string[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [...modes].reverse() : modes;
    for (const mode of order) {
      const { wall, cpu, nodes } = await run(mode, smoke, 2, "smoke");
      (walls[mode.name] ??= []).push(wall);
      (cpus[mode.name] ??= []).push(cpu);
      for (const k of HEAVY) {
        (heavy[mode.name] ??= []).push(...(nodes[k] ?? []));
      }
    }
    loads.push(load());
  }
  lines.push(
    "",
    `Cold \`run experiments/smoke.yaml --jobs 2\` (20 nodes, a new process each), ${ROUNDS} rounds; load ${
      loads.join(" ")
    }:\n`,
    `| mode | wall s (median) | all rounds | wall vs warm | CPU s (user + sys, median) | CPU vs warm | median heavy node ms |`,
    `|---|---:|---|---:|---:|---:|---:|`,
  );
  for (const m of modes) {
    lines.push(
      `| ${m.name} | ${(median(walls[m.name]!) / 1000).toFixed(2)} | ${
        walls[m.name]!.map((x) => (x / 1000).toFixed(2)).join(", ")
      } | ${(median(walls[m.name]!) / median(walls.warm!)).toFixed(2)}x | ${
        (median(cpus[m.name]!) / 1000).toFixed(2)
      } | ${(median(cpus[m.name]!) / median(cpus.warm!)).toFixed(2)}x | ${
        median(heavy[m.name]!).toFixed(0)
      } |`,
    );
  }
}

if (ONLY === "slice") {
  // one curriculum of the context ablation (not run by default: minutes)
  const yaml = await Deno.readTextFile(
    join(HERE, "experiments", "ablate-context.yaml"),
  );
  const only = arg("slice", "score[variant=full,seed=1]");
  const res: Record<
    string,
    { wall: number; cpu: number; nodes: Record<string, number[]> }[]
  > = {};
  const loads: string[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? [...modes].reverse() : modes;
    for (const mode of order) {
      (res[mode.name] ??= []).push(
        await run(mode, yaml, 2, "slice", ["--only", only]),
      );
    }
    loads.push(load());
  }
  lines.push(
    `Cold \`run experiments/ablate-context.yaml --only '${only}' --jobs 2\`, ${ROUNDS} round(s); load ${
      loads.join(" ")
    }:\n`,
    `| mode | wall s | CPU s | heavy nodes | median heavy node ms | sum of heavy node ms | median ms generate / train / rollout / evaluate |`,
    `|---|---:|---:|---:|---:|---:|---|`,
  );
  for (const m of modes) {
    for (const x of res[m.name]!) {
      const heavy = HEAVY.flatMap((k) => x.nodes[k] ?? []);
      lines.push(
        `| ${m.name} | ${(x.wall / 1000).toFixed(1)} | ${
          (x.cpu / 1000).toFixed(1)
        } | ${heavy.length} | ${median(heavy).toFixed(0)} | ${
          heavy.reduce((a, b) => a + b, 0).toFixed(0)
        } | ${
          HEAVY.map((k) => x.nodes[k] ? median(x.nodes[k]!).toFixed(0) : "-")
            .join(" / ")
        } |`,
      );
    }
  }
}

await Deno.remove(tmp, { recursive: true });
console.log(lines.join("\n"));
