/**
 * Trial tables: a table built from an experiment loaded with `--set`
 * overrides is a trial, not the file as committed. Its name carries a
 * digest of the overrides (so its CSV and JSON never overwrite the
 * committed file's), its title and metadata carry the overrides
 * themselves, and a reader can tell it apart at a glance.
 *
 * @module
 */
import { canonicalJson, sha256Hex } from "../canonical.ts";

/** What marks a trial table (absent on the tables of the file as committed). */
export interface Trial {
  /** The `--set PATH=VALUE` overrides, in the order they were applied. */
  readonly overrides: readonly string[];
  /** The first 8 hex digits of sha256 of the overrides' canonical JSON. */
  readonly digest: string;
  /** The name of the table in the file as committed. */
  readonly of: string;
}

/** The digest of a list of overrides (order counts: they apply in order). */
export function overridesDigest(overrides: readonly string[]): string {
  return sha256Hex(canonicalJson(overrides)).slice(0, 8);
}

/**
 * The trial of table `name` under `overrides`, or undefined when there are
 * none (the file as committed).
 *
 * @example
 * ```ts
 * import { trialOf } from "./trial.ts";
 * const t = trialOf("success", ["seed=3"])!;
 * console.assert(t.of === "success" && t.digest.length === 8);
 * ```
 */
export function trialOf(
  name: string,
  overrides: readonly string[] | undefined,
): Trial | undefined {
  if (!overrides?.length) return undefined;
  return {
    overrides: [...overrides],
    digest: overridesDigest(overrides),
    of: name,
  };
}

/** The name a trial table is written under: `NAME.trial-DIGEST`. */
export function trialName(t: Trial): string {
  return `${t.of}.trial-${t.digest}`;
}

/** The overrides as a command line would give them: `--set A=1 --set B=2`. */
export function overridesText(overrides: readonly string[]): string {
  return overrides.map((o) => `--set ${o}`).join(" ");
}

/** A trial table's title: the committed title, then `[trial: --set …]`. */
export function trialTitle(title: string, t: Trial): string {
  return `${title} [trial: ${overridesText(t.overrides)}]`;
}
