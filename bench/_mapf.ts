/**
 * What the MAPF-FrozenLake benchmarks share: the setting whose stepping
 * they time.
 *
 * @module
 */
import type { EnvConfigInput } from "../schemas/mod.ts";

/** 16x16 maps, 8 agents, 15% holes, interaction 0.5: the stepping setting. */
export const STEPPING_16X16: EnvConfigInput = {
  width: 16,
  height: 16,
  agents: 8,
  hole_density: 0.15,
  interaction: 0.5,
  distance: { min: 2, max: 24 },
};
