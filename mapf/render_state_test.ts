import assert from "node:assert/strict";
import { renderEpisode, renderState } from "./render_state.ts";
import { renderSvg } from "./render_svg.ts";
import { replayPlan } from "./replay.ts";
import { DOWN, LEFT, RIGHT, STAY } from "./grid.ts";
import { gridInstance } from "./_test_grid.ts";

const inst = gridInstance(
  ["..H.", "....", "#..."],
  [[0, 0], [1, 3]],
  [[1, 1], [1, 0]],
  { id: "s", horizon: 10 },
);

Deno.test("renderState shows cells, goals, agents, agents on goals and collisions", () => {
  assert.equal(
    renderState(inst, [0, 7]),
    ["0  .  H  .", "g1 g0 .  1", "#  .  .  ."].join("\n"),
  );
  assert.equal(renderState(inst, [5, 4]).split("\n")[1], "1* 0* .  .");
  assert.equal(renderState(inst, [5, 5]).split("\n")[1], "g1 X  .  .");
});

Deno.test("renderEpisode shows the moves before a failure", () => {
  // agent 1 walks left into agent 0's path: vertex collision on (1, 1) at t=2
  const ep = replayPlan(inst, [[DOWN, RIGHT], [LEFT, LEFT]]);
  assert.equal(ep.outcome, "vertex_collision");
  const text = renderEpisode(inst, ep);
  assert.ok(
    text.startsWith(
      "Episode on s: vertex_collision at step 2 (agents 0, 1), 2 steps",
    ),
    text,
  );
  assert.ok(text.includes("t=0->1: 0:D 1:L"));
  assert.ok(text.includes("t=1->2: 0:R 1:L"));
  assert.ok(text.endsWith("g1 X  .  .\n#  .  .  ."), text);
  // a bump is shown as "stayed"
  const ep2 = replayPlan(inst, [[LEFT, STAY], [STAY]]);
  assert.ok(renderEpisode(inst, ep2, { at: 1 }).includes("0:L(stayed)"));
});

Deno.test("renderSvg draws every cell kind, goals, agents and paths deterministically", () => {
  const svg = renderSvg(inst, { paths: [[0, 4, 5]] });
  assert.ok(svg.startsWith("<svg xmlns="));
  assert.equal((svg.match(/fill="#1d4e89"/g) ?? []).length, 1); // one hole
  assert.equal((svg.match(/fill="#7a7a7a"/g) ?? []).length, 1); // one wall
  assert.equal((svg.match(/<circle /g) ?? []).length, 2);
  assert.equal((svg.match(/<polyline /g) ?? []).length, 1);
  assert.ok(svg.includes('points="12,12 12,36 36,36"'));
  assert.equal(svg, renderSvg(inst, { paths: [[0, 4, 5]] }));
  assert.ok(
    renderSvg({ ...inst, id: "<&>" }).includes("<title>&lt;&amp;&gt;</title>"),
  );
});
