/**
 * Instances as LM training rows, in the exact messages the LLM policy
 * sends (`lm-data`, `lm.init`, `train.lm`): `{id, agents, system, prompt}`
 * and, when asked, a solver's reference plan (`Agent 0: R R D` lines, from
 * CBS/PP, replayed through the dynamics before it is kept), or `null` when
 * no solver solves the instance within its horizon.
 *
 * @module
 */
import { ACTION_LETTERS } from "../mapf/grid.ts";
import {
  compileInstance,
  type Instance,
  parseInstanceLines,
} from "../mapf/instance.ts";
import { pathsToPlan, replayPlan } from "../mapf/replay.ts";
import { solve, type SolverName } from "../mapf/solve.ts";
import { llmPolicyMessages, type PromptStyle } from "../policy/llm_policy.ts";
import type { NodeContext } from "@envsmith/engine/kind";
import { field, isBlobRef } from "./_values.ts";

/** One training row. */
export interface LmRow {
  /** Instance id (what the reward process answers to). */
  id: string;
  /** Number of agents. */
  agents: number;
  /** The LLM policy's system message. */
  system: string;
  /** The LLM policy's user message. */
  prompt: string;
  /** The reference plan (with `solver`), or null when unsolved. */
  plan?: string | null;
  /** The solver that found it. */
  solver?: string | null;
  /** Its sum of costs. */
  soc?: number | null;
  /** Its makespan. */
  makespan?: number | null;
}

/** The row of one instance; `solver` adds a reference plan. */
export function lmRow(
  inst: Instance,
  prompt: PromptStyle,
  solver?: SolverName,
): LmRow {
  const [system, user] = llmPolicyMessages(inst, prompt);
  const row: LmRow = {
    id: inst.id,
    agents: inst.starts.length,
    system: system.content,
    prompt: user.content,
  };
  if (solver === undefined) return row;
  const compiled = compileInstance(inst);
  const sol = solve(compiled, { solver });
  let plan: string | null = null;
  if (sol && sol.makespan <= inst.horizon) {
    const acts = pathsToPlan(sol.paths, inst.width);
    const ep = replayPlan(compiled, acts, { noSlip: true });
    if (ep.outcome === "success") {
      plan = acts.map((a, k) =>
        `Agent ${k}: ${a.map((x) => ACTION_LETTERS[x]).join(" ")}`
      ).join("\n");
    }
  }
  return {
    ...row,
    plan,
    solver: plan === null ? null : sol!.solver,
    soc: plan === null ? null : sol!.soc,
    makespan: plan === null ? null : sol!.makespan,
  };
}

/**
 * The instances of a `generate` node's value (a list, or a blob of JSON
 * lines), for the LM kinds (which need no policy machinery to read them).
 */
export async function readLmInstances(
  x: unknown,
  ctx: Pick<NodeContext, "readBlob">,
  what: string,
): Promise<Instance[]> {
  if (Array.isArray(x)) {
    return parseInstanceLines(x.map((i) => JSON.stringify(i)).join("\n"));
  }
  if (isBlobRef(x)) {
    return parseInstanceLines(new TextDecoder().decode(await ctx.readBlob(x)));
  }
  const inner = field(x, "instances");
  if (inner !== undefined) return await readLmInstances(inner, ctx, what);
  throw new TypeError(
    `${what}: expected the value of a generate node ({ instances: ... })`,
  );
}
