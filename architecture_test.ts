/**
 * The architecture the code keeps, checked: the engine is a package reached
 * only through its doors (the subpath exports of engine/deno.json), that
 * imports nothing outside engine/, and whose folders form layers without an
 * import cycle; no import cycle among any of the repository's .ts files;
 * the report (report/) and the command line (cli/) sit on top, imported by
 * no node kind, engine file or library; each kind's code digest covers
 * exactly the files the kind runs (leaf imports, no barrels, no renderers in training kinds);
 * and editing a file no kind runs leaves every cached entry valid.
 *
 * @module
 */
import assert from "node:assert/strict";
import { cpSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import {
  codeDigest,
  importSpecifiers,
  nodeCodeDigest,
} from "@envsmith/engine/cache";
import { allKinds } from "./mod.ts";
import { builtinEngineers } from "./engineer/builtins.ts";
import { policyEngineers } from "./nodes/engineers.ts";
import { builtinFamilies } from "./families/builtins.ts";
import { mapfFrozenLake } from "./families/mapf_frozenlake/family.ts";
import { projectFiles } from "./_test_util.ts";

const ROOT = dirname(fileURLToPath(import.meta.url));

/** Every .ts file of the project (relative paths), without node_modules and caches. */
function sourceFiles(): string[] {
  return projectFiles((name) => name.endsWith(".ts"));
}

/** Module specifiers of a file: the code digest's view of imports, type-only ones included. */
function specifiers(text: string): string[] {
  return importSpecifiers(text, { types: true });
}

let _scan: ReadonlyMap<string, readonly string[]> | undefined;

/**
 * Every .ts file of the project (relative path) -> its module specifiers:
 * the tree is walked and each file read once, then shared by every check.
 */
function projectImports(): ReadonlyMap<string, readonly string[]> {
  _scan ??= new Map(
    sourceFiles().map((
      f,
    ) => [f, specifiers(Deno.readTextFileSync(join(ROOT, f)))]),
  );
  return _scan;
}

/** The engine's doors: `@envsmith/engine` and its subpath exports. */
const ENGINE_DOORS: readonly string[] = Object.keys(
  (JSON.parse(Deno.readTextFileSync(join(ROOT, "engine/deno.json"))) as {
    exports: Record<string, string>;
  }).exports,
).map((k) => k === "." ? "@envsmith/engine" : `@envsmith/engine${k.slice(1)}`);

Deno.test("architecture: nothing outside engine/ imports an engine file but through its doors", () => {
  const bad: string[] = [];
  for (const [file, specs] of projectImports()) {
    if (file.startsWith("engine/")) continue;
    const fixturesOk = file.endsWith("_test.ts") || file.startsWith("bench/");
    for (const spec of specs) {
      if (spec.startsWith("@envsmith/engine") && !ENGINE_DOORS.includes(spec)) {
        bad.push(`${file}: ${spec} (not a door: ${ENGINE_DOORS.join(", ")})`);
      }
      if (!spec.startsWith(".")) continue;
      const target = relative(ROOT, resolve(ROOT, dirname(file), spec));
      if (!target.startsWith("engine/")) continue;
      // Tests and benchmarks may load the engine's fixture kinds.
      if (fixturesOk && target.startsWith("engine/testdata/")) continue;
      bad.push(`${file}: ${spec}`);
    }
  }
  assert.deepEqual(
    bad,
    [],
    "import the engine through its doors (engine/deno.json exports), never a file of it",
  );
});

Deno.test("architecture: the engine imports nothing outside engine/ and only the packages its deno.json maps", () => {
  const config = JSON.parse(
    Deno.readTextFileSync(join(ROOT, "engine/deno.json")),
  ) as {
    name: string;
    exports: Record<string, string>;
    imports: Record<string, string>;
  };
  assert.equal(config.name, "@envsmith/engine");
  assert.equal(config.exports["."], "./mod.ts");
  const bad: string[] = [];
  for (const [file, specs] of projectImports()) {
    if (!file.startsWith("engine/")) continue;
    const path = join(ROOT, file);
    for (const spec of specs) {
      if (spec.startsWith(".")) {
        const target = relative(
          join(ROOT, "engine"),
          resolve(dirname(path), spec),
        );
        if (target.startsWith("..")) bad.push(`${file}: ${spec}`);
      } else if (!spec.startsWith("node:") && !(spec in config.imports)) {
        bad.push(`${file}: ${spec} (not in engine/deno.json imports)`);
      }
    }
  }
  assert.deepEqual(bad, []);
  const root = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json"))) as {
    workspace?: string[];
  };
  assert.deepEqual(root.workspace, ["./engine"]);
});

/**
 * The engine's layers, bottom first: a file may import files of its own
 * folder and of the folders before it, never of one after it. The root
 * files are the bottom (types, errors, hashing, limits).
 */
const ENGINE_LAYERS: readonly string[] = [
  ".",
  "compile",
  "cache",
  "run",
  "tables",
  "cli",
];

/** The engine folder (layer) of an engine-relative path. */
function _layerOf(path: string): string {
  const i = path.indexOf("/");
  return i < 0 ? "." : path.slice(0, i);
}

