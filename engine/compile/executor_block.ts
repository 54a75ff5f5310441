/**
 * `executor:`: its `type` names a registered executor, whose schema and
 * checks validate the rest of the block.
 *
 * @module
 */
import * as v from "valibot";
import type { DocPath } from "./source.ts";
import type { ExecutorSpec } from "./experiment_schema.ts";
import { didYouMean } from "../suggest.ts";
import { isRecord } from "./diagnostics.ts";
import type { Compilation } from "./plain_node.ts";

/** Validates the `executor:` block against the executor it names. */
export function readExecutor(
  c: Compilation,
  raw: unknown,
  executors: readonly ExecutorDeclaration[],
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
        } (${
          names.length
            ? `valid: ${names.join(", ")}`
            : "no executor is registered: pass `executors` when compiling"
        })`,
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

/** Where an executor reports problems of its `executor:` block (paths below the block). */
export interface BlockIssues {
  /** A problem at `path` (`key`: at the mapping key, not its value). */
  report(path: DocPath, message: string, key?: boolean): void;
  /** Each key of `obj` not in `known`, as `unknown WHAT "k"` with "did you mean". */
  unknownKeys(
    obj: Readonly<Record<string, unknown>>,
    known: readonly string[],
    path: DocPath,
    what: string,
  ): void;
}

/**
 * What the compiler needs of an executor kind: its name and how to check its
 * `executor:` block. The run side (`ExecutorKind` in `../run/executor.ts`)
 * adds how to create the executor of a run.
 */
export interface ExecutorDeclaration<S extends ExecutorSpec = ExecutorSpec> {
  /** The name, e.g. `local` or `slurm`. */
  readonly name: string;
  /** One line for `--help`. */
  readonly description: string;
  /** Schema of its `executor:` block (a strict object whose `type` is the name). */
  readonly spec: v.GenericSchema<unknown, S> & {
    readonly entries: Readonly<Record<string, unknown>>;
  };
  /**
   * Optional: checks of the block beyond its schema (e.g. flags envsmith
   * sets itself), reported through `issues`; `kinds` are the registered
   * node kinds' names.
   */
  check?(
    block: Readonly<Record<string, unknown>>,
    issues: BlockIssues,
    kinds: readonly string[],
  ): void;
}
