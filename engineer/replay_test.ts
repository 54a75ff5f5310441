import assert from "node:assert/strict";
import { lineFamily } from "../families/_test_family.ts";
import type { EnvironmentFamily } from "../families/family.ts";
import { builtinEngineerRegistry } from "./builtins.ts";
import { engineerFamilyProblem } from "./registry.ts";
import {
  configId,
  isMixture,
  parseEnvConfig,
  PRESETS,
} from "../schemas/mod.ts";
import { buildContext } from "./context.ts";
import { diagnose } from "./diagnose.ts";
import {
  familyReplayEngineer,
  REPLAY_PARAMS,
  replayBuffer,
  replayEngineer,
  replayProbabilities,
} from "./replay.ts";
import { type CurriculumDim, step } from "./config_ops.ts";
import { slipHoleEpisode, successEpisode } from "./_fixtures.ts";
import type { Findings } from "../schemas/mod.ts";

const easy = PRESETS.easy;
const a = { ...easy, agents: 3 };
const b = { ...easy, agents: 4 };

function findingsFor(config: typeof easy, success: number): Findings {
  const eps = [];
  for (let i = 0; i < 20; i++) {
    eps.push(i < success * 20 ? successEpisode() : slipHoleEpisode());
  }
  return diagnose(eps, { seed: 1, config });
}

/** Stage 2's full context: easy at 0.95, then a at 0.5, now b at 0.1. */
function thirdStage() {
  const history = [
    { findings: findingsFor(easy, 0.95), config: easy },
    { findings: findingsFor(a, 0.5), config: a },
  ];
  return buildContext("full", findingsFor(b, 0.1), b, { history, stage: 2 });
}

Deno.test("replay buffer collects scored levels from history and the current stats", () => {
  const context = thirdStage();
  const { levels, reads, stage } = replayBuffer({
    context,
    config: b,
    seed: 1,
  });
  assert.equal(stage, 2);
  assert.deepEqual(reads, ["history.entries", "stats.components"]);
  assert.deepEqual(
    levels.map((
      l,
    ) => [
      l.config.agents,
      l.success,
      l.score === null ? null : Math.round(l.score * 1e4) / 1e4,
      l.lastSeen,
    ]),
    [[2, 0.95, 0.0475, 0], [3, 0.5, 0.25, 1], [4, 0.1, 0.09, 2]],
  );
  const p = replayProbabilities(levels, stage);
  assert.ok(Math.abs(p.reduce((x, y) => x + y, 0) - 1) < 1e-9);
  // Rank: 0.25 (agents 3) > 0.09 (agents 4) > 0.0475 (agents 2); staleness lifts the oldest.
  assert.ok(p[1]! > p[2]! && p[1]! > p[0]!);
  const noStale = replayProbabilities(
    levels.map((l) => ({ ...l, lastSeen: 2 })),
    2,
  );
  assert.ok(p[0]! > noStale[0]!);
});

Deno.test("replay proposes a seeded mixture of replayed levels plus an edited one", async () => {
  const context = thirdStage();
  const p1 = await replayEngineer().propose({ context, config: b, seed: 7 });
  const p2 = await replayEngineer().propose({ context, config: b, seed: 7 });
  assert.equal(JSON.stringify(p1), JSON.stringify(p2));
  parseEnvConfig(p1.config);
  assert.ok(isMixture(p1.config));
  assert.match(p1.rationale, /buffer of 3 levels/);
  // The highest-potential level (agents 3) is replayed most often across seeds.
  const count = new Map<number, number>();
  for (let seed = 0; seed < 60; seed++) {
    const p = await replayEngineer().propose({ context, config: b, seed });
    if (!isMixture(p.config)) continue;
    for (const c of p.config.mixture) {
      if ([easy, a, b].some((x) => configId(x) === configId(c.config))) {
        count.set(c.config.agents, (count.get(c.config.agents) ?? 0) + 1);
      }
    }
  }
  assert.ok(
    (count.get(3) ?? 0) > (count.get(2) ?? 0),
    JSON.stringify([...count]),
  );
});

Deno.test("replay without scores (context none) replays the current config and edits it", async () => {
  const context = buildContext("none", null, easy);
  const p = await replayEngineer().propose({ context, config: easy, seed: 3 });
  assert.deepEqual(p.reads, []);
  parseEnvConfig(p.config);
  const ids = isMixture(p.config)
    ? p.config.mixture.map((c) => configId(c.config))
    : [configId(p.config)];
  assert.ok(ids.includes(configId(easy)));
});

