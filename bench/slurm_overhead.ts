/**
 * What the Slurm executor costs, measured against a real cluster (the
 * single-node one `.ci/slurm_up.sh` starts; on a real cluster pass `--dir`
 * on the shared file system, since the caches live there):
 *
 * - `fan20`: 20 independent trivial nodes, as one job array and as 20 jobs;
 *   per node = (Slurm wall - local wall) / 20, plus the time of the sbatch
 *   calls themselves.
 * - `chain10`: 10 trivial nodes each reading the previous one: the latency
 *   per level of the graph (submit, schedule, start Deno, store, notice).
 * - raw chains of 5 `true` jobs, chained by `--dependency=afterok` versus
 *   submitted one after the other when the previous one's file appears (what
 *   the engine does), to weigh the decision documented in docs/cluster.md.
 * - `smoke`: a 2-stage curriculum with the domain kinds (13 nodes), local
 *   versus Slurm.
 *
 * Run: `deno run -A bench/slurm_overhead.ts [--repeat N] [--dir DIR] [--mem 256M] [--only fan20|chain10|smoke|raw]`
 * (prints a markdown table; about 4 minutes with the defaults on 2 cores).
 *
 * @module
 */
import { SMOKE_NODES, smokeYaml } from "../experiments/smoke.ts";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { allKinds } from "../mod.ts";
import { fileURLToPath } from "node:url";
import { SilentReporter } from "@envsmith/engine/run";
import {
  commandSlurmClient,
  local,
  runCommandLine,
  type SlurmClient,
  slurmExecutorKind,
  slurmUnavailable,
} from "@envsmith/engine/executor";
import { type CommandContext, runCommand } from "@envsmith/engine/cli";
import { kinds as testKinds } from "../engine/testdata/kinds.ts";

const { values: args } = parseArgs({
  args: Deno.args,
  options: {
    repeat: { type: "string", default: "2" },
    dir: { type: "string" },
    mem: { type: "string", default: "256M" },
    only: { type: "string" },
  },
});
const REPEAT = Number(args.repeat);
const ROOT = fileURLToPath(new URL("../", import.meta.url));
const COMMAND = [
  "run",
  "-A",
  "--config",
  join(ROOT, "deno.json"),
  join(ROOT, "cli.ts"),
  "--kinds",
  join(ROOT, "engine/testdata/kinds.ts"),
];

const why = await slurmUnavailable();
if (why) {
  console.error(`no Slurm cluster: ${why}`);
  Deno.exit(1);
}

/** The real client, timing every sbatch call. */
function timedClient(): { client: SlurmClient; submitMs: number[] } {
  const inner = commandSlurmClient();
  const submitMs: number[] = [];
  return {
    submitMs,
    client: {
      ...inner,
      async submit(script, a) {
        const t0 = performance.now();
        try {
          return await inner.submit(script, a);
        } finally {
          submitMs.push(performance.now() - t0);
        }
      },
    },
  };
}

const base = args.dir ?? await Deno.makeTempDir({ prefix: "envsmith-bench-" });
// Ctrl-C: the executor cancels the jobs of the run in progress.
const controller = new AbortController();
Deno.addSignalListener("SIGINT", () => controller.abort());

/** Jobs in the queue (anyone's): the measurements want an idle cluster. */
async function queueLength(): Promise<number> {
  const r = await runCommandLine("squeue", ["-h", "-o", "%i"]);
  return r.stdout.split("\n").filter((l) => l.trim()).length;
}
let busyRuns = 0;

async function run(
  yaml: string,
  executor: "local" | "slurm",
  tag: string,
): Promise<{ ms: number; submitMs: number[] }> {
  const dir = join(
    base,
    `${tag}-${executor}-${crypto.randomUUID().slice(0, 6)}`,
  );
  Deno.mkdirSync(dir, { recursive: true });
  const file = join(dir, "exp.yaml");
  Deno.writeTextFileSync(file, yaml);
  const { client, submitMs } = timedClient();
  const ctx: CommandContext = {
    kinds: [...allKinds, ...testKinds],
    cache: join(dir, "cache"),
    output: { out: () => {}, err: () => {} },
    reporter: new SilentReporter(),
    command: COMMAND,
    executors: [local, slurmExecutorKind({ client })],
    signal: controller.signal,
  };
  const t0 = performance.now();
  const r = await runCommand(ctx, file, { executor });
  const ms = performance.now() - t0;
  if (controller.signal.aborted) Deno.exit(130);
  if (executor === "slurm" && await queueLength() > 0) busyRuns++;
  if (r.code !== 0) {
    throw new Error(
      `${tag} ${executor} failed: ${
        r.result.failures.map((f) => f.message).join("; ")
      }`,
    );
  }
  return { ms, submitMs };
}

const exec = (extra: string) =>
  `executor:\n  type: slurm\n  poll_seconds: 1\n  resources: { mem: ${args.mem}, time: 10 }\n${extra}`;

function fan(n: number, array: boolean): string {
  return `experiment: fan\nseed: 1\nmatrix:\n  i: [${
    Array.from({ length: n }, (_, i) => i + 1).join(", ")
  }]\n${
    exec(`  array: ${array}\n`)
  }nodes:\n  n: { kind: test.add, with: { a: $matrix.i } }\n`;
}

