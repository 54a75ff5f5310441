import assert from "node:assert/strict";
import { parseSizeForm } from "../schemas/size_form.ts";
import { compileInstance } from "./instance.ts";
import { needsWait } from "./needs_wait.ts";
import {
  generateSizeForm,
  probeWaits,
  sizeQuotas,
  waitRatioProblem,
} from "./size_generator.ts";

Deno.test("size generator: quotas hold the data shares and the wait ratios exactly (up to rounding)", () => {
  const form = parseSizeForm({
    sizes: {
      "3x3": { data_ratio: 0.2, wait_ratio: 0.5 },
      "5x5": { data_ratio: 0.3, wait_ratio: 0 },
      "7x7": { data_ratio: 0.5, wait_ratio: 1 },
    },
  });
  // components: 3x3 wait, 3x3 free, 5x5 free, 7x7 wait
  assert.deepEqual(sizeQuotas(form, 100), [10, 10, 30, 50]);
  assert.deepEqual(sizeQuotas(form, 7), [1, 0, 2, 4]);
  assert.equal(sizeQuotas(form, 7).reduce((a, b) => a + b, 0), 7);
});

Deno.test("size generator: every instance's wait class matches its verdict, the sizes and ratios are the form's, and rejections are counted", () => {
  const form = parseSizeForm({
    sizes: {
      "3x3": { data_ratio: 0.5, hole_ratio: 0.1, wait_ratio: 0.5 },
      "5x5": { data_ratio: 0.5, hole_ratio: 0.2, wait_ratio: 0.25 },
    },
  });
  const { instances, report } = generateSizeForm(form, { count: 40, seed: 3 });
  assert.equal(instances.length, 40);
  const bySize: Record<string, { n: number; wait: number }> = {};
  for (const inst of instances) {
    const key = `${inst.width}x${inst.height}`;
    const v = needsWait(compileInstance(inst))!;
    bySize[key] ??= { n: 0, wait: 0 };
    bySize[key].n++;
    if (v.needs_wait) bySize[key].wait++;
    // the reference is CBS's optimum, and the horizon fits it
    assert.equal(inst.reference!.solver, "cbs");
    assert.equal(inst.reference!.soc, v.solution.soc);
    assert.equal(inst.horizon, Math.ceil(3 * inst.reference!.makespan));
    assert.equal(inst.starts.length, 2);
  }
  assert.deepEqual(bySize, {
    "3x3": { n: 20, wait: 10 },
    "5x5": { n: 20, wait: 5 },
  });
  assert.equal(report.sizes["3x3"]!.need_wait, 10);
  assert.equal(report.sizes["5x5"]!.wait_ratio, 0.25);
  // instances needing a wait are rarer than those needing none: draws were rejected for it
  assert.ok(report.rejected.no_wait > 0);
  assert.equal(
    report.attempts - report.accepted,
    Object.values(report.rejected).reduce((a, b) => a + b, 0),
  );
});

Deno.test("size generator: same form and seed give the same instances; another seed others", () => {
  const form = parseSizeForm({ sizes: { "4x4": { wait_ratio: 0.5 } } });
  const a = generateSizeForm(form, { count: 6, seed: 11 }).instances;
  const b = generateSizeForm(form, { count: 6, seed: 11 }).instances;
  const c = generateSizeForm(form, { count: 6, seed: 12 }).instances;
  assert.deepEqual(a, b);
  assert.notDeepEqual(a, c);
});

Deno.test("size generator: the probe finds both classes on an ordinary board, and refuses a wait ratio a single agent cannot reach", () => {
  const two = parseSizeForm({ sizes: { "6x6": { wait_ratio: 0.5 } } });
  const p = probeWaits(two, "6x6");
  assert.equal(p.wait && p.free, true);
  assert.equal(waitRatioProblem(two, "6x6"), null);
  // a resolved form the schema would refuse: the probe refuses it on its own evidence
  const one = { ...two, agents: 1 };
  const q = probeWaits(one, "6x6");
  assert.equal(q.wait, false);
  assert.equal(q.draws, 200);
  assert.match(
    waitRatioProblem(one, "6x6")!,
    /wait_ratio 0\.5 cannot be reached: none of 200 probe draws of a 6x6 board with 1 agents/,
  );
  assert.equal(
    waitRatioProblem(
      {
        ...one,
        sizes: { ...one.sizes, "6x6": { ...one.sizes["6x6"], wait_ratio: 0 } },
      },
      "6x6",
    ),
    null,
  );
});
