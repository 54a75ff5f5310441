/**
 * The `accel` engineer: ACCEL (Parker-Holder et al. 2022, "Evolving
 * Curricula with Regret-Based Environment Design"): robust PLR
 * ({@linkcode plrEngineer}) plus edits of high-regret levels.
 *
 * After the PLR step's training scores, the `edits` highest-scored levels
 * trained on in the stage (the high-regret replayed levels) are each edited
 * by `edit_steps` random small edits (`mapf/mutate.ts`): add or
 * remove a hole, move an agent's start or goal, add an agent (up to
 * `max_agents`) or remove one. Every edited level is checked solvable by the solvers
 * (prioritized planning, then CBS up to 4 agents) and gets its reference
 * cost and a horizon with the parent's slack (`ceil(horizon / makespan`
 * of the parent `× makespan` of the child)); an edit that leaves no valid,
 * solvable level, or none different from its parent, is redrawn, up to `tries` times, then the level is skipped
 * (counted in the events). Edited levels are scored with the current
 * checkpoint (no learning, engineer cost) and enter the buffer, where
 * replay decides whether they are trained on.
 *
 * Departures: ACCEL edits after every replay batch and mazes' edits are
 * wall flips; here edits happen once a stage, on this testbed's cells and
 * agents. Everything is seeded: the same level, seed and stage give the same
 * edits. `edit_steps = 1` was chosen on the validation split over 2
 * (docs/engineers.md); `edits` and `max_agents` were not tuned.
 *
 * @module
 */
import type { Instance } from "../mapf/instance.ts";
import { type EditKind, editLevel } from "../mapf/mutate.ts";
import { Rng } from "../mapf/rng.ts";
import type { Engineer, EngineerEvent } from "./engineer.ts";
import type { Level, MeasuredLevel } from "./levels.ts";
import {
  type LevelIo,
  levelScore,
  plrEngineer,
  type PlrOptions,
} from "./plr.ts";

export {
  applyEdit,
  EDIT_KINDS,
  type EditKind,
  editLevel,
} from "../mapf/mutate.ts";

/** ACCEL defaults. */
export const ACCEL_DEFAULTS = {
  /** Levels edited per stage. */
  edits: 64,
  /** Edits applied to each (chosen on the validation split; docs/engineers.md). */
  editSteps: 1,

  /** Most agents `add_agent` makes. */
  maxAgents: 8,
  /** Draws per edited level before it is skipped. */
  tries: 20,
} as const;

/** What is wrong with ACCEL parameters, in one line naming the parameter, or null. */
export function accelProblem(
  edits: number,
  editSteps: number,
  maxAgents: number,
  smallestCells: number,
): string | null {
  if (!Number.isInteger(edits) || edits < 0) {
    return `edits must be a non-negative integer (got ${edits})`;
  }
  if (!Number.isInteger(editSteps) || editSteps < 1) {
    return `edit_steps must be at least 1 (got ${editSteps})`;
  }
  if (!Number.isInteger(maxAgents) || maxAgents < 1) {
    return `max_agents must be at least 1 (got ${maxAgents})`;
  }
  if (2 * maxAgents > smallestCells) {
    return `max_agents ${maxAgents} can never keep a level solvable: ${maxAgents} agents need ${
      2 * maxAgents
    } distinct start and goal cells and the smallest source map has ${smallestCells}; use at most ${
      Math.floor(smallestCells / 2)
    }`;
  }
  return null;
}

/** Options of {@linkcode accelEngineer}. */
export interface AccelOptions extends Omit<PlrOptions, "evolve" | "name"> {
  /** Levels edited per stage. @default {64} */
  edits?: number;
  /** Edits per level. @default {1} */
  editSteps?: number;
  /** Most agents `add_agent` makes. @default {8} */
  maxAgents?: number;
  /** Draws per edited level. @default {20} */
  tries?: number;
  /**
   * Another family's edit (its checked mutation, `steps` times): a child of
   * `instance`, or `null` when no valid child was found in `tries` draws.
   * Absent: MAPF-FrozenLake's edits (`mapf/mutate.ts`).
   */
  edit?: (
    instance: Instance,
    id: string,
    rng: Rng,
    options: { readonly steps: number; readonly tries: number },
  ) => { instance: Instance; edits: readonly string[] } | null;
  /** A child as the events show it. Absent: its reference makespan and horizon. */
  describe?: (instance: Instance) => string;
}

/**
 * The `accel` engineer.
 *
 * @example
 * Not run: `io` rolls a policy out over levels (nodes/accel_engineer.ts builds it); accel_test.ts runs the engineer with a stand-in.
 * ```ts ignore
 * const e = accelEngineer({ io });
 * ```
 */
export function accelEngineer(options: AccelOptions): Engineer {
  const count = options.edits ?? ACCEL_DEFAULTS.edits;
  const steps = options.editSteps ?? ACCEL_DEFAULTS.editSteps;
  const maxAgents = options.maxAgents ?? ACCEL_DEFAULTS.maxAgents;
  const tries = options.tries ?? ACCEL_DEFAULTS.tries;
  const problem = accelProblem(count, steps, maxAgents, Infinity);
  if (problem !== null) throw new RangeError(problem);
  const io: LevelIo = options.io;
  const idOf = io.idOf ?? ((i: Instance) => i.id);
  const edit = options.edit ??
    ((instance, id, rng, o) =>
      editLevel(instance, id, rng, { ...o, maxAgents }));
  const describe = options.describe ??
    ((i: Instance) =>
      `reference makespan ${i.reference!.makespan}, horizon ${i.horizon}`);
  return plrEngineer({
    ...options,
    name: "accel-stage",
    async evolve(replayed, stage, seed) {
      const events: EngineerEvent[] = [];
      const parents = [...replayed].sort((a, b) =>
        b.score - a.score || a.id.localeCompare(b.id)
      ).slice(0, count);
      const children: {
        instance: Instance;
        parent: Level;
        edits: readonly (EditKind | string)[];
      }[] = [];
      let skipped = 0;
      parents.forEach((parent, j) => {
        const rng = new Rng(seed, stage, j);
        const id = `accel-s${stage}-${j}`;
        const r = edit(parent.instance, id, rng, { steps, tries });
        if (r === null) skipped++;
        else children.push({ ...r, parent });
      });
      let measured: MeasuredLevel[] = [];
      if (children.length > 0) {
        measured = await io.score(children.map((c) => c.instance), seed);
      }
      let episodes = 0, agentSteps = 0;
      const levels: Level[] = children.map((c, i) => {
        const m = measured[i]!;
        episodes += m.episodes;
        agentSteps += m.agentSteps;
        return {
          id: idOf(c.instance),
          instance: c.instance,
          score: levelScore(m),
          seen: stage,
          origin: "edit",
          success: m.episodes > 0 ? m.successes / m.episodes : null,
          parent: c.parent.id,
        };
      });
      events.push({
        type: "choice",
        detail:
          `edited the ${parents.length} highest-PVL replayed levels (scores ${
            parents.length > 0
              ? `${parents[parents.length - 1]!.score.toFixed(4)}..${
                parents[0]!.score.toFixed(4)
              }`
              : "none"
          }) by ${steps} edits each; ${children.length} solvable children scored (${agentSteps} agent-steps), ${skipped} skipped after ${tries} draws`,
      });
      for (const c of children.slice(0, 3)) {
        events.push({
          type: "choice",
          detail: `${idOf(c.instance)} = ${c.parent.id} + ${
            c.edits.join(", ")
          } (${describe(c.instance)})`,
        });
      }
      return { levels, events, episodes, agentSteps };
    },
  });
}
