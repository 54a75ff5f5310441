import assert from "node:assert/strict";
import * as v from "valibot";
import { memoryContext } from "./_memory_context.ts";
import { kind as generate } from "./maze_generate.ts";
import { kind as train } from "./maze_train.ts";
import { MazesValueSchema, readMazes } from "./maze_io.ts";
import { redesign, redesignParamsSchema } from "./redesign.ts";
import { engineers } from "./engineers.ts";
import { builtinFamilyRegistry } from "../families/builtins.ts";
import { lineFamily } from "../families/_test_family.ts";
import { mazeFamily } from "../families/maze/family.ts";
import { checkMaze } from "../families/maze/maze.ts";
import { engineerFamilyProblem } from "../engineer/registry.ts";
import type { Json } from "@envsmith/engine/kind";

// deno-lint-ignore no-explicit-any
const run = (k: any, p: unknown, ctx: ReturnType<typeof memoryContext>) =>
  k.run(v.parse(k.params, p), ctx);

const EASY = {
  size: 7,
  walls: { density: 0.1 },
  goal: { min_distance: 1, max_distance: 6 },
  max_steps: 60,
};

/** A maze-family setup: 12 easy mazes and a small policy trained on them. */
interface MazeFixture {
  ctx: ReturnType<typeof memoryContext>;
  // deno-lint-ignore no-explicit-any
  envs: any;
  // deno-lint-ignore no-explicit-any
  policy: any;
  opts: Parameters<typeof redesign>[2];
}

let _fixture: Promise<MazeFixture> | undefined;

/** The maze-family setup the engineer tests share, built once (training is the slow part). */
function mazeFixture(): Promise<MazeFixture> {
  _fixture ??= (async () => {
    const ctx = memoryContext("/tmp", { seed: 5 });
    const envs = await run(generate, { config: EASY, count: 12, seed: 1 }, ctx);
    const policy = await run(train, {
      envs: envs.value,
      samples: 1500,
      parallel: 8,
      steps: 32,
      hidden: [16],
      seed: 2,
    }, ctx);
    const opts = {
      engineers,
      families: builtinFamilyRegistry(),
      readBlob: ctx.readBlob,
      writeBlob: ctx.writeBlob,
    };
    return { ctx, envs, policy, opts };
  })();
  return _fixture;
}

type LevelSet = {
  level_set: {
    family: string;
    source: unknown;
    levels: { id: string; origin: string; parent: string | null }[];
  };
};

Deno.test("plr-stage and accel-stage on the maze family: a buffer of mazes scored through the family's environment, replayed by maze.generate; accel edits by the family's mutation", async () => {
  const { ctx, envs, policy, opts } = await mazeFixture();
  const ls = policy.value.level_scores;
  assert.equal(ls.pvl.length, 12);
  assert.equal(ls.gamma, 0.995);
  const plrStage = () =>
    redesign(
      {
        family: "maze",
        engineer: {
          name: "plr-stage",
          policy: policy.value,
          envs: envs.value,
          buffer: 20,
        },
        config: EASY,
        stage: 0,
      } as never,
      7,
      opts,
    );
  const plr = await plrStage();
  const set = plr.value as unknown as LevelSet;
  assert.equal(set.level_set.family, "maze");
  // 12 trained start levels + 12 new ones (replay_prob 0.5), 4 evicted
  assert.equal(set.level_set.levels.length, 20);
  const origins = (plr.report.levels as { origins: Record<string, number> })
    .origins;
  assert.equal(origins.start! + origins.new!, 20);
  assert.ok(origins.new! >= 8, JSON.stringify(origins));
  const cost = plr.report.engineer_cost as { agent_steps: number };
  assert.ok(cost.agent_steps > 0, "new levels were rolled out");
  // the same redesign again gives the same buffer (seeded)
  const again = await plrStage();
  assert.deepEqual(again.value, plr.value);
  // the next stage draws its mazes from the buffer
  const next = await run(generate, {
    config: plr.value,
    count: 30,
    seed: 1,
    stream: 1,
  }, ctx);
  const drawn = await readMazes(v.parse(MazesValueSchema, next.value), ctx);
  assert.equal(drawn.length, 30);
  const ids = new Set(set.level_set.levels.map((l) => l.id));
  for (const m of drawn) assert.ok(ids.has(mazeFamily.instanceId(m)));
  // accel-stage on the buffer: edited children, valid and unlike their parents
  const policy2 = await run(train, {
    policy: policy.value,
    envs: next.value,
    samples: 1000,
    parallel: 8,
    steps: 32,
    seed: 3,
  }, ctx);
  const accel = await redesign(
    {
      family: "maze",
      engineer: {
        name: "accel-stage",
        policy: policy2.value,
        envs: next.value,
        buffer: 60,
        edits: 5,
      },
      config: plr.value as Json,
      stage: 1,
    } as never,
    7,
    opts,
  );
  const aset = accel.value as unknown as LevelSet;
  const edited = aset.level_set.levels.filter((l) => l.origin === "edit");
  assert.ok(edited.length >= 3, `${edited.length} edited levels`);
  for (const l of edited) {
    assert.notEqual(l.id, l.parent);
    assert.ok(l.parent !== null && aset.level_set.levels.length <= 60);
  }
  const replayed = await run(generate, {
    config: accel.value,
    count: 200,
    seed: 2,
  }, ctx);
  for (
    const m of await readMazes(
      v.parse(MazesValueSchema, replayed.value),
      ctx,
    )
  ) assert.equal(checkMaze(m), undefined);
});

