import assert from "node:assert/strict";
import { mapfFrozenLake } from "../families/mapf_frozenlake/family.ts";
import { lineFamily } from "../families/_test_family.ts";
import { buildMixture } from "./config_ops.ts";
import { hashString } from "../mapf/rng.ts";
import { Rng } from "../mapf/rng.ts";
import { components, parseEnvConfig } from "../schemas/env_config.ts";
import { buildContext } from "./context.ts";
import {
  BOX_DIMS,
  boxConfig,
  boxProblem,
  DEFAULT_BOX,
  drEngineer,
  familyBoxProblem,
  INTEGER_BOX_DIMS,
  sampleBox,
} from "./dr.ts";

/** Chi-square critical values at p = 0.001, by degrees of freedom. */
const CHI2_001: Record<number, number> = { 6: 22.458, 9: 27.877, 16: 39.252 };

Deno.test("dr: 10,000 draws stay in the box and every marginal is uniform (chi-square, p = 0.001)", () => {
  const rng = new Rng(12345);
  const n = 10_000;
  const draws = Array.from({ length: n }, () => sampleBox(DEFAULT_BOX, rng));
  for (const d of BOX_DIMS) {
    const [lo, hi] = DEFAULT_BOX[d]!;
    const xs = draws.map((p) => p[d]!);
    assert.ok(xs.every((x) => x >= lo && x <= hi), `${d} left [${lo}, ${hi}]`);
    let counts: number[];
    if (INTEGER_BOX_DIMS.includes(d)) {
      counts = new Array(hi - lo + 1).fill(0);
      for (const x of xs) {
        assert.ok(Number.isInteger(x), `${d} = ${x} is not an integer`);
        counts[x - lo] = counts[x - lo]! + 1;
      }
    } else {
      counts = new Array(10).fill(0);
      for (const x of xs) {
        const k = Math.min(9, Math.floor((x - lo) / (hi - lo) * 10));
        counts[k] = counts[k]! + 1;
      }
    }
    const expected = n / counts.length;
    const chi2 = counts.reduce((s, c) => s + (c - expected) ** 2 / expected, 0);
    const critical = CHI2_001[counts.length - 1]!;
    assert.ok(
      chi2 < critical,
      `${d}: chi-square ${
        chi2.toFixed(2)
      } >= ${critical} over ${counts.length} bins`,
    );
    // and it is not degenerate: every bin is used
    assert.ok(counts.every((c) => c > 0.8 * expected), `${d}: ${counts}`);
  }
});

Deno.test("dr: every box point is a valid configuration that follows the point", () => {
  const rng = new Rng(7);
  for (let i = 0; i < 300; i++) {
    const p = sampleBox(DEFAULT_BOX, rng);
    const c = boxConfig(p);
    parseEnvConfig(c);
    assert.equal(c.width, p.size);
    assert.equal(c.height, p.size);
    assert.equal(c.agents, p.agents);
    assert.equal(c.slip, p.slip);
    assert.deepEqual(c.horizon, { factor: p.horizon });
    assert.equal(c.distance.max, Math.max(2, Math.round(1.5 * p.size!)));
  }
});

Deno.test("dr engineer: a mixture of 16 fresh points per stage, seeded, ignoring the context", async () => {
  const easy = parseEnvConfig({ preset: "easy" });
  const propose = (stage: number | undefined, seed: number, type = "none") =>
    drEngineer({ family: mapfFrozenLake }).propose({
      context: buildContext(
        type as "none",
        null,
        easy,
        stage === undefined ? {} : { stage },
      ),
      config: easy,
      seed,
    });
  const a = await propose(1, 3);
  const b = await propose(1, 3, "full");
  assert.deepEqual(a.config, b.config, "the context type changes nothing");
  assert.deepEqual(a.reads, []);
  assert.equal(components(a.config).length, 16);
  assert.ok(
    components(a.config).every((c) => Math.abs(c.weight - 1 / 16) < 0.002),
  );
  const c = await propose(2, 3);
  const start = await propose(undefined, 3);
  assert.notDeepEqual(a.config, c.config, "a new draw each stage");
  assert.notDeepEqual(a.config, start.config, "the start is its own draw");
  assert.equal(a.events[0]!.type, "choice");
});

Deno.test("dr: box problems are one line naming the dimension", () => {
  assert.equal(boxProblem(DEFAULT_BOX), null);
  assert.match(boxProblem({})!, /box is empty/);
  assert.match(boxProblem({ slip: [0.3, 0.1] })!, /box\.slip is inverted/);
  assert.match(
    boxProblem({ size: [8.5, 12] })!,
    /box\.size must have integer ends/,
  );
  assert.match(
    boxProblem({ speed: [0, 1] })!,
    /box\.speed is not a box dimension/,
  );
  assert.match(boxProblem({ slip: [0, 2] })!, /upper corner .*slip/);
  assert.match(
    boxProblem({ size: [4, 8], agents: [2, 12] })!,
    /12 agents do not fit a 4x4 map/,
  );
  assert.throws(
    () => drEngineer({ family: mapfFrozenLake, box: {} }),
    /box is empty/,
  );
});

Deno.test("dr through the family: the same draws as the box of mapf/box.ts", async () => {
  const easy = parseEnvConfig({ preset: "easy" });
  const rng = new Rng(11, hashString("dr-engineer"), 2);
  const parts = Array.from({ length: 16 }, () => ({
    weight: 1,
    config: boxConfig(sampleBox(DEFAULT_BOX, rng)),
  }));
  const expected = buildMixture(parts, { maxComponents: 16 });
  const got = await drEngineer({ family: mapfFrozenLake }).propose({
    context: buildContext("none", null, easy, { stage: 1 }),
    config: easy,
    seed: 11,
  });
  assert.deepEqual(got.config, expected);
});

Deno.test("dr on another family: its box from the declared bounds, refused outside them", async () => {
  const line = lineFamily();
  const e = drEngineer({ family: line, draws: 4 });
  const ctx = { json: { stage: 0 }, text: "" } as never;
  const p = await e.propose({ context: ctx, config: {} as never, seed: 3 });
  const c = p.config as unknown as { length: number; gaps: number };
  assert.ok(c.length >= 1 && c.length <= 9 && c.gaps >= 0 && c.gaps <= 3);
  const again = await e.propose({ context: ctx, config: {} as never, seed: 3 });
  assert.deepEqual(again.config, p.config);
  assert.equal(
    familyBoxProblem(line, { length: [2, 12] }),
    "box.length = [2, 12] leaves the dimension's bounds 1..9",
  );
  assert.equal(
    familyBoxProblem(line, { size: [2, 4] }),
    "box.size is not a dimension of line (dimensions: length, gaps)",
  );
});