function chain(n: number): string {
  const lines = [`  n0: { kind: test.add, with: { a: 0 } }`];
  for (let i = 1; i < n; i++) {
    lines.push(
      `  n${i}: { kind: test.add, with: { a: $n${i - 1}.sum, b: 1 } }`,
    );
  }
  return `experiment: chain\nseed: 1\n${exec("")}nodes:\n${lines.join("\n")}\n`;
}

const SMOKE = smokeYaml("smoke", exec(""));

/** Raw Slurm: a chain of `n` trivial jobs, by afterok or submitted one by one after the previous finished. */
async function rawChain(n: number, afterok: boolean): Promise<number> {
  const dir = join(base, `raw-${crypto.randomUUID().slice(0, 6)}`);
  Deno.mkdirSync(dir, { recursive: true });
  const exists = (p: string) => {
    try {
      Deno.statSync(p);
      return true;
    } catch {
      return false;
    }
  };
  const submit = async (i: number, dep?: string) => {
    const r = await runCommandLine("sbatch", [
      "--parsable",
      `--mem=${args.mem}`,
      "-o",
      "/dev/null",
      "--job-name=envsmith-bench-raw",
      ...(dep
        ? [`--dependency=afterok:${dep}`, "--kill-on-invalid-dep=yes"]
        : []),
      "--wrap",
      `touch ${join(dir, `done.${i}`)}`,
    ]);
    if (r.code !== 0) throw new Error(r.stderr);
    return r.stdout.trim().split(";")[0]!;
  };
  const t0 = performance.now();
  let prev: string | undefined;
  for (let i = 0; i < n; i++) {
    if (afterok) prev = await submit(i, prev);
    else {
      await submit(i);
      while (!exists(join(dir, `done.${i}`))) {
        await new Promise((r) => setTimeout(r, 250));
      }
    }
  }
  while (!exists(join(dir, `done.${n - 1}`))) {
    await new Promise((r) => setTimeout(r, 50));
  }
  return performance.now() - t0;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2
    ? s[(s.length - 1) / 2]!
    : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};
const sec = (ms: number) => (ms / 1000).toFixed(1);

/** Waits (up to 10 minutes) for an empty queue, then 4 s more (batch_sched_delay). */
async function quiet(): Promise<void> {
  for (let i = 0; i < 600 && await queueLength() > 0; i++) {
    await new Promise((r) => setTimeout(r, 1000));
  }
  await new Promise((r) => setTimeout(r, 4000));
}

/** Runs twice at most: the shared working tree may change a kind's code mid-run (the job then refuses to run). */
async function measure(
  yaml: string,
  executor: "local" | "slurm",
): Promise<{ ms: number; submitMs: number[] }> {
  try {
    return await run(yaml, executor, "b");
  } catch (e) {
    console.error(`retrying once: ${(e as Error).message.slice(0, 300)}`);
    await quiet();
    return await run(yaml, executor, "b");
  }
}

const cpus = (await runCommandLine("sinfo", ["-h", "-o", "%c"])).stdout.trim();
console.log(
  `Slurm ${
    (await runCommandLine("sinfo", ["-V"])).stdout.trim()
  }, ${cpus} CPUs in the partition, median of ${REPEAT} (cold caches; wall seconds)\n`,
);
console.log(
  "| scenario | local (s) | slurm (s) | extra per node (s) | sbatch call (median x calls) |",
);
console.log("| --- | ---: | ---: | ---: | --- |");
const SCENARIOS = [
  ["fan20 (one job array)", fan(20, true), 20],
  ["fan20 (20 jobs, array: false)", fan(20, false), 20],
  ["chain10 (10 levels)", chain(10), 10],
  [`smoke: experiments/smoke.yaml (${SMOKE_NODES} nodes)`, SMOKE, SMOKE_NODES],
] as const;
for (const [tag, yaml, nodes] of SCENARIOS) {
  if (args.only && !tag.startsWith(args.only)) continue;
  const local: number[] = [], slurm: number[] = [], sb: number[] = [];
  for (let i = 0; i < REPEAT; i++) {
    await quiet();
    local.push((await measure(yaml, "local")).ms);
    await quiet();
    const s = await measure(yaml, "slurm");
    slurm.push(s.ms);
    sb.push(...s.submitMs);
  }
  const l = median(local), s = median(slurm);
  console.log(
    `| ${tag} | ${sec(l)} | ${sec(s)} | ${sec((s - l) / nodes)} | ${
      sb.length ? `${(median(sb)).toFixed(0)} ms x ${sb.length / REPEAT}` : "-"
    } |`,
  );
}

if (!args.only || args.only === "raw") {
  console.log(
    "\n| raw Slurm chain | wall (s) | per link (s) |\n| --- | ---: | ---: |",
  );
  for (const afterok of [true, false]) {
    const t: number[] = [];
    for (let i = 0; i < REPEAT; i++) {
      await quiet();
      t.push(await rawChain(5, afterok));
    }
    console.log(
      `| 5 \`true\` jobs chained by ${
        afterok
          ? "`--dependency=afterok`"
          : "polling for the previous job's file (engine-side)"
      } | ${sec(median(t))} | ${sec(median(t) / 5)} |`,
    );
  }
}
if (busyRuns) {
  console.log(
    `\nnote: other jobs were in the queue at the end of ${busyRuns} Slurm run(s): those numbers include waiting for them`,
  );
}
if (!args.dir) await Deno.remove(base, { recursive: true }).catch(() => {});
