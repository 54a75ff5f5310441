import assert from "node:assert/strict";
import { fuseMultiplyAdds, WatSyntaxError } from "./fuse_madd.ts";

const g = (x: string) => `(local.get $${x})`;

Deno.test("fuseMultiplyAdds: the multiply as the second operand of the add", () => {
  const r = fuseMultiplyAdds(
    `(local.set $c (f32x4.add ${g("c")} (f32x4.mul ${g("a")} ${g("b")})))`,
  );
  assert.equal(
    r.wat,
    `(local.set $c (f32x4.relaxed_madd ${g("a")} ${g("b")} ${g("c")}))`,
  );
  assert.equal(r.fused, 1);
  assert.equal(r.kept, 0);
});

Deno.test("fuseMultiplyAdds: the multiply as the first operand of the add", () => {
  const r = fuseMultiplyAdds(
    `(f32x4.add (f32x4.mul ${g("a")} (v128.load offset=16 ${g("p")})) ${
      g("c")
    })`,
  );
  assert.equal(
    r.wat,
    `(f32x4.relaxed_madd ${g("a")} (v128.load offset=16 ${g("p")}) ${g("c")})`,
  );
  assert.equal(r.fused, 1);
});

Deno.test("fuseMultiplyAdds: nested multiply-adds are all fused, inner ones first", () => {
  // a Horner step inside another: p = c0 + r * (c1 + r * c2)
  const src = `(f32x4.add ${g("c0")}
      (f32x4.mul ${g("r")}
        (f32x4.add ${g("c1")} (f32x4.mul ${g("r")} ${g("c2")}))))`;
  const r = fuseMultiplyAdds(src);
  assert.equal(
    r.wat,
    `(f32x4.relaxed_madd ${g("r")} (f32x4.relaxed_madd ${g("r")} ${g("c2")} ${
      g("c1")
    }) ${g("c0")})`,
  );
  assert.equal(r.fused, 2);
});

Deno.test("fuseMultiplyAdds: comments and text around the forms are kept byte for byte", () => {
  const around = (code: string) =>
    `;; (f32x4.add (local.get $c) (f32x4.mul (local.get $a) (local.get $b)))
(func $f (; (f32x4.add (f32x4.mul (local.get $a) (local.get $b)) (local.get $c)) ;)
  ;; comment with an unbalanced ( paren
  (local.set $c ${code}) ;; after
  (data "(f32x4.add (f32x4.mul) \\" )"))
`;
  const r = fuseMultiplyAdds(
    around(`(f32x4.add ${g("c")} (f32x4.mul ${g("a")} ${g("b")}))`),
  );
  assert.equal(r.fused, 1);
  assert.equal(
    r.wat,
    around(`(f32x4.relaxed_madd ${g("a")} ${g("b")} ${g("c")})`),
  );
});

Deno.test("fuseMultiplyAdds: a multiply whose result is not added, and other adds, are left alone", () => {
  const src = [
    `(local.set $p (f32x4.mul ${g("a")} ${g("b")}))`,
    `(f32x4.sub ${g("c")} (f32x4.mul ${g("a")} ${g("b")}))`,
    `(f32x4.add ${g("c")} ${g("d")})`,
    `(f64x2.add ${g("c")} (f64x2.mul ${g("a")} ${g("b")}))`,
    `(f32x4.add ${g("c")} (f32x4.max ${g("a")} ${g("b")}))`,
    // not fully folded: the operands come from the stack
    `(f32x4.add (f32x4.mul))`,
  ].join("\n");
  const r = fuseMultiplyAdds(src);
  assert.equal(r.wat, src);
  assert.equal(r.fused, 0);
});

Deno.test("fuseMultiplyAdds: an add whose first operand has a side effect is not reordered", () => {
  // X = local.tee runs before A and B today; relaxed_madd would run it after
  const src = `(f32x4.add (local.tee $x ${g("c")}) (f32x4.mul ${g("x")} ${
    g("b")
  }))`;
  const r = fuseMultiplyAdds(src);
  assert.equal(r.wat, src);
  assert.deepEqual([r.fused, r.kept], [0, 1]);
  // with the multiply first the order is unchanged, so it is fused
  const first = fuseMultiplyAdds(
    `(f32x4.add (f32x4.mul (local.tee $x ${g("a")}) ${g("b")}) ${g("x")})`,
  );
  assert.equal(
    first.wat,
    `(f32x4.relaxed_madd (local.tee $x ${g("a")}) ${g("b")} ${g("x")})`,
  );
  assert.equal(first.fused, 1);
});

Deno.test("fuseMultiplyAdds: unbalanced text fails naming the line", () => {
  assert.throws(
    () => fuseMultiplyAdds("(module\n  (func (f32x4.add)\n"),
    (e) =>
      e instanceof WatSyntaxError &&
      /line 2: "\(" is never closed/.test(e.message),
  );
  assert.throws(
    () => fuseMultiplyAdds("(func)\n)"),
    (e) =>
      e instanceof WatSyntaxError &&
      /line 2: "\)" closes no open/.test(e.message),
  );
  assert.throws(
    () => fuseMultiplyAdds("(func (; open\n"),
    (e) =>
      e instanceof WatSyntaxError && /line 1: block comment/.test(e.message),
  );
});
