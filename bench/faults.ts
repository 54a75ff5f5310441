/**
 * The fault suite at scale: every bad input of the catalogue
 * (`faults/cases.ts`), then randomised SIGKILL-and-resume loops on a
 * test-kind experiment and (optionally) on `experiments/quick.yaml`. Prints
 * the counts `bench/RESULTS.md` records: inputs tried, refused cleanly,
 * kills survived, entries lost.
 *
 * Run: `deno run -A bench/faults.ts [KILLS] [QUICK_KILLS] [SEED] [EXEC_KILLS]`
 * (defaults 20, 0, 1 and 0; QUICK_KILLS > 0 runs quick.yaml cold first, a few
 * minutes; EXEC_KILLS > 0 kills runs of `exec` nodes whose commands fork
 * and counts the node processes left behind).
 *
 * @module
 */
import { join } from "node:path";
import { checkAll, formatResult } from "../faults/cases.ts";
import {
  killAndResume,
  type KillOptions,
  type KillReport,
} from "../faults/kill.ts";
import { ROOT } from "../faults/probe.ts";
import { killExperimentYaml } from "./_cli.ts";

/** Rounds of `perRound` kills, each from an empty cache, until `kills` hit a running process; the counts summed. */
async function _rounds(
  file: string,
  dir: string,
  kills: number,
  perRound: number,
  options: Omit<KillOptions, "kills" | "log">,
): Promise<KillReport> {
  await Deno.mkdir(dir, { recursive: true });
  const reference = join(dir, "reference");
  const total = {
    kills: 0,
    finishedFirst: 0,
    corrupt: 0,
    lost: 0,
    finalCode: 0,
    nodes: 0,
    differing: [] as string[],
    survivors: 0,
  };
  for (let round = 0; total.kills < kills && round < 4 * kills; round++) {
    const sub = join(dir, `round-${round}`);
    await Deno.mkdir(sub);
    const r = await killAndResume(file, sub, {
      ...options,
      kills: Math.min(perRound, kills - total.kills),
      seed: options.seed + 1000 * round,
      reference,
      log: (l) => console.log(`  round ${round + 1}: ${l}`),
    });
    total.kills += r.kills;
    total.finishedFirst += r.finishedFirst;
    total.corrupt += r.corrupt;
    total.lost += r.lost;
    total.finalCode ||= r.finalCode;
    total.nodes += r.nodes;
    total.differing.push(...r.differing);
    total.survivors += r.survivors;
    await Deno.remove(sub, { recursive: true });
  }
  return total;
}

const kills = Number(Deno.args[0] ?? 20);
const quickKills = Number(Deno.args[1] ?? 0);
const seed = Number(Deno.args[2] ?? 1);
const execKills = Number(Deno.args[3] ?? 0);
const dir = await Deno.makeTempDir({ prefix: "envsmith-bench-faults-" });

try {
  const t0 = performance.now();
  const results = await checkAll(join(dir), 2);
  for (const r of results) console.log(formatResult(r));
  const clean = results.filter((r) => r.problems.length === 0).length;
  const slowest = Math.max(...results.map((r) => r.probe.ms));
  const largest = Math.max(...results.map((r) => r.probe.peakMb));
  console.log(
    `\ninputs tried ${results.length}, refused cleanly ${clean} (slowest ${
      slowest.toFixed(0)
    } ms, largest ${largest.toFixed(0)} MB) in ${
      ((performance.now() - t0) / 1000).toFixed(1)
    } s`,
  );

  const reports: [string, KillReport][] = [];
  if (kills > 0) {
    const file = join(dir, "kill.yaml");
    await Deno.writeTextFile(file, killExperimentYaml(12, 60));
    // Rounds of 4 kills from an empty cache (a round's work outlasts about
    // 4 kills), until `kills` have hit a running process.
    reports.push([
      "test kinds, 49 nodes",
      await _rounds(file, join(dir, "kill"), kills, 4, {
        seed,
        minMs: 100,
        maxMs: 1200,
      }),
    ]);
  }
  if (quickKills > 0) {
    // quick.yaml computes for 3-8 s cold here: rounds of 2 kills.
    reports.push([
      "experiments/quick.yaml",
      await _rounds(
        join(ROOT, "experiments/quick.yaml"),
        join(dir, "quick"),
        quickKills,
        2,
        {
          seed: seed + 1,
          minMs: 500,
          maxMs: 3_000,
          testKinds: false,
          timeoutMs: 900_000,
        },
      ),
    ]);
  }
  if (execKills > 0) {
    // Two chains of exec nodes; each command forks a 30 s sleep into the
    // background (left behind on purpose) and writes its output after a
    // short wait: a kill lands while commands and their children run.
    const file = join(dir, "exec.yaml");
    const nodes: string[] = [];
    for (const chain of ["a", "b"]) {
      for (let i = 0; i < 6; i++) {
        nodes.push(
          `  ${chain}${i}: { kind: exec, with: { command: sh, args: [-c, "sleep 30 & (sleep 60; true) & sleep 0.${
            2 + i % 4
          }; echo $ENVSMITH_SEED > out.txt"], outputs: [out.txt], input: ${
            i === 0 ? `{ chain: ${chain} }` : `$${chain}${i - 1}.outputs`
          } } }`,
        );
      }
    }
    await Deno.writeTextFile(
      file,
      `experiment: execkill\nseed: 1\nnodes:\n${nodes.join("\n")}\n`,
    );
    reports.push([
      "exec nodes that fork, 12 nodes",
      await _rounds(file, join(dir, "exec"), execKills, 3, {
        seed: seed + 2,
        minMs: 100,
        maxMs: 1500,
      }),
    ]);
  }
  for (const [what, r] of reports) {
    console.log(
      `${what}: ${r.kills} kills survived (${r.finishedFirst} runs finished before their kill), ${r.corrupt} corrupt, ${r.lost} entries lost, final runs exit ${r.finalCode}, ${
        r.nodes - r.differing.length
      }/${r.nodes} node values identical to an uninterrupted run, ${r.survivors} node processes left behind`,
    );
  }
  const bad = results.length - clean +
    reports.reduce(
      (n, [, r]) =>
        n + r.corrupt + r.lost + r.differing.length + r.survivors +
        (r.finalCode ? 1 : 0),
      0,
    );
  if (bad > 0) Deno.exitCode = 1;
} finally {
  await Deno.remove(dir, { recursive: true });
}