Deno.test("architecture: engine folders form layers with no import cycle between them", () => {
  const up: string[] = [];
  const edges = new Map<string, Set<string>>();
  for (const [path, specs] of projectImports()) {
    if (!path.startsWith("engine/")) continue;
    const file = path.slice("engine/".length);
    // Doors re-export every layer; tests and fixtures may reach anywhere.
    if (/(^|\/)mod\.ts$|_test\.ts$|(^|\/)_test_util\.ts$/.test(file)) continue;
    if (file.startsWith("testdata/")) continue;
    const from = _layerOf(file);
    assert.ok(ENGINE_LAYERS.includes(from), `engine/${file}: unknown folder`);
    for (const spec of specs) {
      if (!spec.startsWith(".")) continue;
      const target = relative(
        join(ROOT, "engine"),
        resolve(ROOT, "engine", dirname(file), spec),
      );
      const to = _layerOf(target);
      if (to === from) continue;
      if (!edges.has(from)) edges.set(from, new Set());
      edges.get(from)!.add(to);
      if (ENGINE_LAYERS.indexOf(to) > ENGINE_LAYERS.indexOf(from)) {
        up.push(`engine/${file} (${from}) imports engine/${target} (${to})`);
      }
    }
  }
  assert.deepEqual(up, [], "a lower layer imports a higher one");
  // No cycle (implied by the layering; checked directly all the same).
  const state = new Map<string, "open" | "done">();
  const visit = (n: string, path: string[]): void => {
    if (state.get(n) === "done") return;
    assert.notEqual(
      state.get(n),
      "open",
      `cycle: ${[...path, n].join(" -> ")}`,
    );
    state.set(n, "open");
    for (const m of edges.get(n) ?? []) visit(m, [...path, n]);
    state.set(n, "done");
  };
  for (const n of edges.keys()) visit(n, []);
  // The layers are real: the top reaches the bottom.
  assert.ok(edges.get("cli")?.has("compile"));
});

/** The engine's doors as project-relative files (`@envsmith/engine/compile` -> `engine/compile/mod.ts`). */
const DOOR_FILES: ReadonlyMap<string, string> = new Map(
  Object.entries(
    (JSON.parse(Deno.readTextFileSync(join(ROOT, "engine/deno.json"))) as {
      exports: Record<string, string>;
    }).exports,
  ).map(([k, file]) => [
    k === "." ? "@envsmith/engine" : `@envsmith/engine${k.slice(1)}`,
    join("engine", file),
  ]),
);

let _graph: ReadonlyMap<string, readonly string[]> | undefined;

/**
 * The import graph of the project's .ts files: file -> the project files
 * it imports (relative imports, type-only ones included, and the engine's
 * doors). Built once from {@linkcode projectImports}.
 */
function importGraph(): ReadonlyMap<string, readonly string[]> {
  if (_graph !== undefined) return _graph;
  const scan = projectImports();
  const edges = new Map<string, string[]>();
  for (const [file, specs] of scan) {
    const to: string[] = [];
    for (const spec of specs) {
      const target = spec.startsWith(".")
        ? relative(ROOT, resolve(ROOT, dirname(file), spec))
        : DOOR_FILES.get(spec);
      if (target !== undefined && scan.has(target)) to.push(target);
    }
    edges.set(file, to);
  }
  _graph = edges;
  return edges;
}

/** An import cycle of `edges` as its files in order (the first repeated last), or `null`. */
function findCycle(
  edges: ReadonlyMap<string, readonly string[]>,
): string[] | null {
  const state = new Map<string, "open" | "done">();
  const stack: string[] = [];
  const visit = (n: string): string[] | null => {
    const s = state.get(n);
    if (s === "done") return null;
    if (s === "open") return [...stack.slice(stack.indexOf(n)), n];
    state.set(n, "open");
    stack.push(n);
    for (const m of edges.get(n) ?? []) {
      const c = visit(m);
      if (c !== null) return c;
    }
    stack.pop();
    state.set(n, "done");
    return null;
  };
  for (const n of [...edges.keys()].sort()) {
    const c = visit(n);
    if (c !== null) return c;
  }
  return null;
}

Deno.test("architecture: the cycle finder names a cycle's files in order and passes a graph without one", () => {
  const g = new Map([
    ["a.ts", ["b.ts"]],
    ["b.ts", ["c.ts", "d.ts"]],
    ["c.ts", ["a.ts"]],
    ["d.ts", []],
  ]);
  assert.deepEqual(findCycle(g), ["a.ts", "b.ts", "c.ts", "a.ts"]);
  g.set("c.ts", ["d.ts"]);
  assert.equal(findCycle(g), null);
});

Deno.test("architecture: no import cycle among the repository's .ts files", () => {
  const edges = importGraph();
  // the graph is real: it reaches across folders and through the doors
  assert.ok(edges.get("cli.ts")!.length > 5);
  assert.ok(
    edges.get("nodes/train.ts")!.includes("policy/trainer.ts"),
    "nodes/train.ts -> policy/trainer.ts",
  );
  assert.ok(
    edges.get("nodes/redesign.ts")!.some((f) => f.startsWith("engine/")),
    "a door resolves to its file",
  );
  const cycle = findCycle(edges);
  assert.equal(
    cycle,
    null,
    `import cycle: ${
      cycle?.join(" -> ")
    }; move what both sides need into a file of its own`,
  );
});

/** The rooms on top: the HTML report and the command line's subcommands. */
const TOP_ROOMS: readonly string[] = ["report/", "cli/"];

/** The rooms below them: the engine, the node kinds and the plain libraries. */
const LOWER_ROOMS: readonly string[] = [
  "engine/",
  "nodes/",
  "families/",
  "engineer/",
  "policy/",
  "mapf/",
  "llm/",
  "schemas/",
];

/**
 * The broken room rules of an import graph: a lower room importing report/
 * or cli/, report/ importing cli/ (the command line wires the report, not
 * the other way round), or another room reaching past a top room's door
 * (its `mod.ts`; tests and bench/ may use its leaf files).
 */
function roomProblems(
  edges: ReadonlyMap<string, readonly string[]>,
): string[] {
  const bad: string[] = [];
  const roomOf = (f: string) => TOP_ROOMS.find((r) => f.startsWith(r));
  for (const [file, to] of edges) {
    const lower = LOWER_ROOMS.some((r) => file.startsWith(r));
    const fixturesOk = file.endsWith("_test.ts") || file.startsWith("bench/");
    for (const target of to) {
      const room = roomOf(target);
      if (room === undefined || roomOf(file) === room) continue;
      if (lower) {
        bad.push(`${file} -> ${target}: ${room} sits on top of ${file}`);
      } else if (file.startsWith("report/") && room === "cli/") {
        bad.push(`${file} -> ${target}: cli/ wires report/, not the reverse`);
      } else if (target !== `${room}mod.ts` && !fixturesOk) {
        bad.push(`${file} -> ${target}: use ${room}mod.ts`);
      }
    }
  }
  return bad;
}