Deno.test("replay always adds a new level: an edit at a bound moves elsewhere, and stages draw different edits", async () => {
  const rationales = new Set<string>();
  for (let seed = 0; seed < 12; seed++) {
    for (const stage of [0, 1, 2]) {
      const context = buildContext("full", null, easy, { stage });
      const p = await replayEngineer().propose({ context, config: easy, seed });
      // The easy preset sits at the lower bound of several dimensions; the
      // edited level is never the replayed one again.
      assert.ok(isMixture(p.config), `seed ${seed} stage ${stage}`);
      assert.ok(
        p.config.mixture.some((c) => configId(c.config) !== configId(easy)),
      );
      rationales.add(p.rationale.replace(/^.*edited/, ""));
    }
  }
  assert.ok(rationales.size >= 6, `only ${rationales.size} distinct edits`);
});

Deno.test("replay edits the best-scored of the levels it drew (ACCEL), by one curriculum step, at weight 0.3", async () => {
  const context = thirdStage();
  const byId = new Map([easy, a, b].map((c) => [configId(c), c]));
  let distinctScores = 0;
  for (let seed = 0; seed < 40; seed++) {
    const p = await replayEngineer().propose({ context, config: b, seed });
    const m =
      /replayed (.+); edited (\w+) with (\w+) (harder|easier) \(weight 0\.3\)\.$/
        .exec(p.rationale);
    assert.ok(m, p.rationale);
    const drawn = [...m[1]!.matchAll(/(\w+) \(score ([\d.]+|unseen)/g)].map((
      x,
    ) => ({ id: x[1]!, score: x[2] === "unseen" ? 0.25 : Number(x[2]) }));
    assert.equal(drawn.length, REPLAY_PARAMS.draws);
    const best = drawn.reduce((x, y) => (y.score > x.score ? y : x));
    if (drawn[0]!.score !== drawn[1]!.score) distinctScores++;
    // the edited level is the best-scored drawn one...
    assert.equal(m[2], best.id, p.rationale);
    // ...stepped once along the named dimension, added at weight 0.3
    const edited = step(
      byId.get(best.id)!,
      m[3] as CurriculumDim,
      m[4] === "harder" ? 1 : -1,
    );
    assert.ok(isMixture(p.config));
    const added = p.config.mixture.find((c) =>
      configId(c.config) === configId(edited)
    );
    assert.ok(added, `${p.rationale}: no component ${configId(edited)}`);
    assert.equal(added.weight, REPLAY_PARAMS.editWeight);
  }
  // the check can tell best from worst: most draws differ in score
  assert.ok(distinctScores >= 30, `${distinctScores}`);
});

Deno.test("replay on another family: the current components scored by the findings' success, one edited by a step of a stepped dimension and mixed in at weight 0.3; a family without mix is refused", async () => {
  type C = { length: number; gaps: number } | {
    mixture: { weight: number; config: { length: number; gaps: number } }[];
  };
  const base = lineFamily();
  const family = {
    ...base,
    mix: (parts: readonly { weight: number; config: unknown }[]) =>
      ({ mixture: parts }) as never,
    components: (c: C) =>
      "mixture" in c ? c.mixture : [{ weight: 1, config: c }],
  } as unknown as EnvironmentFamily;
  const e = familyReplayEngineer(family);
  const cur = { length: 5, gaps: 1 };
  const input = {
    context: {
      json: { type: "stats", stage: 2, stats: { success_rate: 0.5 } },
      text: "",
    } as never,
    config: cur as never,
    seed: 3,
  };
  const p = await e.propose(input);
  const parts = (p.config as unknown as {
    mixture: { weight: number; config: { length: number; gaps: number } }[];
  }).mixture;
  assert.equal(parts.length, 2);
  assert.deepEqual(parts[0], { weight: 0.7, config: cur });
  assert.equal(parts[1]!.weight, 0.3);
  const moved = Math.abs(parts[1]!.config.length - 5) +
    Math.abs(parts[1]!.config.gaps - 1);
  assert.equal(moved, 1, "one step of one dimension");
  assert.match(p.rationale, /buffer of 1 levels \(success 0\.500\)/);
  assert.deepEqual(p.reads, ["stats.success_rate"]);
  assert.deepEqual((await e.propose(input)).config, p.config, "seeded");
  const kind = builtinEngineerRegistry().get("replay")!;
  assert.match(
    engineerFamilyProblem(kind, {}, base)!,
    /^engineer replay on line: family line has no mix \(weighted mixtures of configurations\)/,
  );
  assert.equal(engineerFamilyProblem(kind, {}, family), null);
});
