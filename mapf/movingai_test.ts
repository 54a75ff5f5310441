import assert from "node:assert/strict";
import {
  exportMap,
  exportScen,
  importMovingAI,
  MovingAIError,
  parseMap,
} from "./movingai.ts";
import { generate } from "./generator.ts";

Deno.test("MovingAI export -> import round-trips generated instances", () => {
  const { instances } = generate({ preset: "hard" }, { count: 4, seed: 8 });
  for (const inst of instances) {
    const map = exportMap(inst);
    const scen = exportScen(inst, "hard.map");
    assert.ok(
      map.startsWith(
        `type octile\nheight ${inst.height}\nwidth ${inst.width}\nmap\n`,
      ),
    );
    const back = importMovingAI(map, scen, {
      id: inst.id,
      holes: inst.holes,
      slip: inst.slip,
    });
    assert.deepEqual(back.cells, inst.cells);
    assert.deepEqual(back.starts, inst.starts);
    assert.deepEqual(back.goals, inst.goals);
    assert.ok(back.reference, "imported instances get a reference");
    assert.ok(back.reference!.soc <= inst.reference!.soc + 50);
    // scen columns: x is the column, y the row; optimal length is the BFS distance
    const first = scen.split("\n")[1]!.split("\t");
    assert.equal(Number(first[4]), inst.starts[0]![1]);
    assert.equal(Number(first[5]), inst.starts[0]![0]);
  }
});

Deno.test("MovingAI terrain mapping and the agents option", () => {
  const map = "type octile\nheight 2\nwidth 4\nmap\n.GS@\nOTW.\n";
  assert.deepEqual(parseMap(map).cells, ["...#", "##H."]);
  const scen =
    "version 1\n0\tm.map\t4\t2\t0\t0\t3\t1\t4\n0\tm.map\t4\t2\t1\t0\t2\t0\t1\n";
  const one = importMovingAI(map, scen, { agents: 1 });
  assert.deepEqual(one.starts, [[0, 0]]);
  assert.deepEqual(one.goals, [[1, 3]]);
  assert.throws(
    () => parseMap("type octile\nheight 100\nwidth 100\nmap\n"),
    /64x64/,
  );
  assert.throws(
    () => parseMap("type octile\nheight 1\nwidth 2\nmap\n.x\n"),
    MovingAIError,
  );
  assert.throws(
    () => importMovingAI(map, "version 1\n0\tm\t4\t2\t9\t0\t0\t0\t1\n"),
    /start_x 9/,
  );
  assert.throws(() => importMovingAI(map, "version 1\n"), /no agents/);
});
