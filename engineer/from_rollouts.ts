/**
 * Build {@linkcode EpisodeView}s from the MAPF trajectory format: decoded
 * {@linkcode Episode}s plus the {@linkcode Instance}s they played.
 *
 * @module
 */
import { cellCode, type Instance } from "../mapf/instance.ts";
import type { Episode } from "../mapf/trajectory.ts";
import {
  type AnyEnvConfig,
  components,
  type EnvConfig,
} from "../schemas/env_config.ts";
import type { Outcome } from "../schemas/findings.ts";
import type { EpisodeView } from "./episode.ts";

/** An episode whose instance is missing from the instances given. */
export class MissingInstanceError extends TypeError {
  /** The instance id looked up. */
  readonly instance: string;
  /** Build the error. */
  constructor(instance: string, known: number) {
    super(
      `Episode of instance "${instance}" has no matching instance among the ${known} given; ` +
        `pass the instances (envs) the rollouts were run on.`,
    );
    this.name = "MissingInstanceError";
    this.instance = instance;
  }
}

/**
 * Join episodes with their instances. Episodes cut off while running count
 * as timeouts. The component config (for per-dimension breakdowns) is taken
 * from `config` by the instance's `stats.component`; slip comes from the
 * instance itself.
 *
 * @throws {MissingInstanceError} when an episode's instance is not given.
 */
export function episodesFromRollouts(
  episodes: readonly Episode[],
  instances: readonly Instance[],
  config?: AnyEnvConfig,
): EpisodeView[] {
  const byId = new Map<
    string,
    { inst: Instance; cells: Uint8Array; starts: Int32Array; goals: Int32Array }
  >();
  for (const inst of instances) {
    if (byId.has(inst.id)) continue;
    const cells = new Uint8Array(inst.width * inst.height);
    inst.cells.forEach((row, r) => {
      for (let c = 0; c < inst.width; c++) {
        cells[r * inst.width + c] = cellCode(row[c]!);
      }
    });
    const idx = ([r, c]: readonly [number, number]) => r * inst.width + c;
    byId.set(inst.id, {
      inst,
      cells,
      starts: Int32Array.from(inst.starts.map(idx)),
      goals: Int32Array.from(inst.goals.map(idx)),
    });
  }
  const comps = config === undefined ? [] : components(config);
  return episodes.map((ep) => {
    const hit = byId.get(ep.instance);
    if (hit === undefined) {
      throw new MissingInstanceError(ep.instance, byId.size);
    }
    const { inst } = hit;
    const component = inst.stats?.component ?? 0;
    const base: EnvConfig | undefined = comps[component]?.config;
    const outcome: Outcome = ep.outcome === "running" ? "timeout" : ep.outcome;
    const view: EpisodeView = {
      width: inst.width,
      height: inst.height,
      cells: hit.cells,
      agents: ep.agents,
      starts: hit.starts,
      goals: hit.goals,
      steps: ep.steps,
      positions: ep.positions,
      actions: ep.actions,
      outcome,
      failAgents: ep.failAgents,
      horizon: inst.horizon,
      referenceSoc: inst.reference?.soc ?? 0,
      referenceMakespan: inst.reference?.makespan ?? 0,
      component,
      ...(inst.stats === undefined
        ? {}
        : { measuredInteraction: inst.stats.interaction }),
      ...(base === undefined ? {} : { config: { ...base, slip: inst.slip } }),
    };
    return view;
  });
}