Deno.test("architecture: the room rules name each breach and pass a graph that keeps them", () => {
  const g = new Map<string, string[]>([
    ["cli.ts", ["cli/mod.ts"]],
    ["cli/mod.ts", ["report/mod.ts", "nodes/mod.ts"]],
    ["report/mod.ts", ["report/command.ts"]],
    ["report/command.ts", ["nodes/engineers.ts"]],
    ["nodes/mod.ts", []],
  ]);
  assert.deepEqual(roomProblems(g), []);
  g.set("nodes/mod.ts", ["cli/mod.ts"]);
  g.set("engine/run/job.ts", ["report/html.ts"]);
  g.set("report/command.ts", ["cli/_io.ts"]);
  g.set("mod.ts", ["report/html.ts"]);
  assert.deepEqual(roomProblems(g), [
    "report/command.ts -> cli/_io.ts: cli/ wires report/, not the reverse",
    "nodes/mod.ts -> cli/mod.ts: cli/ sits on top of nodes/mod.ts",
    "engine/run/job.ts -> report/html.ts: report/ sits on top of engine/run/job.ts",
    "mod.ts -> report/html.ts: use report/mod.ts",
  ]);
});

Deno.test("architecture: report/ and cli/ sit on top: no node kind, engine file or library imports them, and report/ imports nothing of cli/", () => {
  const edges = importGraph();
  // the graph is real: the command line wires the report through its door
  assert.ok(
    edges.get("cli.ts")!.includes("cli/mod.ts"),
    "cli.ts -> cli/mod.ts",
  );
  assert.ok(
    edges.get("cli/mod.ts")!.includes("report/mod.ts"),
    "cli/mod.ts -> report/mod.ts",
  );
  assert.ok(
    edges.get("cli/train_command.ts")!.includes("nodes/train.ts"),
    "cli/train_command.ts -> nodes/train.ts",
  );
  assert.deepEqual(roomProblems(edges), []);
});

Deno.test("architecture: engine/ passes deno publish --dry-run but for its license", async () => {
  // The project has no license yet; choosing one is its owners' decision.
  // With a "license" field in engine/deno.json the dry run succeeds.
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["publish", "--dry-run", "--allow-dirty"],
    cwd: join(ROOT, "engine"),
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder().decode(out.stderr) +
    new TextDecoder().decode(out.stdout);
  const errors = [...text.matchAll(/^error\[([a-z-]+)\]/gm)].map((m) => m[1]);
  assert.deepEqual(errors, ["missing-license"], text.slice(0, 4000));
  assert.match(text, /Checking for slow types in the public API/);
});

/** What reading and writing a policy checkpoint runs. */
const POLICY_CHECKPOINT_FILES: readonly string[] = [
  "policy/checkpoint.ts",
  "policy/errors.ts",
  "policy/mlp.ts",
  "policy/observation.ts",
  "policy/onnx_export.ts",
  "policy/ppo_loss.ts",
];

/** What generating a MAPF suite runs: the map generator and the exact solvers. */
const MAPF_SUITE_FILES: readonly string[] = [
  "mapf/exact_optimum.ts",
  "mapf/generator.ts",
  "mapf/grid.ts",
  "mapf/grid_cell.ts",
  "mapf/instance.ts",
  "mapf/map_gen.ts",
  "mapf/paper_grid.ts",
  "mapf/rng.ts",
  "mapf/solution.ts",
  "mapf/solve_cbs.ts",
  "mapf/solve_makespan.ts",
  "mapf/solve_pp.ts",
  "mapf/space_time_astar.ts",
  "mapf/suites.ts",
];

/** The MAPF solvers (`solve` and the planners it chooses between). */
const MAPF_SOLVE_FILES: readonly string[] = [
  "mapf/solution.ts",
  "mapf/solve.ts",
  "mapf/solve_cbs.ts",
  "mapf/solve_pp.ts",
  "mapf/space_time_astar.ts",
];

/** The policy learner and the WASM kernels it runs. */
const POLICY_LEARNER_FILES: readonly string[] = [
  "policy/adam.ts",
  "policy/kernels/arena.ts",
  "policy/kernels/mlp.wasm",
  "policy/kernels/modules.ts",
  "policy/kernels/obs.wasm",
  "policy/learner.ts",
];

/** What training a policy runs, whichever family it trains on. */
const POLICY_TRAINING_FILES: readonly string[] = [
  ...POLICY_CHECKPOINT_FILES,
  ...POLICY_LEARNER_FILES,
  "policy/pvl.ts",
  "policy/reward_spec.ts",
  "policy/simd_learner.ts",
  "policy/simd_mlp.ts",
  "policy/trainer.ts",
].sort();

/**
 * The policy-acting module graph that `rollout` and the LM kinds share: the
 * LLM client, the MAPF replay and solvers, the policy network and its kernels.
 */
const ACTING_FILES: readonly string[] = [
  "llm/cache.ts",
  "llm/client.ts",
  "llm/endpoint.ts",
  "llm/errors.ts",
  "llm/gguf_digest.ts",
  "llm/gguf_header.ts",
  "llm/local.ts",
  "mapf/batch_env.ts",
  "mapf/grid.ts",
  "mapf/instance.ts",
  "mapf/outcome.ts",
  "mapf/pool.ts",
  "mapf/render_text.ts",
  "mapf/replay.ts",
  "mapf/rng.ts",
  ...MAPF_SOLVE_FILES,
  "mapf/trajectory.ts",
  "nodes/_values.ts",
  "policy/acting_loop.ts",
  ...POLICY_LEARNER_FILES,
  "policy/llm_policy.ts",
  "policy/mlp.ts",
  "policy/observation.ts",
  "policy/observation_encoder.ts",
  "policy/ppo_loss.ts",
  "policy/rollout.ts",
].sort();

/** What rollout runs (evaluate runs the same plus its own file). */
const ROLLOUT_FILES: readonly string[] = [
  ...ACTING_FILES,
  "nodes/policy_io.ts",
  "nodes/rollout.ts",
  "policy/checkpoint.ts",
  "policy/errors.ts",
  "policy/onnx_export.ts",
  "policy/onnx_policy.ts",
  "schemas/env_config.ts",
  "schemas/llm.ts",
].sort();

