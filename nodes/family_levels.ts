/**
 * `plr-stage` and `accel-stage` on a family other than MAPF-FrozenLake:
 * levels are the family's instances, new levels come from the family's
 * domain-randomisation box (one uniform point of it per level), scores are
 * the positive value loss of the stage's checkpoint rolled out once on each
 * level with no learning, through the family's batched environment and
 * envsmith's trainer (the path `maze.train` trains through, so a level's
 * score means the same in training and in scoring), and ACCEL's edit is the
 * family's mutation, checked by the family.
 *
 * What a family needs: `env` (a batched environment for envsmith's trainer)
 * for both, and `mutate` for `accel-stage`; a family without them is
 * refused at `plan` (`familyLevelProblem`, `family_scores.ts`).
 *
 * @module
 */
import { canonicalJson } from "@envsmith/engine/hash";
import { checkedMutation, type EnvironmentFamily } from "../families/family.ts";
import type { LevelIo, TrainedLevel } from "../engineer/plr.ts";
import { defaultBox, sampleFamilyBox } from "../engineer/dr.ts";
import type { Instance } from "../mapf/instance.ts";
import { hashString, Rng } from "../mapf/rng.ts";
import type { Checkpoint } from "../policy/checkpoint.ts";
import { scoreFamilyLevels } from "./family_scores.ts";

export { familyLevelProblem, scoreFamilyLevels } from "./family_scores.ts";

/**
 * The {@linkcode LevelIo} of `plr-stage`/`accel-stage` on `family`: the
 * buffer, this stage's training instances with the trainer's scores, new
 * levels from the family's box (one point each), scored with `ck`. Family
 * instances pass through the MAPF-typed level code as opaque values.
 */
export function familyLevelIo(
  family: EnvironmentFamily,
  ck: Checkpoint,
  options: {
    readonly buffer: LevelIo["buffer"];
    readonly trained: readonly unknown[];
    readonly scores: {
      readonly episodes: readonly number[];
      readonly successes: readonly number[];
      readonly steps: readonly number[];
      readonly pvl: readonly number[];
    };
    readonly gamma: number;
    readonly stage: number;
    readonly seed: number;
  },
): LevelIo {
  const { scores, trained } = options;
  if (scores.pvl.length !== trained.length) {
    throw new TypeError(
      `policy.level_scores covers ${scores.pvl.length} instances but envs has ${trained.length}: give this stage's train node as policy and its generate node as envs`,
    );
  }
  const rows: TrainedLevel[] = trained.map((instance, i) => ({
    instance: instance as Instance,
    measured: {
      episodes: scores.episodes[i]!,
      successes: scores.successes[i]!,
      agentSteps: scores.steps[i]!,
      pvl: scores.pvl[i]!,
    },
  }));
  const box = defaultBox(family);
  const source = sampleFamilyBox(
    family,
    box,
    new Rng(options.seed, hashString("plr-source"), options.stage),
  );
  const score = (instances: readonly unknown[], seed: number) =>
    scoreFamilyLevels(family, ck, instances, { seed, gamma: options.gamma });
  return {
    buffer: options.buffer,
    trained: rows,
    source: source as LevelIo["source"],
    idOf: (i) => family.instanceId(i),
    fresh(count, seed) {
      const rng = new Rng(seed, hashString("plr-fresh"));
      const instances: unknown[] = [];
      for (let i = 0; i < count; i++) {
        const c = sampleFamilyBox(family, box, rng);
        const [one] = family.generate(c, rng.int(0x7fffffff), 1);
        if (one !== undefined) instances.push(one);
      }
      const m = score(instances, seed);
      return Promise.resolve(
        instances.map((instance, i) => ({
          instance: instance as Instance,
          measured: m[i]!,
        })),
      );
    },
    score(instances, seed) {
      return Promise.resolve(score(instances, seed));
    },
  };
}

/**
 * ACCEL's edit on `family`: `steps` checked mutations of `instance`, drawn
 * again (up to `tries` times) when a mutation does not apply or leaves the
 * level as it was; `null` when no draw gave a new valid level.
 *
 * @throws {MalformedMutationError} when a mutation returns an instance the
 * family's check refuses.
 */
export function familyEdit(
  family: EnvironmentFamily,
  instance: unknown,
  rng: Rng,
  options: { readonly steps: number; readonly tries: number },
): { instance: Instance; edits: string[] } | null {
  const before = canonicalJson(instance as never);
  for (let t = 0; t < options.tries; t++) {
    let x: unknown = instance;
    let ok = true;
    for (let k = 0; k < options.steps; k++) {
      const y = checkedMutation(family, x, rng, rng.int(0x7fffffff));
      if (y === null) {
        ok = false;
        break;
      }
      x = y;
    }
    if (ok && canonicalJson(x as never) !== before) {
      return {
        instance: x as Instance,
        edits: [`${options.steps} ${family.name} mutation(s)`],
      };
    }
  }
  return null;
}
