/**
 * An {@linkcode InstancePool}: many compiled instances concatenated into flat
 * typed arrays, so the batched dynamics and observation encoders index them
 * without touching JavaScript objects in their inner loops.
 *
 * For instance `i`:
 * - its cells are `grid[cellOffset[i] .. cellOffset[i] + width[i] * height[i])`;
 * - agent `a`'s start and goal cells are `starts[agentOffset[i] + a]`,
 *   `goals[agentOffset[i] + a]`;
 * - agent `a`'s distance map is
 *   `dist[distOffset[i] + a * cellCount[i] + cell]` (`0xffff` = unreachable).
 *
 * @module
 */
import type { CompiledInstance, Instance } from "./instance.ts";
import { compileInstance } from "./instance.ts";

/** Many compiled instances in flat typed arrays. */
export class InstancePool {
  /** Number of instances. */
  readonly count: number;
  /** Columns of each instance. */
  readonly width: Int32Array;
  /** Rows of each instance. */
  readonly height: Int32Array;
  /** `width * height` of each instance. */
  readonly cellCount: Int32Array;
  /** Agents of each instance. */
  readonly agents: Int32Array;
  /** Offset of each instance's cells in {@linkcode grid}. */
  readonly cellOffset: Int32Array;
  /** Offset of each instance's agents in {@linkcode starts} / {@linkcode goals}. */
  readonly agentOffset: Int32Array;
  /** Offset of each instance's distance maps in {@linkcode dist}. */
  readonly distOffset: Int32Array;
  /** Cell codes of all instances. */
  readonly grid: Uint8Array;
  /** Start cells of all agents. */
  readonly starts: Int32Array;
  /** Goal cells of all agents. */
  readonly goals: Int32Array;
  /** Distance maps of all agents. */
  readonly dist: Uint16Array;
  /** Slip probability of each instance. */
  readonly slip: Float64Array;
  /** Horizon of each instance. */
  readonly horizon: Int32Array;
  /** Collision mode code of each instance (0 fail, 1 block). */
  readonly collision: Uint8Array;
  /** Hole mode code of each instance (0 lethal, 1 blocked). */
  readonly holes: Uint8Array;
  /** Largest agent count. */
  readonly maxAgents: number;
  /** Largest cell count. */
  readonly maxCells: number;
  /** The compiled instances (views into the same data are not shared). */
  readonly compiled: readonly CompiledInstance[];

  /** Build from compiled instances (see also {@linkcode InstancePool.from}). */
  constructor(compiled: readonly CompiledInstance[]) {
    const n = compiled.length;
    this.count = n;
    this.compiled = compiled;
    this.width = new Int32Array(n);
    this.height = new Int32Array(n);
    this.cellCount = new Int32Array(n);
    this.agents = new Int32Array(n);
    this.cellOffset = new Int32Array(n);
    this.agentOffset = new Int32Array(n);
    this.distOffset = new Int32Array(n);
    this.slip = new Float64Array(n);
    this.horizon = new Int32Array(n);
    this.collision = new Uint8Array(n);
    this.holes = new Uint8Array(n);
    let cells = 0, agents = 0, dist = 0, maxAgents = 0, maxCells = 0;
    for (let i = 0; i < n; i++) {
      const c = compiled[i]!;
      this.width[i] = c.width;
      this.height[i] = c.height;
      this.cellCount[i] = c.cellCount;
      this.agents[i] = c.agents;
      this.cellOffset[i] = cells;
      this.agentOffset[i] = agents;
      this.distOffset[i] = dist;
      this.slip[i] = c.slip;
      this.horizon[i] = c.horizon;
      this.collision[i] = c.collision;
      this.holes[i] = c.holes;
      cells += c.cellCount;
      agents += c.agents;
      dist += c.agents * c.cellCount;
      if (c.agents > maxAgents) maxAgents = c.agents;
      if (c.cellCount > maxCells) maxCells = c.cellCount;
    }
    this.maxAgents = maxAgents;
    this.maxCells = maxCells;
    this.grid = new Uint8Array(cells);
    this.starts = new Int32Array(agents);
    this.goals = new Int32Array(agents);
    this.dist = new Uint16Array(dist);
    for (let i = 0; i < n; i++) {
      const c = compiled[i]!;
      this.grid.set(c.grid, this.cellOffset[i]!);
      this.starts.set(c.starts, this.agentOffset[i]!);
      this.goals.set(c.goals, this.agentOffset[i]!);
      this.dist.set(c.dist, this.distOffset[i]!);
    }
  }

  /** Compile JSON-form instances and pool them. */
  static from(instances: readonly Instance[]): InstancePool {
    return new InstancePool(instances.map(compileInstance));
  }
}