/** The module graph `lm.init` and `train.lm` share (their own file aside). */
const LM_KIND_FILES: readonly string[] = [
  ...ACTING_FILES,
  "lm/envsmith_lm/__init__.py",
  "lm/envsmith_lm/__main__.py",
  "lm/envsmith_lm/common.py",
  "lm/envsmith_lm/evaluate.py",
  "lm/envsmith_lm/generate.py",
  "lm/envsmith_lm/gguf_export.py",
  "lm/envsmith_lm/grpo.py",
  "lm/envsmith_lm/model.py",
  "lm/envsmith_lm/reward.py",
  "lm/envsmith_lm/sft.py",
  "lm/envsmith_lm/stage.py",
  "lm/envsmith_lm/tokenizer.py",
  "lm/requirements.txt",
  "nodes/lm_checkpoint.ts",
  "nodes/lm_env.ts",
  "nodes/lm_options.ts",
  "nodes/lm_result.ts",
  "nodes/lm_rows.ts",
  "nodes/lm_trainer.ts",
  "policy/plan_reward.ts",
].sort();

/**
 * The module graph the learned engineer's kinds share (`transitions`,
 * `learned.candidate`, `hindsight`, `learned.fit`, `engineer.bench`), their
 * own files aside.
 */
const LEARNED_KIND_FILES: readonly string[] = [
  ...MAPF_SUITE_FILES,
  "engineer/config_ops.ts",
  "engineer/context.ts",
  "engineer/diagnose.ts",
  "engineer/engineer_kind.ts",
  "engineer/episode.ts",
  "engineer/learned_data.ts",
  "engineer/learned_features.ts",
  "engineer/render_case.ts",
  "families/family.ts",
  "families/mapf_frozenlake/family.ts",
  "mapf/box.ts",
  "mapf/mutate.ts",
  "mapf/render_text.ts",
  "mapf/solve.ts",
  "nodes/_learned_io.ts",
  "schemas/env_config.ts",
  "schemas/findings.ts",
].sort();

/**
 * The files each kind's code digest covers: exactly the code the kind runs.
 * When a kind starts importing another file, this list changes with it (a
 * reviewer sees which files now invalidate the kind's cache).
 */
