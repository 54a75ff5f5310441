import assert from "node:assert/strict";
import { buildContext, CONTEXT_TYPES, renderContext } from "./context.ts";
import { diagnose } from "./diagnose.ts";
import { PRESETS } from "../schemas/mod.ts";
import {
  corridorCollisionEpisode,
  oscillationTimeoutEpisode,
  slipHoleEpisode,
  successEpisode,
} from "./_fixtures.ts";

function _findings(seed = 1) {
  const eps = [successEpisode(), successEpisode()];
  for (let i = 0; i < 6; i++) eps.push(slipHoleEpisode());
  for (let i = 0; i < 3; i++) eps.push(corridorCollisionEpisode());
  eps.push(oscillationTimeoutEpisode());
  return diagnose(eps, { seed, config: PRESETS.easy, maxCases: 6 });
}

Deno.test("each context type exposes exactly its sections", () => {
  const f = _findings();
  const history = [{ findings: f }];
  const present = Object.fromEntries(CONTEXT_TYPES.map((t) => {
    const c =
      buildContext(t, f, PRESETS.easy, { history, budget: 100_000 }).json;
    return [
      t,
      ["stats", "failures", "behavior", "history"].filter((k) => k in c).join(
        ",",
      ),
    ];
  }));
  assert.deepEqual(present, {
    none: "",
    stats: "stats",
    failures: "failures",
    behavior: "behavior",
    full: "stats,failures,behavior,history",
  });
});

Deno.test("text shows what the sections hold, and only that", () => {
  const f = _findings();
  const none = buildContext("none", f, PRESETS.easy).text;
  assert.match(none, /No diagnosis/);
  assert.doesNotMatch(none, /success/);
  const stats = buildContext("stats", f, PRESETS.easy).text;
  assert.match(stats, /Episodes: 12; success: 16\.7%/);
  assert.doesNotMatch(stats, /Case 1/);
  const fail = buildContext("failures", f, PRESETS.easy).text;
  assert.match(
    fail,
    /10 failed episodes; failure types: hole 60%, vertex_collision 30%, timeout 10%/,
  );
  assert.match(fail, /## Case 1: hole \(the failing move slipped/);
  assert.doesNotMatch(fail, /Episodes: 12/);
  const beh = buildContext("behavior", f, PRESETS.easy).text;
  assert.match(beh, /Agents that never moved/);
  const full =
    buildContext("full", f, PRESETS.easy, { history: [{ findings: f }] }).text;
  assert.match(
    full,
    /- stage 0: config [0-9a-f]{12}: success 16\.7%.*top failure hole/,
  );
});

Deno.test("the budget drops the least informative cases first, then old history, stably", () => {
  const f = _findings();
  const history = [{ findings: f }, { findings: f }, { findings: f }];
  const big = buildContext("full", f, PRESETS.easy, {
    history,
    budget: 100_000,
  });
  assert.equal(big.json.failures!.cases.length, 6);
  const caseLen = big.text.length;
  const small = buildContext("full", f, PRESETS.easy, {
    history,
    budget: caseLen - 10,
  });
  assert.ok(small.text.length <= caseLen - 10);
  assert.equal(small.json.failures!.cases.length, 5);
  assert.equal(small.json.failures!.dropped_cases, 1);
  // The kept cases are the first (most informative) ones, in order.
  assert.deepEqual(
    small.json.failures!.cases.map((c) => c.episode),
    big.json.failures!.cases.slice(0, 5).map((c) => c.episode),
  );
  // Tight budget: every case goes, then the oldest history entries.
  const noCases = buildContext("full", f, PRESETS.easy, {
    history,
    budget: 100_000,
  });
  noCases.json.failures!.cases = [];
  const budget = renderContext(noCases.json).length - 50;
  const tight = buildContext("full", f, PRESETS.easy, { history, budget });
  assert.equal(tight.json.failures!.cases.length, 0);
  assert.equal(tight.json.history!.dropped_entries, 1);
  assert.deepEqual(tight.json.history!.entries.map((e) => e.stage), [1, 2]);
  assert.ok(tight.text.length <= budget);
  assert.match(tight.text, /\(1 older stages omitted\)/);
  // Deterministic.
  const again = buildContext("full", f, PRESETS.easy, { history, budget });
  assert.equal(again.text, tight.text);
  assert.equal(JSON.stringify(again.json), JSON.stringify(tight.json));
  // A budget below the irreducible part cuts the text and says so.
  const cut = buildContext("full", f, PRESETS.easy, { history, budget: 300 });
  assert.equal(cut.json.cut, true);
  assert.ok(cut.text.length <= 300);
  assert.match(cut.text, /\[context cut at budget\]$/);
});
