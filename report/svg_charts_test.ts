import assert from "node:assert/strict";
import { lineChart, PALETTE } from "./svg_charts.ts";
import { meanSeries } from "./html.ts";

Deno.test("charts: the x axis ends at the last data point, not at the next round tick", () => {
  const svg = lineChart([{
    group: "a",
    label: "a",
    color: PALETTE[0]!,
    points: [[0, 0.1], [600, 0.4], [1170, 0.5]],
  }], { title: "t", xLabel: "x", yLabel: "y", width: 760 });
  // plot from x = 56 to 760 - 18 = 742: the last point sits on its right edge
  const pts = /<polyline points="([^"]*)"/.exec(svg)![1]!.split(" ");
  assert.equal(pts.at(-1)!.split(",")[0], "742");
  assert.match(svg, /<path class="axis" d="M56 26V266H742"/);
  // no tick label past the data (the old axis ran to 1.4k)
  const ticks = [
    ...svg.matchAll(/text-anchor="middle" fill="#5b6573">([^<]*)</g),
  ]
    .map((m) => m[1]);
  assert.ok(!ticks.includes("1.4k") && !ticks.includes("1.2k"), ticks.join());
});

Deno.test("charts: a dashed series has a dashed legend swatch with a dot; a solid one a solid swatch", () => {
  const svg = lineChart([
    { group: "train", label: "t", color: "#111", points: [[0, 0], [1, 1]] },
    {
      group: "held-out",
      label: "h",
      color: "#222",
      points: [[0, 0], [1, 0.5]],
      dashed: true,
    },
  ], { title: "t", xLabel: "x", yLabel: "y" });
  const items = [...svg.matchAll(/<g class="legend-item([^"]*)">(.*?)<\/g>/g)];
  assert.equal(items.length, 2);
  assert.equal(items[0]![1], "");
  assert.doesNotMatch(items[0]![2]!, /dasharray/);
  assert.equal(items[1]![1], " dashed");
  assert.match(items[1]![2]!, /stroke-dasharray="5 4"/);
  assert.match(items[1]![2]!, /<circle /);
});

Deno.test("charts: 12 distinct colours, one per method of the paper table", () => {
  assert.equal(PALETTE.length, 12);
  assert.equal(new Set(PALETTE.map((c) => c.toLowerCase())).size, 12);
});

Deno.test("mean curves: runs that end a little apart keep their last values, so the mean does not jump at the end", () => {
  const run = (seed: number, end: number, last: number) => ({
    variant: { seed: String(seed) },
    label: `seed=${seed}`,
    series: "v",
    points: [0, 250, 500, 750, end].map((x, i) => ({
      stage: 0,
      update: i + 1,
      samples: x,
      success: i === 4 ? last : 0.1 * i,
    })),
    stageStarts: [0],
    nodes: ["p"],
    missing: [],
    heldout: [],
  });
  // ends 0.4 % apart (different last batch sizes); finals 0.3 and 0.9
  const { points, band } = meanSeries([run(1, 1000, 0.3), run(2, 1004, 0.9)]);
  const [x, y] = points.at(-1)!;
  assert.equal(x, 1004);
  assert.ok(Math.abs(y! - 0.6) < 1e-9, `last point ${y}, not 0.9`);
  assert.ok(band.at(-1)![2] > band.at(-1)![1], "the band is over both runs");
  // A run that stopped far short (a missing stage) is not carried on.
  const short = meanSeries([run(1, 1000, 0.3), {
    ...run(2, 1000, 0.9),
    points: run(2, 1000, 0.9).points.slice(0, 2),
  }]);
  const at = short.points.find((p) => p[0] === 750)!;
  assert.ok(Math.abs(at[1]! - 0.3) < 1e-9, `at 750: ${at[1]}, run 1 alone`);
});

Deno.test("mean curves on recorded runs: the last point of 8 seeds' mean moves no more than the steps before it, and the x axis ends at the furthest run", () => {
  // Training curves of the dr method's 8 first seeds (5 stages each),
  // recorded in the shipped bundle: the runs end 1,250,0xx-1,250,7xx
  // agent-steps apart by their last updates' sizes. The mean that averaged
  // only the runs reaching each x jumped by +0.129 at its last point.
  const rec = JSON.parse(
    Deno.readTextFileSync(
      new URL("./testdata/dr_curves.json", import.meta.url),
    ),
  ) as { runs: { seed: number; points: [number, number, number | null][] }[] };
  assert.equal(rec.runs.length, 8);
  const members = rec.runs.map((r) => ({
    variant: { seed: String(r.seed) },
    label: `seed=${r.seed}`,
    series: "dr",
    stageStarts: [0],
    nodes: ["p"],
    missing: [],
    heldout: [],
    points: r.points.map(([stage, samples, success]) => ({
      stage,
      update: 0,
      samples,
      success,
    })),
  }));
  const { points } = meanSeries(members);
  const ys = points.map((p) => p[1]!);
  const steps = ys.slice(1).map((y, i) => y - ys[i]!);
  const last = Math.abs(steps.at(-1)!);
  const before = Math.max(...steps.slice(-11, -1).map(Math.abs));
  assert.ok(
    last <= before,
    `last step ${last}, the 10 before at most ${before}`,
  );
  assert.ok(last < 0.03, `last step ${last}`);
  const furthest = Math.max(...rec.runs.map((r) => r.points.at(-1)![1]));
  assert.equal(points.at(-1)![0], furthest);
  const svg = lineChart([{
    group: "dr",
    label: "dr",
    color: PALETTE[0]!,
    points: points.map(([x, y]) => [x, y!] as [number, number]),
  }], { title: "t", xLabel: "x", yLabel: "y", width: 760 });
  const pts = /<polyline points="([^"]*)"/.exec(svg)![1]!.split(" ");
  assert.equal(
    pts.at(-1)!.split(",")[0],
    "742",
    "the last point on the right edge",
  );
});
