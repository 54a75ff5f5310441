// Test helpers private to llm/: node:assert's throws/rejects do not return the error.
import assert from "node:assert/strict";

/** Call `fn`, assert it throws an instance of `type`, return the error. */
export function throwsType<E extends Error>(
  fn: () => unknown,
  // deno-lint-ignore no-explicit-any
  type: new (...args: any[]) => E,
): E {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof type, `expected ${type.name}, got ${e}`);
    return e;
  }
  assert.fail(`expected ${type.name}, nothing was thrown`);
}

/** Await `fn()`, assert it rejects with an instance of `type`, return the error. */
export async function rejectsType<E extends Error>(
  fn: () => Promise<unknown>,
  // deno-lint-ignore no-explicit-any
  type: new (...args: any[]) => E,
): Promise<E> {
  try {
    await fn();
  } catch (e) {
    assert.ok(e instanceof type, `expected ${type.name}, got ${e}`);
    return e;
  }
  assert.fail(`expected ${type.name}, nothing was thrown`);
}
