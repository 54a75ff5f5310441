/**
 * The reward of a language-model completion on an instance: the completion
 * is parsed exactly as the LLM policy parses a reply
 * ({@linkcode parseLlmPlan}), the plan is executed by the dynamics
 * ({@linkcode replayPlan}), and the episode is scored. This is the only
 * place the reward of an LM trainer is computed: `deno task cli reward`
 * serves it to trainers in any language, so no trainer re-implements the
 * dynamics.
 *
 * Reward (the same for every trainer, stated in `docs/training.md`):
 *
 * | outcome                    | reward                                          |
 * | -------------------------- | ----------------------------------------------- |
 * | `success`                  | 1                                               |
 * | a valid plan that fails    | 0.1 + 0.4 x (share of agents on their goal at the end) |
 * | `invalid_plan`             | 0                                               |
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { scoreCompletion } from "./plan_reward.ts";
 * import { generate } from "../mapf/generator.ts";
 * const [inst] = generate({ preset: "easy" }, { count: 1, seed: 1 }).instances;
 * const bad = scoreCompletion(inst!, "no plan here");
 * assert.equal(bad.outcome, "invalid_plan");
 * assert.equal(bad.reward, 0);
 * ```
 *
 * @module
 */
import type { CompiledInstance, Instance } from "../mapf/instance.ts";
import { compileInstance } from "../mapf/instance.ts";
import { PlanParseError } from "../mapf/render_text.ts";
import { replayPlan } from "../mapf/replay.ts";
import type { OutcomeName } from "../mapf/outcome.ts";
import { parseLlmPlan } from "./llm_policy.ts";

/** Reward of a valid plan that fails, before the share of agents on goal. */
export const REWARD_VALID_PLAN = 0.1;
/** Weight of the share of agents on their goal when a valid plan fails. */
export const REWARD_ON_GOAL = 0.4;

/** The score of one completion. */
export interface CompletionScore {
  /** The reward (see the module's table). */
  reward: number;
  /** The episode's outcome (`invalid_plan` when the completion did not parse). */
  outcome: OutcomeName;
  /** Agents on their goals when the episode ended. */
  on_goal: number;
  /** Steps the episode took (0 for an invalid plan). */
  steps: number;
  /** Why the completion is not a plan (only for `invalid_plan`). */
  parse_error?: string;
}

/** An instance with its compiled form and goal cells, ready to score many completions. */
export interface ScoringInstance {
  /** The instance. */
  readonly instance: Instance;
  /** Its compiled form. */
  readonly compiled: CompiledInstance;
  /** Goal cell of each agent. */
  readonly goalCells: Int32Array;
}

/** Compile an instance once for {@linkcode scoreCompletion}. */
export function scoringInstance(inst: Instance): ScoringInstance {
  return {
    instance: inst,
    compiled: compileInstance(inst),
    goalCells: Int32Array.from(inst.goals.map(([r, c]) => r * inst.width + c)),
  };
}

/**
 * Score a completion on an instance: parse as the LLM policy does, execute
 * with the dynamics (slip drawn from `seed`), reward by the outcome.
 */
export function scoreCompletion(
  inst: Instance | ScoringInstance,
  completion: string,
  seed = 0,
): CompletionScore {
  const s = "compiled" in inst ? inst : scoringInstance(inst);
  const n = s.goalCells.length;
  let plan: number[][];
  try {
    plan = parseLlmPlan(completion, n);
  } catch (e) {
    if (!(e instanceof PlanParseError)) throw e;
    return {
      reward: 0,
      outcome: "invalid_plan",
      on_goal: 0,
      steps: 0,
      parse_error: e.message,
    };
  }
  const ep = replayPlan(s.compiled, plan, { seed, id: s.instance.id });
  if (ep.outcome === "success") {
    return { reward: 1, outcome: "success", on_goal: n, steps: ep.steps };
  }
  let onGoal = 0;
  const last = ep.steps * n;
  for (let a = 0; a < n; a++) {
    if (ep.positions[last + a] === s.goalCells[a]) onGoal++;
  }
  return {
    reward:
      Math.round((REWARD_VALID_PLAN + REWARD_ON_GOAL * onGoal / n) * 1e9) / 1e9,
    outcome: ep.outcome,
    on_goal: onGoal,
    steps: ep.steps,
  };
}