const DIGEST_FILES: Record<string, readonly string[]> = {
  "exec": [
    "engine/errors.ts",
    "engine/input_files.ts",
    "engine/limits.ts",
    "engine/regular_file.ts",
    "engine/run/child_process.ts",
    "engine/run/exec_kind.ts",
  ],
  "generate": [
    ...MAPF_SUITE_FILES,
    "families/family.ts",
    "nodes/_values.ts",
    "nodes/generate.ts",
    "nodes/generate_family.ts",
    "nodes/level_set.ts",
    "nodes/level_set_io.ts",
    "schemas/env_config.ts",
  ].sort(),

  "policy.init": [
    ...POLICY_CHECKPOINT_FILES,
    "llm/errors.ts",
    "llm/gguf_digest.ts",
    "llm/gguf_header.ts",
    "mapf/grid.ts",
    "mapf/instance.ts",
    "mapf/rng.ts",
    "nodes/_values.ts",
    "nodes/policy_init.ts",
    "nodes/policy_io.ts",
    "schemas/env_config.ts",
    "schemas/llm.ts",
  ].sort(),
  "train": [
    ...POLICY_TRAINING_FILES,
    "llm/errors.ts",
    "llm/gguf_digest.ts",
    "llm/gguf_header.ts",
    "mapf/batch_env.ts",
    "mapf/box.ts",
    "mapf/generator.ts",
    "mapf/grid.ts",
    "mapf/instance.ts",
    "mapf/map_gen.ts",
    "mapf/mutate.ts",
    "mapf/outcome.ts",
    "mapf/pool.ts",
    "mapf/rng.ts",
    ...MAPF_SOLVE_FILES,
    "nodes/_values.ts",
    "nodes/policy_io.ts",
    "nodes/reward_params.ts",
    "nodes/train.ts",
    "nodes/train_sampler.ts",
    "nodes/train_warning.ts",
    "policy/level_sampler.ts",
    "policy/mapf_training_env.ts",
    "policy/observation_encoder.ts",
    "policy/reward.ts",
    "policy/sampler_training.ts",
    "schemas/env_config.ts",
    "schemas/llm.ts",
  ].sort(),
  "maze.evaluate": [
    ...POLICY_CHECKPOINT_FILES,
    "families/maze/batch_env.ts",
    "families/maze/diagnosis.ts",
    "families/maze/evaluate.ts",
    "families/maze/maze.ts",
    "families/maze/maze_json.ts",
    "families/maze/random.ts",
    "families/maze/render.ts",
    "mapf/rng.ts",
    "nodes/maze_evaluate.ts",
    "nodes/maze_io.ts",
  ].sort(),
  "maze.generate": [
    ...POLICY_CHECKPOINT_FILES,
    "families/family.ts",
    "families/maze/batch_env.ts",
    "families/maze/config.ts",
    "families/maze/diagnosis.ts",
    "families/maze/family.ts",
    "families/maze/generate.ts",
    "families/maze/maze.ts",
    "families/maze/maze_json.ts",
    "families/maze/mutate.ts",
    "families/maze/random.ts",
    "families/maze/render.ts",
    "families/maze/test_mazes.ts",
    "mapf/rng.ts",
    "nodes/family_level_set.ts",
    "nodes/maze_generate.ts",
    "nodes/maze_io.ts",
  ].sort(),
  "maze.train": [
    ...POLICY_TRAINING_FILES,
    "families/maze/batch_env.ts",
    "families/maze/maze.ts",
    "families/maze/maze_json.ts",
    "mapf/rng.ts",
    "nodes/maze_io.ts",
    "nodes/maze_train.ts",
  ].sort(),
  "rollout": ROLLOUT_FILES,
  "evaluate": [
    ...ROLLOUT_FILES,
    "mapf/grid_cell.ts",
    "mapf/plan_reading.ts",
    "mapf/solve_makespan.ts",
    "nodes/evaluate.ts",
    "nodes/evaluate_metrics.ts",
  ].sort(),
  "diagnose": [
    "engineer/diagnose.ts",
    "engineer/episode.ts",
    "engineer/from_rollouts.ts",
    "engineer/render_case.ts",
    "mapf/grid.ts",
    "mapf/instance.ts",
    "mapf/outcome.ts",
    "mapf/rng.ts",
    "mapf/trajectory.ts",
    "nodes/_values.ts",
    "nodes/diagnose.ts",
    "schemas/env_config.ts",
    "schemas/findings.ts",
  ],
  // The shared code of every redesign; the chosen engineer's files are
  // added per node (ENGINEER_FILES).
  // The family's files are added per node too (its module graph).
  "redesign": [
    "engineer/context.ts",
    "engineer/diff.ts",
    "engineer/engineer_kind.ts",
    "engineer/registry.ts",
    "families/family.ts",
    "nodes/level_set.ts",
    "nodes/redesign.ts",
    "nodes/redesign_family.ts",
    "schemas/env_config.ts",
    "schemas/findings.ts",
  ],
  // the per-size form: its generator runs the ordinary one per draw
  "generate.sizes": [
    "mapf/generator.ts",
    "mapf/grid.ts",
    "mapf/instance.ts",
    "mapf/map_gen.ts",
    "mapf/needs_wait.ts",
    "mapf/rng.ts",
    "mapf/size_generator.ts",
    "mapf/solution.ts",
    "mapf/solve_cbs.ts",
    "mapf/solve_pp.ts",
    "mapf/space_time_astar.ts",
    "nodes/generate_sizes.ts",
    "schemas/env_config.ts",
    "schemas/size_form.ts",
  ],
  // the shared code of every per-size redesign (the engineer is added per node)
  "redesign.sizes": [
    "engineer/context.ts",
    "engineer/engineer_kind.ts",
    "engineer/size_context.ts",
    "nodes/redesign_sizes.ts",
    "schemas/env_config.ts",
    "schemas/findings.ts",
    "schemas/size_form.ts",
  ],
  // the LM kinds share one module graph but for their own file
  "lm.init": [...LM_KIND_FILES, "nodes/lm_init.ts"].sort(),
  "train.lm": [...LM_KIND_FILES, "nodes/lm_train.ts"].sort(),
  // a family program's kinds: the protocol, never a family's code (the
  // program's own files enter their keys by content, as `fingerprint`)
  "program.generate": [
    "families/program/protocol.ts",
    "nodes/_program_family.ts",
    "nodes/program_generate.ts",
  ],
  "program.train": [
    "families/program/protocol.ts",
    "nodes/_program_family.ts",
    "nodes/_program_policy.ts",
    "nodes/program_train.ts",
  ],
  "program.evaluate": [
    "families/program/protocol.ts",
    "nodes/_program_family.ts",
    "nodes/_program_policy.ts",
    "nodes/program_evaluate.ts",
  ],
  // the learned engineer's kinds: its data, fit and benchmark (engineer.bench adds the chosen engineer, as redesign does)
  "transitions": [...LEARNED_KIND_FILES, "nodes/transitions.ts"].sort(),
  "learned.candidate": [...LEARNED_KIND_FILES, "nodes/learned_candidate.ts"]
    .sort(),
  "hindsight": [...LEARNED_KIND_FILES, "nodes/hindsight.ts"].sort(),
  "learned.fit": [
    ...LEARNED_KIND_FILES,
    "engineer/learned_fit.ts",
    "engineer/learned_model.ts",
    "nodes/learned_fit.ts",
  ].sort(),
  "engineer.bench": [
    ...LEARNED_KIND_FILES,
    "engineer/learned_bench.ts",
    "nodes/engineer_bench.ts",
  ].sort(),
};

/**
 * What the engineers that ask a model or program for a reply (`llm`, `exec`)
 * share: the reply's format and checks and the MAPF generator a checked
 * reply's configs run through.
 */
const REPLY_ENGINEER_FILES: readonly string[] = [
  "engineer/config_ops.ts",
  "engineer/engineer_kind.ts",
  "engineer/family_reply.ts",
  "engineer/reply_check.ts",
  "engineer/reply_format.ts",
  "families/family.ts",
  "llm/errors.ts",
  "llm/gbnf.ts",
  "llm/json_extract.ts",
  "mapf/generator.ts",
  "mapf/grid.ts",
  "mapf/instance.ts",
  "mapf/map_gen.ts",
  "mapf/rng.ts",
  "mapf/solution.ts",
  "mapf/solve_cbs.ts",
  "mapf/solve_pp.ts",
  "mapf/space_time_astar.ts",
  "schemas/env_config.ts",
  "schemas/llm.ts",
];

/**
 * The files each built-in engineer adds to a redesign node's code digest:
 * its own module graph, never another engineer's.
 */
