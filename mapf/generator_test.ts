import { scaledMs } from "../engine/testdata/load.ts";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { generate, GenerationError, staticInfeasibility } from "./generator.ts";
import {
  compileInstance,
  type Instance,
  instancesToJsonLines,
} from "./instance.ts";
import { solve } from "./solve.ts";
import { pathsToPlan, replayPlan } from "./replay.ts";
import { connectedComponents, FREE, HOLE, WALL } from "./grid.ts";
import { configId, EnvConfigError, PRESETS } from "../schemas/mod.ts";
import { generateMap, partitionLines } from "./map_gen.ts";
import { Rng } from "./rng.ts";

Deno.test("same config and seed give byte-identical instances; runs are prefixes", () => {
  const a = instancesToJsonLines(
    generate({ preset: "medium" }, { count: 12, seed: 5 }).instances,
  );
  const b = instancesToJsonLines(
    generate({ preset: "medium" }, { count: 12, seed: 5 }).instances,
  );
  assert.equal(a, b);
  const prefix = instancesToJsonLines(
    generate({ preset: "medium" }, { count: 5, seed: 5 }).instances,
  );
  assert.ok(a.startsWith(prefix));
  const tail =
    generate({ preset: "medium" }, { count: 7, seed: 5, startIndex: 5 })
      .instances;
  assert.equal(prefix + instancesToJsonLines(tail), a);
  const c = instancesToJsonLines(
    generate({ preset: "medium" }, { count: 12, seed: 6 }).instances,
  );
  assert.notEqual(a, c);
  const first = generate({ preset: "easy" }, { count: 1, seed: 0 })
    .instances[0]!;
  assert.equal(first.id, `${configId(PRESETS.easy)}-0-0`);
  // pinned digests: the same bytes on every machine; a change here must be deliberate
  const digest = (preset: "easy" | "hard") =>
    createHash("sha256").update(
      instancesToJsonLines(
        generate({ preset }, { count: 5, seed: 0 }).instances,
      ),
    ).digest("hex");
  assert.equal(
    digest("easy"),
    "2f5ecfcb54b4683d90138538c9118e4f5b4d1153d7614e295ae3699504ad4cfa",
  );
  assert.equal(
    digest("hard"),
    "ae8429e456f599d18eda7ac242ef3c8552cfcdec831a95f1525b27ffc500802d",
  );
});

Deno.test("every instance is solvable within its horizon and its reference is a real plan", () => {
  for (const preset of ["easy", "medium", "hard"] as const) {
    const { instances } = generate({ preset }, { count: 6, seed: 2 });
    for (const inst of instances) {
      assert.ok(inst.reference);
      assert.ok(inst.reference.makespan <= inst.horizon);
      const sol = solve(inst)!;
      assert.ok(sol, inst.id);
      const ep = replayPlan(inst, pathsToPlan(sol.paths, inst.width), {
        noSlip: true,
      });
      assert.equal(ep.outcome, "success");
      // start-goal distances within the configured range
      const c = compileInstance(inst);
      const { min, max } = PRESETS[preset].distance;
      for (let a = 0; a < c.agents; a++) {
        const d = c.dist[a * c.cellCount + c.starts[a]!]!;
        assert.ok(d >= min && d <= max, `${inst.id} agent ${a} distance ${d}`);
        assert.ok(sol.paths[a]!.length - 1 >= d);
      }
      // starts and goals all distinct
      const cells = [...inst.starts, ...inst.goals].map(([r, col]) =>
        r * inst.width + col
      );
      assert.equal(new Set(cells).size, cells.length);
      // horizon = ceil(factor * makespan)
      const f = (PRESETS[preset].horizon as { factor: number }).factor;
      assert.equal(
        inst.horizon,
        Math.max(1, Math.ceil(f * inst.reference.makespan - 1e-9)),
      );
    }
  }
});

Deno.test("absolute horizons: plans longer than the horizon are rejected and counted", () => {
  const { instances, report } = generate(
    {
      width: 10,
      height: 10,
      agents: 4,
      distance: { min: 8, max: 14 },
      horizon: { steps: 12 },
    },
    { count: 20, seed: 3 },
  );
  assert.equal(instances.length, 20);
  for (const inst of instances) {
    assert.equal(inst.horizon, 12);
    assert.ok(inst.reference!.makespan <= 12);
  }
  assert.ok(report.rejected.horizon > 0, JSON.stringify(report.rejected));
  assert.equal(
    report.attempts,
    report.accepted + Object.values(report.rejected).reduce((a, b) => a + b, 0),
  );
});

Deno.test("interaction raises the measured path crossings", () => {
  const base = {
    width: 10,
    height: 10,
    agents: 6,
    hole_density: 0.05,
    distance: { min: 4, max: 12 },
  };
  const lo =
    generate({ ...base, interaction: 0 }, { count: 40, seed: 9 }).report.mean
      .interaction;
  const hi =
    generate({ ...base, interaction: 1 }, { count: 40, seed: 9 }).report.mean
      .interaction;
  assert.ok(hi > lo + 0.15, `interaction 0 -> ${lo}, 1 -> ${hi}`);
});

