/**
 * The paper's protocol (`paper-lm.yaml`), without training anything: the
 * file compiles with the registered kinds, plans (a stand-in LM environment
 * passes the readiness check; the solver row is skipped in one line when no
 * endpoint is set), its GPU line plans up to the missing model, and its
 * table has the paper's layout (rows the models, columns the 21 cells of
 * agents x map size with valid and optimal rate, a mean per agent count)
 * over real `evaluate` values.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import * as v from "valibot";
import type { Json } from "@envsmith/engine/kind";
import { compileExperiment } from "@envsmith/engine/compile";
import { buildTable, type Lookup } from "@envsmith/engine/tables";
import { allKinds } from "../mod.ts";
import { generatePaperGrid } from "../mapf/paper_grid.ts";
import { requirementsDigest } from "../nodes/lm_env.ts";
import { kind as evaluate } from "../nodes/evaluate.ts";
import { kind as policyInit } from "../nodes/policy_init.ts";
import { memoryContext } from "../nodes/_memory_context.ts";

const CLI = new URL("../cli.ts", import.meta.url).pathname;
const FILE = new URL("./paper-lm.yaml", import.meta.url).pathname;
const ROWS = ["base", "grpo-random", "grpo-rules", "grpo-checkpoint", "solver"];
const GPU_SET = [
  "--set",
  "matrix.exclude=[{scale: micro}]",
  "--set",
  "tables.0.where.scale=qwen3-4b",
];

async function cli(args: string[], env: Record<string, string>) {
  const o = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", CLI, ...args],
    env: { PATH: Deno.env.get("PATH") ?? "", ...env },
    clearEnv: true,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const d = new TextDecoder();
  return { code: o.code, out: d.decode(o.stdout), err: d.decode(o.stderr) };
}

Deno.test("paper-lm.yaml compiles with the registered kinds: the rows, 2-agent training forms, the grid, the engineers", () => {
  const exp = compileExperiment(
    "experiments/paper-lm.yaml",
    Deno.readTextFileSync(FILE),
    { kinds: allKinds },
  );
  const kindOf = (id: string) => {
    const i = exp.byId.get(id);
    return i === undefined ? undefined : exp.nodes[i]!.kind.name;
  };
  for (const row of ROWS) {
    assert.ok(exp.byId.has(`score[scale=micro,model=${row},seed=1]`), row);
  }
  assert.ok(!exp.byId.has("score[scale=qwen3-4b,model=base,seed=1]"));
  for (const e of ["random", "rules", "checkpoint"]) {
    const id = `curriculum.1.config[scale=micro,engineer=${e},seed=2]`;
    assert.equal(kindOf(id), "redesign.sizes", id);
    assert.equal(
      kindOf(`last[scale=micro,engineer=${e},seed=2]`),
      "train.lm",
    );
  }
  // stage 0 is shared by the engineers; the base row is one export per seed
  assert.ok(exp.byId.has("curriculum.0.policy[scale=micro,seed=1]"));
  assert.equal(kindOf("start[seed=1]"), "lm.init");
  assert.equal(kindOf("base[scale=micro,seed=1]"), "train.lm");
  // trained on 2-agent boards only; evaluated on the grid (3 to 5 agents)
  const text = Deno.readTextFileSync(FILE);
  assert.deepEqual(
    [...text.matchAll(/agents: (\d+)/g)].map((m) => m[1]),
    ["2", "2", "2"],
  );
  assert.equal(kindOf("bench[scale=micro]"), "generate");
  const table = exp.tables[0]!;
  assert.equal(table.rows, "model");
  assert.equal(table.compare?.against, "grpo-random");
});

Deno.test("paper-lm.yaml plans: 8 scores to run, the solver row skipped in one line; the GPU --set line plans up to the missing model", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-paper-lm-" });
  try {
    // a stand-in LM environment: the interpreter's place and the stamp
    const venv = join(dir, "venv");
    Deno.mkdirSync(join(venv, "bin"), { recursive: true });
    Deno.writeTextFileSync(join(venv, "bin", "python"), "");
    Deno.writeTextFileSync(
      join(venv, "envsmith-requirements.sha256"),
      requirementsDigest() + "\n",
    );
    const cache = join(dir, "cache");
    const planned = await cli(["--cache", cache, "plan", FILE], {
      ENVSMITH_LM_VENV: venv,
    });
    assert.equal(planned.code, 0, planned.err);
    const lines = planned.out.split("\n");
    const scores = lines.filter((l) => /^\s+\S+\s+score\[/.test(l));
    assert.equal(scores.length, 10, planned.out);
    const skipped = scores.filter((l) => /^\s+skipped\s/.test(l));
    assert.deepEqual(
      skipped.map((l) => l.trim().replace(/\s+/g, " ")),
      [1, 2].map((s) =>
        `skipped score[scale=micro,model=solver,seed=${s}] ENVSMITH_LLM_BASE_URL not set`
      ),
    );
    // 2 seeds x (base export + stage 0 + 3 engineers x (stage 1 + last))
    assert.equal(
      lines.filter((l) =>
        /^\s+\S+\s+(?:base|curriculum\.\d\.policy|last)\[/.test(l)
      )
        .length,
      16,
    );
    // the GPU line: the whole qwen3-4b scale, refused at the model it lacks
    const gpu = await cli(["--cache", cache, "plan", FILE, ...GPU_SET], {
      ENVSMITH_LM_VENV: venv,
    });
    assert.equal(gpu.code, 2, gpu.err);
    assert.equal(gpu.err.trim().split("\n").length, 1, gpu.err);
    assert.match(
      gpu.err,
      /\[scale=qwen3-4b,seed=1\].*base: .*models\/Qwen3-4B does not exist; give a Hugging Face checkpoint directory/,
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("paper-lm.yaml's table reads like the paper's: rows the models, the 21 cells with valid and optimal, a mean per agent count", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const c = memoryContext(dir);
    const grid = generatePaperGrid({ perCell: 1, split: "test" }).instances;
    // real evaluate values (of a small MLP: an LM's value has the same shape)
    const values = new Map<number, Json>();
    for (const seed of [1, 2]) {
      const policy = (await policyInit.run(
        v.parse(policyInit.params, { hidden: [8], seed }),
        c,
      )).value;
      values.set(
        seed,
        (await evaluate.run(
          v.parse(evaluate.params, {
            policy,
            envs: { instances: grid as unknown as Json },
            trajectories: false,
          }),
          c,
        )).value,
      );
    }
    const exp = compileExperiment(
      "experiments/paper-lm.yaml",
      Deno.readTextFileSync(FILE),
      { kinds: allKinds },
    );
    const lookup: Lookup = (n) =>
      n.plain === "score" && n.variant.model !== "solver"
        ? { status: "ok", value: values.get(Number(n.variant.seed))! }
        : { status: "missing" };
    const t = buildTable(exp, exp.tables[0]!, lookup, (ids) => ids.join(" "));
    assert.deepEqual(t.rows, ROWS);
    const cells = grid.map((i) =>
      `${i.id.split("_")[0]}_${i.id.split("_")[1]}`
    );
    const unique = [...new Set(cells)];
    assert.equal(unique.length, 21);
    assert.deepEqual(
      t.columns.filter((l) => !l.includes("mean")),
      unique.flatMap((c) => [`${c} valid`, `${c} optimal`]),
    );
    assert.deepEqual(t.columns.slice(16, 18), [
      "3ag mean valid",
      "3ag mean optimal",
    ]);
    assert.equal(t.columns.length, 21 * 2 + 3 * 2);
    // the model rows are filled; the solver row is not run here
    const filled = t.cells.filter((x) => x.mean !== null);
    assert.equal(filled.length, 4 * t.columns.length);
    assert.ok(filled.every((x) => x.n === 2));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