const ENGINEER_FILES: Record<string, readonly string[]> = {
  "fixed": ["engineer/fixed.ts"],
  "random": [
    "engineer/engineer_kind.ts",
    "engineer/random.ts",
    "families/family.ts",
    "mapf/rng.ts",
  ],
  "rules": [
    "engineer/config_ops.ts",
    "engineer/rules.ts",
    "schemas/env_config.ts",
  ],
  "replay": [
    "engineer/config_ops.ts",
    "engineer/engineer_kind.ts",
    "engineer/replay.ts",
    "families/family.ts",
    "mapf/rng.ts",
    "schemas/env_config.ts",
  ],
  "llm": [
    ...REPLY_ENGINEER_FILES,
    "engineer/llm.ts",
    "engineer/llm_serve.ts",
    "engineer/prompts/family/system.md",
    "engineer/prompts/informed/system.md",
    "engineer/prompts/neutral/system.md",
    "engineer/prompts/retry.md",
    "engineer/prompts/user.md",
    "llm/cache.ts",
    "llm/client.ts",
    "llm/endpoint.ts",
    "llm/gguf_digest.ts",
    "llm/gguf_header.ts",
    "llm/local.ts",
    "llm/openai_server.ts",
    "llm/prompt_budget.ts",
    "llm/serve_llm_command.ts",
    "llm/served_client.ts",
    "llm/served_process.ts",
  ].sort(),
  "scripted": [
    "engineer/engineer_kind.ts",
    "engineer/scripted.ts",
    "families/family.ts",
    "schemas/env_config.ts",
  ],
  "blind": [
    "engineer/blind.ts",
    "engineer/config_ops.ts",
    "engineer/engineer_kind.ts",
    "families/family.ts",
    "schemas/env_config.ts",
  ],
  "exec": [...REPLY_ENGINEER_FILES, "engineer/exec.ts"].sort(),
  "dr-stage": [
    "engineer/config_ops.ts",
    "engineer/dr.ts",
    "engineer/engineer_kind.ts",
    "mapf/box.ts",
    "mapf/rng.ts",
    "schemas/env_config.ts",
  ],
  "band": [
    "engineer/band.ts",
    "engineer/engineer_kind.ts",
    "families/family.ts",
  ],
  // the learned engineer and the explore engineer (its exploratory curricula)
  "learned": [
    "engineer/engineer_kind.ts",
    "engineer/learned.ts",
    "engineer/learned_features.ts",
    "engineer/learned_model.ts",
    "families/family.ts",
    "mapf/rng.ts",
    "schemas/findings.ts",
  ],
  "explore": [
    "engineer/engineer_kind.ts",
    "engineer/explore.ts",
    "engineer/learned_features.ts",
    "families/family.ts",
    "mapf/rng.ts",
    "schemas/findings.ts",
  ],
};

/**
 * The engineers registered from `nodes/` because they roll a policy out:
 * each one's digest has the scoring rollouts (`policy/level_scores.ts`) and
 * its own algorithm, and no other engineer's file (`plr` never `accel`'s,
 * `probe` never the level buffer's).
 */
const POLICY_ENGINEER_OWN: Record<string, readonly string[]> = {
  "probe": ["engineer/probe.ts", "nodes/probe_engineer.ts"],
  "probe-base": ["engineer/probe.ts", "nodes/probe_engineer.ts"],
  // new levels are drawn from dr's box
  "plr-stage": [
    "engineer/dr.ts",
    "engineer/plr.ts",
    "nodes/level_set_io.ts",
    "nodes/plr_engineer.ts",
  ],
  "accel-stage": [
    "engineer/accel.ts",
    "engineer/dr.ts",
    "engineer/plr.ts",
    "nodes/level_set_io.ts",
    "mapf/mutate.ts",
    "mapf/solve.ts",
    "nodes/accel_engineer.ts",
    "nodes/plr_engineer.ts",
  ],
};

/** Kinds that train or evaluate policies: the ones whose cache is expensive. */
const TRAINING_KINDS = [
  "generate",
  "policy.init",
  "train",
  "rollout",
  "evaluate",
];

/** What the MAPF-FrozenLake family adds to the nodes that use it. */
const MAPF_FAMILY_FILES: readonly string[] = Object.keys(
  codeDigest(mapfFrozenLake.module).files,
);

Deno.test("digest coverage: a family's digest is its own code; no built-in family reaches another", () => {
  for (const f of builtinFamilies) {
    const files = Object.keys(codeDigest(f.module).files);
    for (const other of builtinFamilies) {
      if (other === f) continue;
      const path = relative(ROOT, fileURLToPath(other.module));
      assert.ok(!files.includes(path), `${f.name} digest has ${path}`);
    }
    assert.ok(!files.some((x) => x.startsWith("nodes/")), f.name);
  }
  assert.ok(MAPF_FAMILY_FILES.includes("mapf/generator.ts"));
  assert.ok(!MAPF_FAMILY_FILES.includes("families/registry.ts"));
  // the trainer imports no family: training mazes digests no MAPF dynamics
  // (only the seeded generator it shares)
  const mazeTrain = allKinds.find((k) => k.name === "maze.train")!;
  assert.deepEqual(
    Object.keys(codeDigest(mazeTrain.module).files).filter((x) =>
      x.startsWith("mapf/") || x === "policy/mapf_training_env.ts"
    ),
    ["mapf/rng.ts"],
  );
});

Deno.test("digest coverage: each kind's digest covers exactly the files it runs", () => {
  const got: Record<string, string[]> = {};
  for (const k of allKinds) {
    got[k.name] = Object.keys(codeDigest(k.module).files);
  }
  assert.deepEqual(got, DIGEST_FILES);
});

Deno.test("digest coverage: each engineer's digest covers its own files only; a redesign node's code is the shared code plus the chosen engineer's", () => {
  const got: Record<string, string[]> = {};
  for (const e of builtinEngineers) {
    got[e.name] = Object.keys(codeDigest(e.module).files);
  }
  assert.deepEqual(got, ENGINEER_FILES);
  const redesign = allKinds.find((k) => k.name === "redesign")!;
  for (const e of builtinEngineers) {
    const literal = { engineer: { name: e.name }, config: { preset: "easy" } };
    const files = Object.keys(
      nodeCodeDigest(redesign, literal, ROOT).files,
    );
    assert.deepEqual(
      files,
      [
        ...new Set([
          ...DIGEST_FILES.redesign!,
          ...ENGINEER_FILES[e.name]!,
          ...MAPF_FAMILY_FILES,
        ]),
      ].sort(),
      e.name,
    );
    // no other engineer's module is in it
    for (const other of builtinEngineers) {
      if (other.name === e.name) continue;
      const path = relative(ROOT, fileURLToPath(other.module));
      assert.ok(!files.includes(path), `${e.name} digest has ${path}`);
    }
  }
});

