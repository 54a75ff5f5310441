/**
 * Throughput of the reward process (`./envsmith reward`): completions
 * scored per second, in-process (`serveRewards`) and end to end through the
 * real subprocess's pipes (one batch of lines written, answers read back).
 *
 * ```sh
 * deno run -A bench/reward.ts [LINES]
 * ```
 *
 * The completions are a mix as a trainer sends them: solver plans (success),
 * plans with one agent standing still (timeouts), and text that is not a
 * plan (invalid_plan), a third each, on 3x3-5x5 maps with 1-3 agents.
 *
 * @module
 */
import { parse as parseYaml } from "yaml";
import { generate } from "../mapf/generator.ts";
import { compileInstance, instancesToJsonLines } from "../mapf/instance.ts";
import { pathsToPlan } from "../mapf/replay.ts";
import { solve } from "../mapf/solve.ts";
import { ACTION_LETTERS } from "../mapf/grid.ts";
import { scoringInstance } from "../policy/plan_reward.ts";
import { serveRewards } from "../cli/reward_command.ts";

const LINES = Number(Deno.args[0] ?? "30000");
const config = parseYaml(
  await Deno.readTextFile(new URL("../lm/configs/micro.yaml", import.meta.url)),
);
const instances = generate(config, { count: 500, seed: 11 }).instances;
const texts = instances.map((inst) => {
  const plan = pathsToPlan(solve(compileInstance(inst))!.paths, inst.width);
  return plan.map((acts, a) =>
    `Agent ${a}: ${acts.map((x) => ACTION_LETTERS[x]).join(" ")}`
  );
});
const lines: string[] = [];
for (let i = 0; i < LINES; i++) {
  const k = i % instances.length;
  const t = texts[k]!;
  const completion = i % 3 === 0
    ? t.join("\n")
    : i % 3 === 1
    ? [...t.slice(0, -1), `Agent ${t.length - 1}: S`].join("\n")
    : "The agents should move right and then down.";
  lines.push(JSON.stringify({ id: instances[k]!.id, completion }));
}
const input = new TextEncoder().encode(lines.join("\n") + "\n");

// in-process
const map = new Map(instances.map((i) => [i.id, scoringInstance(i)]));
const inProc: number[] = [];
for (let rep = 0; rep < 3; rep++) {
  const t0 = performance.now();
  let bytes = 0;
  await serveRewards(map, {
    input: async function* () {
      for (let i = 0; i < input.length; i += 65536) {
        yield input.subarray(i, i + 65536);
      }
    },
    write: (t) => Promise.resolve(void (bytes += t.length)),
  });
  inProc.push(LINES / ((performance.now() - t0) / 1000));
}

// through the subprocess
const file = await Deno.makeTempFile({ suffix: ".jsonl" });
await Deno.writeTextFile(file, instancesToJsonLines(instances));
const proc: number[] = [];
for (let rep = 0; rep < 3; rep++) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      new URL("../cli.ts", import.meta.url).pathname,
      "reward",
      "--instances",
      file,
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  // wait until the process answers one line (loaded), then time the batch
  const writer = child.stdin.getWriter();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let got = 0, buf = "";
  const readLines = async (n: number) => {
    while (got < n) {
      const { value, done } = await reader.read();
      if (done) throw new Error("reward process ended early");
      buf += value;
      const parts = buf.split("\n");
      buf = parts.pop()!;
      got += parts.length;
    }
  };
  await writer.write(new TextEncoder().encode(lines[0] + "\n"));
  await readLines(1);
  const t0 = performance.now();
  const w = writer.write(input);
  await readLines(1 + LINES);
  await w;
  proc.push(LINES / ((performance.now() - t0) / 1000));
  await writer.close();
  await child.status;
}
await Deno.remove(file);
const f = (xs: number[]) => xs.map((x) => Math.round(x)).join(", ");
const med = (xs: number[]) => [...xs].sort((a, b) => a - b)[1]!;
console.log(
  `reward: ${LINES} lines, ${instances.length} instances (3x3-5x5, 1-3 agents)`,
);
console.log(
  `  in-process serveRewards: median ${Math.round(med(inProc))} lines/s [${
    f(inProc)
  }]`,
);
console.log(
  `  subprocess through pipes: median ${Math.round(med(proc))} lines/s [${
    f(proc)
  }]`,
);
console.log(
  `  ratio subprocess/in-process: ${(med(proc) / med(inProc)).toFixed(2)}`,
);
