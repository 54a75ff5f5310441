import assert from "node:assert/strict";
import { parseEnvConfig } from "./env_config.ts";
import {
  clampSizeForm,
  formComponents,
  parseSizeForm,
  SizeFormError,
  sizeFormId,
  sizeFormMixture,
} from "./size_form.ts";

Deno.test("size form: defaults (2 agents, lethal holes, horizon x3) and absent sizes resolve to data_ratio 0", () => {
  const f = parseSizeForm({
    sizes: { "3x3": { data_ratio: 0.25, wait_ratio: 0.4 }, "5x5": {} },
  });
  assert.equal(f.agents, 2);
  assert.equal(f.holes, "lethal");
  assert.deepEqual(f.horizon, { factor: 3 });
  assert.deepEqual(f.sizes["3x3"], {
    data_ratio: 0.25,
    hole_ratio: 0.1,
    wait_ratio: 0.4,
  });
  // a size written without data_ratio is drawn with ratio 1
  assert.equal(f.sizes["5x5"].data_ratio, 1);
  assert.equal(f.sizes["10x10"].data_ratio, 0);
  // the same form written two ways has one id
  assert.equal(
    sizeFormId(f),
    sizeFormId(parseSizeForm({
      agents: 2,
      holes: "lethal",
      sizes: {
        "5x5": { data_ratio: 1 },
        "3x3": { wait_ratio: 0.4, data_ratio: 0.25, hole_ratio: 0.1 },
      },
    })),
  );
});

Deno.test("size form: a ratio outside its bounds, an unknown size, and no drawn size are refused, each naming the field", () => {
  const err = (x: unknown) => {
    try {
      parseSizeForm(x);
    } catch (e) {
      assert.ok(e instanceof SizeFormError);
      return e.message;
    }
    assert.fail("accepted");
  };
  assert.match(
    err({ sizes: { "3x3": { wait_ratio: 1.5 } } }),
    /sizes\.3x3\.wait_ratio: wait_ratio must be in 0\.\.1 \(got 1\.5\)/,
  );
  assert.match(
    err({ sizes: { "4x4": { data_ratio: -0.1 } } }),
    /sizes\.4x4\.data_ratio: .*got -0\.1/,
  );
  assert.match(
    err({ sizes: { "4x4": { hole_ratio: 0.8 } } }),
    /hole_ratio must be in 0\.\.0\.6 \(got 0\.8\)/,
  );
  assert.match(
    err({ sizes: { "11x11": { data_ratio: 1 } } }),
    /unknown sizes field "11x11"/,
  );
  assert.match(
    err({ sizes: { "3x3": { data_ratio: 0 } } }),
    /every data_ratio is 0/,
  );
  assert.match(
    err({ agents: 1, sizes: { "3x3": { wait_ratio: 0.3 } } }),
    /wait_ratio 0\.3 cannot be reached: a single agent never needs a wait/,
  );
  assert.match(
    err({ agents: 5, sizes: { "3x3": { hole_ratio: 0.2 } } }),
    /5 agents need 10 distinct start and goal cells, but a 3x3 board/,
  );
});

Deno.test("size form: components split each drawn size into a wait class and a no-wait class, weighted by share x wait ratio, and form a valid mixture", () => {
  const f = parseSizeForm({
    sizes: {
      "3x3": { data_ratio: 0.25, wait_ratio: 0.25 },
      "6x6": { data_ratio: 0.75, wait_ratio: 0 },
    },
  });
  const c = formComponents(f);
  assert.deepEqual(
    c.map((x) => [x.size, x.wait, x.weight]),
    [["3x3", true, 0.0625], ["3x3", false, 0.1875], ["6x6", false, 0.75]],
  );
  assert.equal(c[0]!.config.interaction, 1);
  assert.equal(c[1]!.config.interaction, 0.5);
  assert.equal(c[2]!.config.width, 6);
  assert.equal(c[2]!.config.distance.max, 10);
  const m = parseEnvConfig(sizeFormMixture(f));
  assert.ok("mixture" in m && m.mixture.length === 3);
});

Deno.test("size form: clamp repairs an untrusted reply and says what it changed; agents stay", () => {
  const prev = parseSizeForm({ sizes: { "3x3": { data_ratio: 1 } } });
  const { form, adjustments } = clampSizeForm({
    sizes: {
      "3x3": { data_ratio: 2, wait_ratio: "0.5", hole_ratio: -1 },
      "12x12": { data_ratio: 1 },
    },
    color: "red",
  }, prev);
  assert.deepEqual(form.sizes["3x3"], {
    data_ratio: 1,
    hole_ratio: 0,
    wait_ratio: 0.5,
  });
  assert.equal(form.agents, 2);
  assert.ok(adjustments.some((a) => a.includes("data_ratio: 2 clamped to 1")));
  assert.ok(adjustments.some((a) => a.includes("12x12: unknown size dropped")));
  assert.ok(adjustments.some((a) => a.includes("color: unknown field")));
  // all zero keeps the previous data ratios
  const z = clampSizeForm({ sizes: { "3x3": { data_ratio: 0 } } }, prev);
  assert.equal(z.form.sizes["3x3"].data_ratio, 1);
  assert.ok(z.adjustments.some((a) => a.includes("every data_ratio is 0")));
  // a board too holey for the agents gets the largest hole ratio that fits
  const h = clampSizeForm({
    agents: 4,
    sizes: { "3x3": { data_ratio: 1, hole_ratio: 0.6 } },
  }, prev);
  assert.equal(h.form.sizes["3x3"].hole_ratio, 0.11);
});
