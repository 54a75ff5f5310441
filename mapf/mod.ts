/**
 * MAPF-FrozenLake: multi-agent path finding on FrozenLake maps. A plain
 * library (it imports only `schemas/`): instances, the batched dynamics,
 * trajectories, the generator, solvers, rendering and benchmark suites.
 *
 * ## Instances
 * {@linkcode Instance} is the JSON form (one per line on the CLI and in the
 * `generate` node's output): grid rows of `.` / `H` / `#`, starts and goals
 * as `[row, col]`, slip, horizon, collision and hole modes, and the reference
 * sum-of-costs and makespan. {@linkcode compileInstance} gives the typed
 * form ({@linkcode CompiledInstance}) with each agent's BFS distance map;
 * {@linkcode InstancePool} concatenates many into flat typed arrays.
 *
 * ## Stepping (for rollouts, training, evaluation)
 * Not run: a sketch of a loop (`instances`, `nextInstance` are the caller's);
 * batch_env.ts's example steps a real environment.
 * ```ts ignore
 * const pool = InstancePool.from(instances);
 * const env = new BatchEnv(pool, { envs: 1024, seed: 1 });
 * env.resetAll((e) => e % pool.count);          // env e plays instance e % count
 * const actions = new Uint8Array(env.envs * env.maxAgents); // slot e * maxAgents + a
 * for (;;) {
 *   // observations from env.pos, env.arrived, pool.grid / pool.dist (see pool.ts)
 *   env.step(actions);                          // 0 stay, 1 up, 2 down, 3 left, 4 right
 *   // rewards from env.events (EV_* bits per agent), env.ended / env.outcome per env
 *   env.resetDone((e) => nextInstance(e));      // no auto-reset: you choose
 * }
 * ```
 * Rules, event bits and outcomes are documented in batch_env.ts and
 * outcome.ts. Slip uses a per-environment RNG seeded per episode.
 *
 * ## Trajectories
 * {@linkcode TrajectoryRecorder} records episodes from a stepping
 * {@linkcode BatchEnv}; {@linkcode encodeTrajectories} /
 * {@linkcode decodeTrajectories} store many {@linkcode Episode}s in one
 * versioned `Uint8Array` (one byte per agent-step). {@linkcode replayPlan}
 * executes a joint plan.
 *
 * ## Generator, solvers, suites
 * {@linkcode generate} draws instances of a configuration (seeded,
 * byte-identical, each checked solvable, rejections counted, impossible
 * configurations fail fast with a {@linkcode GenerationError}).
 * {@linkcode solve} runs prioritized planning ({@linkcode solvePP}) and CBS
 * ({@linkcode solveCBS}); {@linkcode exactOptimum} certifies the least sum
 * of costs (CBS) and the least makespan ({@linkcode solveMakespan}).
 * {@linkcode SUITES} are the fixed evaluation suites ({@linkcode generateSuite}),
 * drawn from a seed space disjoint from training; {@linkcode generatePaperGrid}
 * is the paper's 21-cell grid with exact optima, and
 * {@linkcode importGridRecords} reads the benchmark's own file as that suite.
 * {@linkcode readPlan} judges an episode as a joint plan: valid, optimal.
 *
 * ## Rendering and interchange
 * {@linkcode renderPrompt} / {@linkcode parsePrompt}: the paper's benchmark
 * text format (and {@linkcode parsePlanText} for answers);
 * {@linkcode renderState} / {@linkcode renderEpisode}: compact text for
 * diagnoses; {@linkcode renderSvg}: pictures for reports;
 * {@linkcode exportMap} / {@linkcode exportScen} / {@linkcode importMovingAI}:
 * MovingAI benchmark files.
 *
 * @module
 */
export * from "./grid.ts";
export * from "./rng.ts";
export * from "./outcome.ts";
export * from "./instance.ts";
export * from "./pool.ts";
export * from "./batch_env.ts";
export * from "./trajectory.ts";
export * from "./replay.ts";
export * from "./solution.ts";
export * from "./space_time_astar.ts";
export * from "./solve_pp.ts";
export * from "./solve_cbs.ts";
export * from "./solve.ts";
export * from "./map_gen.ts";
export * from "./generator.ts";
export * from "./box.ts";
export * from "./mutate.ts";
export * from "./suites.ts";
export * from "./solve_makespan.ts";
export * from "./exact_optimum.ts";
export * from "./grid_cell.ts";
export * from "./paper_grid.ts";
export * from "./paper_grid_import.ts";
export * from "./plan_reading.ts";
export * from "./render_text.ts";
export * from "./render_state.ts";
export * from "./render_svg.ts";
export * from "./movingai.ts";