Deno.test("digest coverage: the engineers that roll a policy out cover the scoring rollouts and their own files, no other engineer's", () => {
  const own = new Set(Object.values(POLICY_ENGINEER_OWN).flat());
  for (const e of policyEngineers) {
    const files = Object.keys(codeDigest(e.module).files);
    for (const f of POLICY_ENGINEER_OWN[e.name]!) {
      assert.ok(files.includes(f), `${e.name} digest lacks ${f}`);
    }
    assert.ok(files.includes("policy/level_scores.ts"), e.name);
    for (const f of own) {
      if (POLICY_ENGINEER_OWN[e.name]!.includes(f)) continue;
      assert.ok(!files.includes(f), `${e.name} digest has ${f}`);
    }
    for (const other of builtinEngineers) {
      const path = relative(ROOT, fileURLToPath(other.module));
      if (POLICY_ENGINEER_OWN[e.name]!.includes(path)) continue;
      assert.ok(!files.includes(path), `${e.name} digest has ${path}`);
    }
  }
});

Deno.test("digest coverage: no barrel, renderer or command module in a kind's digest; packages at exact locked versions", () => {
  for (const k of allKinds) {
    const d = codeDigest(k.module);
    for (const f of Object.keys(d.files)) {
      assert.ok(
        !f.endsWith("/mod.ts"),
        `${k.name}: barrel ${f} (import the leaf files)`,
      );
      assert.ok(!/_command\.ts$|^(report|cli)\//.test(f), `${k.name}: ${f}`);
      if (TRAINING_KINDS.includes(k.name)) {
        assert.ok(
          !/render_(svg|state)\.ts$/.test(f),
          `${k.name}: renderer ${f} in a training kind's digest`,
        );
      }
    }
    for (const p of d.packages) {
      assert.match(
        p,
        /^(npm:)?@?[\w./-]+@\d+\.\d+\.\d+(\/[\w/-]+)?$/,
        `${k.name}: ${p}`,
      );
    }
  }
  // Only the LLM policy's prompt renderer reaches rollout and evaluate.
  for (const name of ["train", "generate", "policy.init"]) {
    const files = DIGEST_FILES[name]!;
    assert.ok(!files.some((f) => f.includes("render_")), name);
  }
});

Deno.test("digest coverage: node-llama-cpp, loaded by llm/local.ts through import(), is in the rollout and evaluate keys", () => {
  const local = Deno.readTextFileSync(join(ROOT, "llm/local.ts"));
  assert.match(
    local,
    /\bimport\("node-llama-cpp"\)/,
    "llm/local.ts loads it lazily",
  );
  for (const name of ["rollout", "evaluate"]) {
    const k = allKinds.find((k) => k.name === name)!;
    const d = codeDigest(k.module);
    assert.ok("llm/local.ts" in d.files, `${name}: llm/local.ts`);
    assert.ok(
      d.packages.some((p) => /^npm:node-llama-cpp@\d+\.\d+\.\d+$/.test(p)),
      `${name}: ${d.packages.join(", ")}`,
    );
  }
});

/** Runs this project's CLI, copied to `dir`, in a fresh process. */
async function cliIn(dir: string, args: string[]) {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      join(dir, "cli.ts"),
      "--cache",
      join(dir, "cache"),
      ...args,
    ],
    cwd: dir,
    env: { CI: "1", NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: out.code, out: text(out.stdout), err: text(out.stderr) };
}

/** Status of every node of a plan (`plan --json`). */
async function planStatus(dir: string): Promise<Map<string, string>> {
  const r = await cliIn(dir, ["plan", "smoke.yaml", "--json"]);
  assert.equal(r.code, 0, r.err);
  const plan = JSON.parse(r.out) as {
    nodes: { id: string; kind: string; status: string; why: string[] }[];
  };
  return new Map(
    plan.nodes.map((n) => [n.id, `${n.kind} ${n.status} ${n.why.join("; ")}`]),
  );
}

