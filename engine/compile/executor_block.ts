/**
 * `executor:`: its `type` names a registered executor, whose schema and
 * checks validate the rest of the block.
 *
 * @module
 */
import * as v from "valibot";
import type { ExecutorKind } from "../run/executor.ts";
import type { ExecutorSpec } from "./experiment_schema.ts";
import { didYouMean } from "../suggest.ts";
import { isRecord } from "./diagnostics.ts";
import type { Compilation } from "./plain_node.ts";

/** Validates the `executor:` block against the executor it names. */
export function readExecutor(
  c: Compilation,
  raw: unknown,
  // deno-lint-ignore no-explicit-any
  executors: readonly ExecutorKind<any>[],
): ExecutorSpec | undefined {
  if (raw === undefined) return undefined;
  const at = ["executor"];
  const names = executors.map((e) => e.name);
  const choice = names.join(" or ");
  if (!isRecord(raw)) {
    c.diags.report(
      "executor",
      at,
      `executor is a mapping with a type: ${choice}`,
    );
    return undefined;
  }
  const kind = executors.find((e) => e.name === String(raw.type));
  if (raw.type === undefined || !kind) {
    c.diags.report(
      "executor",
      raw.type === undefined ? at : [...at, "type"],
      raw.type === undefined
        ? `executor needs a type: ${choice}`
        : `unknown executor type "${String(raw.type)}"${
          didYouMean(String(raw.type), names)
        } (valid: ${names.join(", ")})`,
    );
    return undefined;
  }
  const unknownKeys = (
    obj: Readonly<Record<string, unknown>>,
    known: readonly string[],
    path: readonly (string | number)[],
    what: string,
  ) => c.diags.unknownKeys(obj, known, [...at, ...path], what, "executor");
  unknownKeys(
    raw,
    Object.keys(kind.spec.entries),
    [],
    `key of the ${kind.name} executor`,
  );
  kind.check?.(raw, {
    report: (path, message, key) =>
      c.diags.report("executor", [...at, ...path], message, key),
    unknownKeys,
  }, [...c.kinds.keys()]);
  const r = v.safeParse(kind.spec, raw);
  if (!r.success) {
    c.diags.issues(r.issues, at, "executor");
    return undefined;
  }
  return r.output;
}