Deno.test("plr-stage and accel-stage on a family without a batched environment, or with MAPF-FrozenLake's box, are refused in one line", () => {
  const line = lineFamily();
  const plr = engineers.get("plr-stage")!;
  const accel = engineers.get("accel-stage")!;
  assert.match(
    engineerFamilyProblem(plr, {}, line)!,
    /^engineer plr-stage on line: family line has no batched environment \(env\)/,
  );
  assert.match(
    engineerFamilyProblem(accel, {}, line)!,
    /family line has no batched environment/,
  );
  assert.equal(engineerFamilyProblem(plr, {}, mazeFamily), null);
  assert.equal(engineerFamilyProblem(accel, {}, mazeFamily), null);
  assert.match(
    engineerFamilyProblem(plr, { box: { size: [8, 8] } }, mazeFamily)!,
    /box is MAPF-FrozenLake's, not family maze's; leave it out/,
  );
  const { mutate: _, ...noMutate } = mazeFamily;
  assert.match(
    engineerFamilyProblem(accel, {}, noMutate)!,
    /family maze has no mutate, ACCEL's edit/,
  );
  assert.equal(engineerFamilyProblem(plr, {}, noMutate), null);
});

Deno.test("probe and probe-base on the maze family: candidates are one-step moves of the family's dimensions, each rolled out through the family's environment; a family without one is refused", async () => {
  const { policy, opts } = await mazeFixture();
  const params = {
    family: "maze",
    engineer: {
      name: "probe",
      policy: policy.value,
      candidates: 4,
      probe_instances: 6,
      probe_episodes: 2,
      criterion: "learnable",
    },
    config: EASY,
    stage: 1,
  };
  const a = await redesign(params as never, 3, opts);
  const b = await redesign(params as never, 3, opts);
  assert.deepEqual(a.config, b.config);
  const events = a.report.events as { detail: string }[];
  assert.equal(events.length, 4);
  assert.match(events[0]!.detail, /^candidate 0 \(current, [0-9a-f]{12}\)/);
  // every candidate: 6 mazes x 2 episodes
  for (const e of events) {
    assert.match(e.detail, /over 6 instances, \d+ agent-steps/);
  }
  const cost = a.report.engineer_cost as {
    episodes: number;
    agent_steps: number;
  };
  assert.equal(cost.episodes, 4 * 6 * 2);
  assert.ok(cost.agent_steps > 0);
  assert.equal(
    v.safeParse(mazeFamily.schema, a.config).success,
    true,
  );
  const probe = engineers.get("probe")!;
  const base = engineers.get("probe-base")!;
  assert.match(
    engineerFamilyProblem(base, {}, lineFamily())!,
    /^engineer probe-base on line: family line has no batched environment/,
  );
  assert.equal(engineerFamilyProblem(probe, {}, mazeFamily), null);
  assert.match(
    engineerFamilyProblem(probe, { reward: { goal: 2 } }, mazeFamily)!,
    /reward is MAPF-FrozenLake's, not family maze's/,
  );
});

Deno.test("redesign on family maze takes a maze level set as config, and refuses another family's", () => {
  const schema = redesignParamsSchema(engineers, builtinFamilyRegistry());
  const set = (family: string, source: unknown) => ({
    family: "maze",
    engineer: "fixed",
    config: {
      level_set: {
        version: 1,
        family,
        source,
        instances: { $blob: "ab", size: 1, media: "x" },
        levels: [],
      },
    },
  });
  assert.equal(v.safeParse(schema, set("maze", EASY)).success, true);
  const other = v.safeParse(schema, set("line", EASY));
  assert.equal(other.success, false);
  assert.match(
    other.issues![0]!.message,
    /a level set of another family \(the node's family is maze\)/,
  );
  assert.equal(
    v.safeParse(schema, set("maze", { ...EASY, size: 99 })).success,
    false,
    "the source is checked against the family's space",
  );
});