Deno.test("map generation: hole density, clustering, walls and corridors", () => {
  const rng = new Rng(4);
  const count = (g: Uint8Array, code: number) =>
    g.reduce((s, x) => s + (x === code ? 1 : 0), 0);
  const adjacency = (g: Uint8Array, W: number) => {
    let adj = 0;
    for (let i = 0; i < g.length; i++) {
      if (g[i] !== HOLE) continue;
      if (i % W < W - 1 && g[i + 1] === HOLE) adj++;
      if (i + W < g.length && g[i + W] === HOLE) adj++;
    }
    return adj;
  };
  let scattered = 0, clustered = 0;
  for (let k = 0; k < 20; k++) {
    const m0 = generateMap({
      ...PRESETS.easy,
      width: 16,
      height: 16,
      hole_density: 0.2,
      hole_clustering: 0,
    }, rng);
    const m1 = generateMap({
      ...PRESETS.easy,
      width: 16,
      height: 16,
      hole_density: 0.2,
      hole_clustering: 1,
    }, rng);
    assert.equal(count(m0.grid, HOLE), Math.round(0.2 * 256));
    assert.equal(count(m1.grid, HOLE), m1.holes);
    scattered += adjacency(m0.grid, 16);
    clustered += adjacency(m1.grid, 16);
  }
  assert.ok(
    clustered > 2 * scattered,
    `adjacent hole pairs: ${scattered} vs ${clustered}`,
  );
  const walls = generateMap({
    ...PRESETS.easy,
    width: 10,
    height: 10,
    walls: 0.3,
    hole_density: 0,
  }, rng);
  assert.equal(count(walls.grid, WALL), 30);
  // corridors: full lines with doors, rooms stay connected
  const cfg = {
    ...PRESETS.easy,
    width: 16,
    height: 16,
    corridors: 1,
    hole_density: 0.3,
    walls: 0.1,
  };
  assert.equal(partitionLines(cfg), 4);
  for (let k = 0; k < 10; k++) {
    const m = generateMap({ ...cfg, walls: 0, hole_density: 0 }, rng);
    assert.equal(m.lines, 4);
    const { sizes } = connectedComponents(m.grid, 16, 16);
    assert.equal(sizes.length, 1, "doors keep every room reachable");
    assert.equal(sizes[0], count(m.grid, FREE));
  }
  assert.equal(partitionLines({ ...cfg, corridors: 0 }), 0);
});

Deno.test("mixtures: components drawn by weight, ids and per-component reports", () => {
  const mix = {
    mixture: [
      { weight: 3, config: { preset: "easy" as const } },
      { weight: 1, config: { preset: "easy" as const, agents: 4, slip: 0.2 } },
    ],
  };
  const { instances, report } = generate(mix, { count: 200, seed: 1 });
  const second = instances.filter((i) => i.stats!.component === 1);
  assert.ok(
    Math.abs(second.length - 50) < 4 * Math.sqrt(200 * 0.25 * 0.75),
    `${second.length}`,
  );
  for (const i of second) {
    assert.equal(i.starts.length, 4);
    assert.equal(i.slip, 0.2);
    assert.equal(i.config, configId({ preset: "easy", agents: 4, slip: 0.2 }));
  }
  assert.equal(report.components.length, 2);
  assert.equal(report.components[1]!.accepted, second.length);
  assert.equal(report.config_id, configId(mix));
});

Deno.test("suite seed space is disjoint from training seeds", () => {
  const train = generate({ preset: "easy" }, { count: 30, seed: 0 }).instances;
  const suite =
    generate({ preset: "easy" }, { count: 30, seed: 0, suite: "base" })
      .instances;
  const key = (i: Instance) => JSON.stringify([i.cells, i.starts, i.goals]);
  const seen = new Set(train.map(key));
  assert.equal(suite.filter((i) => seen.has(key(i))).length, 0);
  assert.equal(suite[3]!.id, "base-3");
  assert.equal(suite[3]!.suite, "base");
  assert.throws(
    () => generate({ preset: "easy" }, { count: 1, seed: 2 ** 31 }),
    RangeError,
  );
});

Deno.test("impossible configs fail fast with a reason", () => {
  // static: too many agents for the free cells
  const t0 = performance.now();
  assert.throws(
    () =>
      generate({ width: 8, height: 8, agents: 30, walls: 0.2 }, {
        count: 5,
        seed: 1,
      }),
    (e: unknown) =>
      e instanceof GenerationError && /free cells/.test(e.message) &&
      e.reason === "space",
  );
  assert.ok(
    staticInfeasibility({
      ...PRESETS.easy,
      horizon: { steps: 3 },
      distance: { min: 5, max: 9 },
    }),
  );
  // dynamic: a distance range that no 4x4 map can offer
  assert.throws(
    () =>
      generate({
        width: 4,
        height: 4,
        agents: 2,
        hole_density: 0.3,
        distance: { min: 12, max: 14 },
      }, { count: 3, seed: 1 }),
    (e: unknown) =>
      e instanceof GenerationError && e.reason === "placement" &&
      /distance 12..14/.test(e.message) &&
      e.report.attempts === 100,
  );
  // dynamic: every cell a start or goal, and no time to rotate
  assert.throws(
    () =>
      generate({
        width: 4,
        height: 4,
        agents: 8,
        hole_density: 0,
        distance: { min: 3, max: 6 },
        horizon: { steps: 3 },
      }, {
        count: 2,
        seed: 1,
        maxAttempts: 20,
      }),
    (e: unknown) =>
      e instanceof GenerationError && e.report.attempts === 20 &&
      e.report.rejected.placement + e.report.rejected.unsolved +
            e.report.rejected.horizon === 20,
  );
  assert.ok(performance.now() - t0 < scaledMs(5000));
  assert.throws(
    () => generate({ width: 100 }, { count: 1, seed: 1 }),
    EnvConfigError,
  );
  assert.throws(
    () => generate({ preset: "easy" }, { count: -1, seed: 1 }),
    RangeError,
  );
});

Deno.test("abort signal stops a run", () => {
  const ctl = new AbortController();
  let seen = 0;
  assert.throws(() =>
    generate({ preset: "easy" }, {
      count: 50,
      seed: 1,
      signal: ctl.signal,
      onProgress: (done) => {
        seen = done;
        if (done === 3) ctl.abort();
      },
    })
  );
  assert.equal(seen, 3);
});
