/**
 * Test-only node kinds, loadable with `--kinds engine/testdata/kinds.ts`.
 *
 * @module
 */
import type { NodeKind } from "../types.ts";
import { kind as add } from "./add.ts";
import { kind as sleep } from "./sleep.ts";
import { kind as fail } from "./fail.ts";
import { kind as spin } from "./spin.ts";
import { kind as blob } from "./blob.ts";

/** The test kinds. */
// deno-lint-ignore no-explicit-any
export const kinds: readonly NodeKind<any>[] = [add, sleep, fail, spin, blob];
