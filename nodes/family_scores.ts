/**
 * Rolling a checkpoint out on a family's instances with no learning: the
 * scores `plr-stage`, `accel-stage` and the probe engineers read on a
 * family other than MAPF-FrozenLake, through the family's batched
 * environment and envsmith's trainer (the path the family's train kind
 * trains through, so a level's score means the same in training and in
 * scoring); and what a family must have for them.
 *
 * @module
 */
import type { EnvironmentFamily } from "../families/family.ts";
import type { MeasuredLevel } from "../engineer/levels.ts";
import type { Checkpoint } from "../policy/checkpoint.ts";
import { Trainer } from "../policy/trainer.ts";
import type { TrainingEnv } from "../policy/training_env.ts";

/**
 * Why `engineer` cannot run on `family`, in one line naming the family and
 * what is missing, or `null`.
 */
export function familyLevelProblem(
  engineer: string,
  family: EnvironmentFamily,
  needs: { readonly mutate: boolean },
): string | null {
  if (family.env === undefined) {
    return `family ${family.name} has no batched environment (env) for envsmith's trainer, which ${engineer} rolls the policy out through to score levels; give the family an env, or use dr-stage, band or random`;
  }
  if (needs.mutate && family.mutate === undefined) {
    return `family ${family.name} has no mutate, ACCEL's edit; give the family a mutate, or use plr-stage`;
  }
  return null;
}

/**
 * Scores of `instances` of `family` under `ck`: each played once to its end
 * (actions sampled, seeded) with no learning; PVL from GAE(`gamma`, 0.95)
 * as the trainer computes it.
 */
export function scoreFamilyLevels(
  family: EnvironmentFamily,
  ck: Checkpoint,
  instances: readonly unknown[],
  options: { readonly seed: number; readonly gamma: number },
): MeasuredLevel[] {
  if (instances.length === 0) return [];
  const env = family.env!;
  const tr = new Trainer(ck, {
    count: instances.length,
    create: (o) =>
      env.create(instances, { envs: o.envs, seed: o.seed }) as TrainingEnv,
  }, {
    episodes: "once",
    seed: options.seed >>> 0,
    gamma: options.gamma,
  });
  tr.update({ learn: false });
  const s = tr.levelScores();
  return instances.map((_, i) => ({
    episodes: s.episodes[i]!,
    successes: s.successes[i]!,
    agentSteps: s.steps[i]!,
    pvl: s.pvl[i]!,
  }));
}
