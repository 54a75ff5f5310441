/**
 * The diagnostics of one compilation: every problem of an experiment file is
 * collected (once, at its file:line:col) and thrown together at the end.
 *
 * @module
 */
import type * as v from "valibot";
import type { Diagnostic, DiagnosticCode } from "../errors.ts";
import type { DocPath, Source } from "./source.ts";
import { didYouMean } from "../suggest.ts";

/** Collects the diagnostics of one experiment file. */
export class Diagnostics {
  /** The file being compiled. */
  readonly source: Source;
  /** Everything reported so far, in order. */
  readonly list: Diagnostic[] = [];
  #seen = new Set<string>();

  /** Creates an empty collection for `source`. */
  constructor(source: Source) {
    this.source = source;
  }

  /** Reports a problem at `path` (`key`: at the mapping key, not its value); duplicates are dropped. */
  report(
    code: DiagnosticCode,
    path: DocPath,
    message: string,
    key = false,
  ): void {
    const d = this.source.diag(code, path, message, key);
    const id = `${d.code}|${d.path}|${d.message}`;
    if (this.#seen.has(id)) return;
    this.#seen.add(id);
    this.list.push(d);
  }

  /** Reports each key of `obj` that is not in `known`, with "did you mean". */
  unknownKeys(
    obj: Record<string, unknown>,
    known: readonly string[],
    at: DocPath,
    what: string,
    code: DiagnosticCode = "structure",
  ): void {
    for (const k of Object.keys(obj)) {
      if (!known.includes(k)) {
        this.report(
          code,
          [...at, k],
          `unknown ${what} "${k}"${didYouMean(k, known)} (valid: ${
            known.join(", ")
          })`,
          true,
        );
      }
    }
  }

  /**
   * Reports valibot issues under `at`, the first issue per path only (one
   * mistake, one line: `-1.5` is not "not an integer" and "below 1" too).
   * Unknown keys are skipped (those are reported by
   * {@linkcode Diagnostics.unknownKeys}), except, with `nestedUnknownKeys`,
   * below the top level (e.g. inside a kind's parameter that is itself a
   * strict object, which `unknownKeys` does not visit); `skip` drops issues
   * by their path below `at`.
   */
  issues(
    issues: readonly v.BaseIssue<unknown>[],
    at: DocPath,
    code: DiagnosticCode,
    skip?: (p: DocPath) => boolean,
    nestedUnknownKeys = false,
  ): void {
    const done = new Set<string>();
    for (const issue of issues) {
      const unknownKey = issue.type === "strict_object" &&
        issue.expected === "never";
      if (
        unknownKey && (!nestedUnknownKeys || (issue.path?.length ?? 0) <= 1)
      ) continue;
      const sub: (string | number)[] = (issue.path ?? []).map((p) =>
        p.key as string | number
      );
      if (skip && skip(sub)) continue;
      const id = sub.join("\u0000");
      if (done.has(id)) continue;
      done.add(id);
      const msg = issue.issues && issue.type === "union"
        ? issue.issues.map((i) => i.message).filter((m, i, a) =>
          a.indexOf(m) === i
        ).join("; or ")
        : unknownKey && issue.message.startsWith("Invalid key: Expected never")
        ? `unknown key ${issue.received}`
        : issue.message;
      // A problem with a mapping key (unknown, or a key schema's) is shown at the key.
      const atKey = unknownKey || issue.path?.at(-1)?.origin === "key";
      this.report(
        code,
        [...at, ...sub],
        `${sub.length ? sub.join(".") + ": " : ""}${msg}`,
        atKey,
      );
    }
  }

  /** Appends `suffix` to the messages reported since `from` (a length of {@linkcode Diagnostics.list}). */
  suffixSince(from: number, suffix: string): void {
    for (let i = from; i < this.list.length; i++) {
      const d = this.list[i]!;
      this.list[i] = { ...d, message: d.message + suffix };
    }
  }
}

/** Whether `x` is a plain mapping. */
export function isRecord(x: unknown): x is Record<string, unknown> {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}
