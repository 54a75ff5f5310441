/**
 * Diagnosis and redesign costs on real rollouts: generate instances, roll an
 * untrained policy out (mapf + policy), then time `diagnose`, the context
 * builder for each context type, and each offline engineer's proposal.
 *
 * Run: `deno run -A bench/diagnose.ts [episodes] [preset]` (default 512 medium).
 *
 * @module
 */
import { decodeTrajectories } from "../mapf/mod.ts";
import { generate } from "../mapf/generator.ts";
import {
  initCheckpoint,
  obsSize,
  OnnxPolicy,
  onnxRunner,
  rollout,
  saveCheckpoint,
} from "../policy/mod.ts";
import { parseEnvConfig, type PresetName } from "../schemas/mod.ts";
import {
  buildContext,
  CONTEXT_TYPES,
  createEngineer,
  diagnose,
  episodesFromRollouts,
} from "../engineer/mod.ts";

const episodes = Number(Deno.args[0] ?? 512);
const preset = (Deno.args[1] ?? "medium") as PresetName;
const config = parseEnvConfig({ preset });
const ck = initCheckpoint({ hidden: [64, 64], seed: 1 });
const { instances } = generate(config, { count: episodes, seed: 1 });
const policy = await OnnxPolicy.load(saveCheckpoint(ck), {
  source: "bench",
  inputSize: obsSize(ck.obs),
});
const res = await rollout(onnxRunner(policy), instances, {
  obs: ck.obs,
  seed: 1,
  record: true,
});
await policy.release();
const eps = decodeTrajectories(res.trajectories!);
const agentSteps = eps.reduce((s, e) => s + e.steps * e.agents, 0);

function time<T>(fn: () => T, reps = 5): { ms: number; out: T } {
  let out!: T;
  const ms: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    out = fn();
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  return { ms: ms[Math.floor(reps / 2)]!, out };
}

const views = time(() => episodesFromRollouts(eps, instances, config));
const diag = time(() => diagnose(views.out, { seed: 1, config }));
const f = diag.out;
console.log(
  `deno ${Deno.version.deno}; ${episodes} episodes of ${preset} (${agentSteps} agent-steps), untrained policy: ` +
    `success ${f.success_rate}, failures ${JSON.stringify(f.outcomes)}\n`,
);
console.log("| step | median ms (5 runs) | per episode µs |");
console.log("|---|---|---|");
const row = (name: string, ms: number) =>
  console.log(
    `| ${name} | ${ms.toFixed(2)} | ${(1000 * ms / episodes).toFixed(1)} |`,
  );
row("episodesFromRollouts", views.ms);
row("diagnose", diag.ms);
for (const type of CONTEXT_TYPES) {
  const c = time(() =>
    buildContext(type, f, config, {
      history: [{ findings: f }, { findings: f }],
    })
  );
  row(`buildContext ${type} (${c.out.text.length} chars)`, c.ms);
}
const ctx = buildContext("full", f, config, { history: [{ findings: f }] });
for (const name of ["fixed", "random", "rules", "replay"]) {
  const e = createEngineer(name);
  const ms: number[] = [];
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    await e.propose({ context: ctx, config, seed: i });
    ms.push(performance.now() - t0);
  }
  ms.sort((a, b) => a - b);
  row(`propose ${name} (full)`, ms[2]!);
}
console.log("\nRules engineer per context type on these findings:\n");
for (const type of CONTEXT_TYPES) {
  const c = buildContext(type, f, config, { history: [{ findings: f }] });
  const p = await createEngineer("rules").propose({
    context: c,
    config,
    seed: 1,
  });
  console.log(`- ${type}: ${p.events.map((e) => e.detail).join(", ")}`);
}
