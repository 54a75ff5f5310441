/**
 * Reward shaping for MAPF-FrozenLake training: per agent, per step.
 *
 * After each step, an agent that acted in it receives
 *
 * | term | when | default |
 * | ---- | ---- | ------- |
 * | `goal` | it arrived on its goal this step | `+1` |
 * | `progress` | times `d(before) - d(after)`, its change of shortest-path distance to the goal (skipped when it fell) | `+0.1` |
 * | `hole` | it fell into a hole (hole mode `lethal`) | `-1` |
 * | `collision` | it took part in a vertex or edge collision (collision mode `fail`) | `-1` |
 * | `blocked` | its move was cancelled by another agent (collision mode `block`) | `-0.05` |
 * | `step` | every step it has not yet arrived | `-0.01` |
 * | `success` | the episode succeeded this step (all agents on their goals) | `0` |
 * | `failure` | the episode ended in failure this step (hole, collision, timeout) | `0` |
 *
 * An agent's episode ends (no bootstrapping past it) when it arrives or when
 * its environment's episode ends, whatever the reason (timeout included: the
 * observation carries the time left, so the horizon is part of the state).
 * `success` and `failure` are team terms: every agent that acted in the last
 * step receives them. The progress term is the potential-based form with
 * potential `-distance`, so it does not change which policies are optimal
 * when `gamma` is 1.
 *
 * @module
 */
import type { BatchEnv } from "../mapf/batch_env.ts";
import { UNREACHABLE } from "../mapf/grid.ts";
import {
  EV_BLOCKED,
  EV_EDGE,
  EV_FELL,
  EV_MOVED,
  EV_REACHED,
  EV_VERTEX,
  SUCCESS,
} from "../mapf/outcome.ts";
import type { RewardSpec } from "./reward_spec.ts";

export { DEFAULT_REWARD, type RewardSpec, rewardSpec } from "./reward_spec.ts";

/**
 * Rewards and episode-end flags of the agents `slots[0..n)` that acted in
 * the step `env` just took (call right after `env.step`, before any reset).
 * Writes `reward[off + i]` and `done[off + i]`.
 */
export function agentRewards(
  env: BatchEnv,
  slots: Int32Array,
  n: number,
  spec: RewardSpec,
  reward: Float32Array,
  done: Uint8Array,
  off = 0,
): void {
  const pool = env.pool, m = env.maxAgents;
  for (let i = 0; i < n; i++) {
    const slot = slots[i]!;
    const e = (slot / m) | 0, a = slot - e * m;
    const inst = env.instance[e]!;
    const ev = env.events[slot]!;
    let r = spec.step;
    if (ev & EV_REACHED) r += spec.goal;
    if (ev & EV_FELL) r += spec.hole;
    else if (ev & EV_MOVED) {
      const dm = pool.distOffset[inst]! + a * pool.cellCount[inst]!;
      const d0 = pool.dist[dm + env.prevPos[slot]!]!,
        d1 = pool.dist[dm + env.pos[slot]!]!;
      if (d0 !== UNREACHABLE && d1 !== UNREACHABLE) {
        r += spec.progress * (d0 - d1);
      }
    }
    if (ev & EV_BLOCKED) r += spec.blocked;
    else if (ev & (EV_VERTEX | EV_EDGE)) r += spec.collision;
    const ended = env.ended[e] === 1;
    if (ended) r += env.outcome[e] === SUCCESS ? spec.success : spec.failure;
    reward[off + i] = r;
    done[off + i] = ended || (ev & EV_REACHED) !== 0 ? 1 : 0;
  }
}
