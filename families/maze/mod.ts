/**
 * The maze family: grid mazes with walls and a goal, navigated by one agent
 * with a partial egocentric view (the environment-design literature's maze).
 *
 * @module
 */
export * from "./maze.ts";
export * from "./config.ts";
export * from "./generate.ts";
export * from "./mutate.ts";
export * from "./render.ts";
export * from "./test_mazes.ts";
export * from "./batch_env.ts";
export * from "./diagnosis.ts";
export * from "./evaluate.ts";
export * from "./random.ts";
export * from "./family.ts";
export * from "./maze_json.ts";