Deno.test("digest: editing mapf/render_svg.ts leaves every cached entry valid; editing mapf/pool.ts invalidates train and what follows", async () => {
  const dir = await projectCopy("envsmith-digest-");
  try {
    cpSync(join(ROOT, "experiments/smoke.yaml"), join(dir, "smoke.yaml"));
    const run = await cliIn(dir, ["run", "smoke.yaml", "--jobs", "2"]);
    assert.equal(run.code, 0, run.err);
    assert.match(run.err, /smoke: 20 computed, 0 cached, 0 failed/);

    appendEdit(dir, "mapf/render_svg.ts", "An edit no kind runs.");
    const afterSvg = await planStatus(dir);
    assert.equal(afterSvg.size, 20);
    for (const [id, s] of afterSvg) assert.match(s, / cached $/, `${id}: ${s}`);
    const kinds = new Set([...afterSvg.values()].map((s) => s.split(" ")[0]));
    for (const k of ["generate", "train", "rollout", "evaluate"]) {
      assert.ok(kinds.has(k), k);
    }

    // The control: an edit of a file train runs invalidates exactly train
    // and what depends on it (so the check above can fail).
    appendEdit(dir, "mapf/pool.ts", "An edit train runs.");
    const afterPool = await planStatus(dir);
    for (const [id, s] of afterPool) {
      if (/^(bench|start|curriculum\.0\.envs)\b/.test(id)) {
        assert.match(s, / cached $/, `${id}: ${s}`);
      } else if (s.startsWith("train ")) {
        assert.match(s, /code of mapf\/pool\.ts changed/, `${id}: ${s}`);
      } else assert.doesNotMatch(s, / cached $/, `${id}: ${s}`);
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

/**
 * Appends a documented exported constant to `file` of the project copy `dir`:
 * an edit that changes the file's code digest and nothing it does.
 */
function appendEdit(dir: string, file: string, doc: string): void {
  Deno.writeTextFileSync(
    join(dir, file),
    `\n/** ${doc} */\nexport const EDITED = 1;\n`,
    { append: true },
  );
}

/** A copy of the project in a new directory (for tests that edit code). */
async function projectCopy(prefix: string): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix });
  for (
    const f of [
      "engine",
      "families",
      "mapf",
      "policy",
      "engineer",
      "llm",
      "schemas",
      "nodes",
      "cli",
      "report",
    ]
  ) {
    cpSync(join(ROOT, f), join(dir, f), { recursive: true });
  }
  for (const f of ["deno.json", "deno.lock", "mod.ts", "cli.ts"]) {
    cpSync(join(ROOT, f), join(dir, f));
  }
  Deno.symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  return dir;
}

/** One stage of the loop with every built-in engineer but exec, and a node after each redesign. */
const ENGINEERS_YAML = `experiment: engineers
seed: 7
matrix:
  engineer:
    - { name: rules,    engineer: rules }
    - { name: random,   engineer: random }
    - { name: replay,   engineer: replay }
    - { name: fixed,    engineer: fixed }
    - { name: scripted, engineer: { name: scripted, script: { preset: medium } } }
    - { name: blind,    engineer: { name: blind, pace: [{ preset: easy }, { preset: medium }] } }
    - { name: llm,      engineer: { name: llm, llm: { base_url: "http://127.0.0.1:9/v1", model: m } }, requires_env: [ENVSMITH_TEST_NEVER_SET] }
nodes:
  start: { kind: policy.init, with: { hidden: [16], seed: 1 } }
  curriculum:
    kind: stages
    count: 1
    from: { config: { preset: easy }, policy: $start }
    each:
      envs:     { kind: generate, with: { config: $prev.config, count: 16, seed: 1 } }
      policy:   { kind: train,    with: { policy: $prev.policy, envs: $envs, updates: 2, parallel: 8, steps: 16, minibatch: 64 } }
      rollouts: { kind: rollout,  with: { policy: $policy, envs: $envs } }
      findings: { kind: diagnose, with: { rollouts: $rollouts } }
      config:   { kind: redesign, with: { engineer: $matrix.engineer.engineer, context: full, config: $prev.config, findings: $findings, stage: $stage } }
  after: { kind: generate, with: { config: $curriculum.config, count: 8, seed: 2 } }
`;

/** id -> { key, status, why } from `plan --json`. */
async function planOf(dir: string, file: string) {
  const r = await cliIn(dir, ["plan", file, "--json"]);
  assert.equal(r.code, 0, r.err);
  const nodes = JSON.parse(r.out).nodes as {
    id: string;
    key: string;
    status: string;
    why: string[];
  }[];
  return new Map(nodes.map((n) => [n.id, n]));
}

Deno.test("digest: editing engineer/rules.ts recomputes only the rules redesign and what follows it; adding an engineer file moves no key", async () => {
  const dir = await projectCopy("envsmith-engineer-digest-");
  try {
    Deno.writeTextFileSync(join(dir, "engineers.yaml"), ENGINEERS_YAML);
    const run = await cliIn(dir, ["run", "engineers.yaml", "--jobs", "2"]);
    assert.equal(run.code, 0, run.err);
    // 1 init + 4 shared stage nodes + 6 redesigns + 6 after (llm skipped)
    assert.match(run.err, /engineers: 17 computed, 0 cached, 0 failed/);
    const before = await planOf(dir, "engineers.yaml");
    assert.equal(before.size, 19);

    // 1. An edit of the rules engineer.
    appendEdit(dir, "engineer/rules.ts", "An edit of the rules engineer.");
    const afterRules = await planOf(dir, "engineers.yaml");
    for (const [id, n] of afterRules) {
      const was = before.get(id)!;
      if (id === "curriculum.0.config[engineer=rules]") {
        assert.equal(n.status, "run", id);
        assert.match(n.why.join("; "), /code of engineer\/rules\.ts changed/);
        assert.notEqual(n.key, was.key);
      } else if (id === "after[engineer=rules]") {
        assert.equal(n.status, "blocked", id);
        assert.notEqual(n.key, was.key);
      } else {
        // random, replay, fixed, scripted, blind stay cached; llm (skipped
        // here: no endpoint) keeps its key
        assert.equal(n.key, was.key, id);
        assert.equal(n.status, was.status, id);
      }
    }
    assert.equal(afterRules.get("after[engineer=random]")!.status, "cached");
    assert.equal(
      afterRules.get("curriculum.0.config[engineer=llm]")!.status,
      "skipped",
    );

    // 2. A new engineer: its file and one line in engineer/builtins.ts.
    Deno.writeTextFileSync(
      join(dir, "engineer/keep.ts"),
      `import * as v from "valibot";
import type { EngineerKind } from "./engineer_kind.ts";
export const engineer: EngineerKind<Record<string, never>> = {
  name: "keep",
  description: "keeps the configuration",
  params: v.strictObject({}),
  module: import.meta.url,
  create: () => ({
    name: "keep",
    propose: (input) =>
      Promise.resolve({ config: input.config, rationale: "kept", events: [], reads: [] }),
  }),
};
`,
    );
    const builtins = join(dir, "engineer/builtins.ts");
    Deno.writeTextFileSync(
      builtins,
      Deno.readTextFileSync(builtins)
        .replace(
          'import { engineer as exec } from "./exec.ts";',
          'import { engineer as exec } from "./exec.ts";\nimport { engineer as keep } from "./keep.ts";',
        )
        .replace("  exec,\n];", "  exec,\n  keep,\n];"),
    );
    const engineers = await cliIn(dir, ["engineers"]);
    assert.match(
      engineers.out,
      /^keep: keeps the configuration( \[families: [^\]]+\])?$/m,
    );
    const afterNew = await planOf(dir, "engineers.yaml");
    for (const [id, n] of afterNew) {
      assert.equal(n.key, afterRules.get(id)!.key, id);
    }

    // The control: an edit of the shared redesign code moves every
    // redesign key (so the checks above can fail).
    appendEdit(dir, "engineer/context.ts", "An edit every redesign runs.");
    const afterShared = await planOf(dir, "engineers.yaml");
    for (const [id, n] of afterShared) {
      if (id.startsWith("curriculum.0.config")) {
        assert.notEqual(n.key, afterNew.get(id)!.key, id);
      } else if (!id.startsWith("after")) {
        assert.equal(n.key, afterNew.get(id)!.key, id);
      }
    }
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
