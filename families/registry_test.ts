import assert from "node:assert/strict";
import { lineFamily } from "./_test_family.ts";
import {
  checkedMutation,
  clampToDimension,
  dimension,
  MalformedMutationError,
  stepDimension,
} from "./family.ts";
import {
  FamilyRegistrationError,
  FamilyRegistry,
  UnknownFamilyError,
} from "./registry.ts";

Deno.test("FamilyRegistry: registers, looks up, lists in order", () => {
  const r = new FamilyRegistry();
  const a = lineFamily("line");
  const b = lineFamily("ring");
  r.register(a, "built in");
  r.register(b, "plugin.ts");
  r.register(a, "again"); // the same object again: a no-op
  assert.deepEqual(r.names(), ["line", "ring"]);
  assert.equal(r.lookup("ring"), b);
  assert.equal(r.origin("ring"), "plugin.ts");
  assert.equal(r.version, 2);
});

Deno.test("FamilyRegistry: an unknown family is one line naming the known ones", () => {
  const r = new FamilyRegistry();
  r.register(lineFamily("line"));
  r.register(lineFamily("maze"));
  let e: unknown;
  try {
    r.lookup("maz", "nodes.envs.with.family");
  } catch (err) {
    e = err;
  }
  assert.ok(e instanceof UnknownFamilyError);
  assert.equal(
    e.message,
    'nodes.envs.with.family: unknown family "maz"; known families: line, maze (a plugin module adds one by exporting families); did you mean "maze"?',
  );
  assert.equal(e.message.includes("\n"), false);
  assert.equal(e.family, "maz");
});

Deno.test("FamilyRegistry: refuses a taken name and incomplete families, naming the origin", () => {
  const r = new FamilyRegistry();
  r.register(lineFamily(), "built in");
  assert.throws(
    () => r.register(lineFamily(), "mine.ts"),
    /family "line" \(mine.ts\): the name is already registered by built in; rename one/,
  );
  const noPreset = {
    ...lineFamily("x"),
    presets: { easy: { length: 1, gaps: 0 } },
  };
  assert.throws(
    () => r.register(noPreset, "mine.ts"),
    /family "x" \(mine.ts\) has no "medium" preset/,
  );
  const { mutate: _m, ...rest } = { ...lineFamily("y"), mutate: undefined };
  assert.throws(
    () => r.register({ ...rest, check: undefined } as never, "mine.ts"),
    FamilyRegistrationError,
  );
  assert.throws(
    () =>
      r.register({
        ...lineFamily("z"),
        dimensions: [{ ...lineFamily().dimensions[0]!, harder: "sideways" }],
      } as never),
    /dimension "length" needs min <= max, step > 0 and harder "up" or "down"/,
  );
  assert.throws(
    () => r.register({ ...lineFamily("1bad") }),
    /the name must be letters/,
  );
  assert.deepEqual(r.names(), ["line"]);
});

Deno.test("dimensions: lookup, clamp, one step toward harder or easier", () => {
  const f = lineFamily();
  const d = dimension(f, "length")!;
  assert.equal(dimension(f, "width"), undefined);
  assert.equal(clampToDimension(d, 12), 9);
  assert.equal(clampToDimension(d, 0), 1);
  assert.equal(stepDimension(d, 4, +1), 5);
  assert.equal(stepDimension(d, 4, -1), 3);
  assert.equal(stepDimension(d, 9, +1), 9);
  const down = {
    ...d,
    min: 0,
    integer: false,
    harder: "down" as const,
    step: 0.1,
  };
  assert.equal(stepDimension(down, 0.3, +1), 0.2);
  assert.equal(stepDimension(down, 0.3, -0.5), 0.35);
});

Deno.test("checkedMutation: a valid edit passes, a malformed one is one line naming the family and the fix", () => {
  const f = lineFamily();
  const rng = { float: () => 0.5, int: () => 1 };
  const inst = f.generate(f.presets.medium!, 1, 1)[0]!;
  const edited = checkedMutation(f, inst, rng, 3)!;
  assert.equal(edited.length, inst.length + 1);
  assert.equal(edited.id, `${inst.id}-m3`);
  const broken = {
    ...f,
    name: "broken",
    mutate: (i: typeof inst) => ({ ...i, gaps: [42] }),
  };
  assert.throws(
    () => checkedMutation(broken, inst, rng, 3),
    (e: Error) =>
      e instanceof MalformedMutationError &&
      e.message ===
        `family broken: mutate returned a malformed instance (line ${inst.id}: a gap lies off the line); fix the family's mutate so every result passes its check (or return null when no edit applies)`,
  );
  const { mutate: _m, ...noEdit } = f;
  assert.equal(checkedMutation(noEdit, inst, rng, 3), null);
});
