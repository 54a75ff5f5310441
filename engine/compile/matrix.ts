/**
 * `matrix:`: the variant axes of an experiment and the variants that are not
 * excluded.
 *
 * @module
 */
import * as v from "valibot";
import { IdSchema, MatrixSchema } from "./experiment_schema.ts";
import type { AxisValue } from "./experiment.ts";
import type { Json } from "../types.ts";
import { didYouMean } from "../suggest.ts";
import { isRecord } from "./diagnostics.ts";
import type { Compilation } from "./plain_node.ts";

/** Reads the axes of `matrix:` into `c.axes`. */
export function readMatrix(c: Compilation, raw: unknown): void {
  if (raw === undefined) return;
  if (!isRecord(raw)) {
    c.diags.report(
      "matrix",
      ["matrix"],
      "matrix is a mapping of axis names to lists of values",
    );
    return;
  }
  const r = v.safeParse(MatrixSchema, raw);
  if (!r.success) c.diags.issues(r.issues, ["matrix"], "matrix");
  for (const [name, values] of Object.entries(raw)) {
    if (name === "exclude") continue;
    if (!v.is(IdSchema, name)) {
      c.diags.report(
        "matrix",
        ["matrix", name],
        `axis name "${name}" must be letters, digits, _ or - and start with a letter or _`,
        true,
      );
    }
    if (Array.isArray(values)) {
      c.axes.push({ name, values: _axisValues(c, name, values) });
    }
  }
}

function _axisValues(
  c: Compilation,
  name: string,
  values: unknown[],
): AxisValue[] {
  const out: AxisValue[] = [];
  const labels = new Set<string>();
  values.forEach((val, i) => {
    let label: string;
    let requiresEnv: string[] = [];
    if (isRecord(val)) {
      if (val.name === undefined) return;
      label = String(val.name);
      if (Array.isArray(val.requires_env)) {
        requiresEnv = val.requires_env.map(String);
      }
    } else label = String(val);
    if (labels.has(label)) {
      c.diags.report(
        "matrix",
        ["matrix", name, i],
        `duplicate value "${label}" in axis ${name}`,
      );
    }
    labels.add(label);
    out.push({ label, value: val as Json, requiresEnv });
  });
  return out;
}

/** Every combination of axis values (axis -> label) that no `exclude` entry removes. */
export function variantsOf(
  c: Compilation,
  rawMatrix: unknown,
): Record<string, string>[] {
  let variants: Record<string, string>[] = [{}];
  for (const axis of c.axes) {
    const next: Record<string, string>[] = [];
    for (const base of variants) {
      for (const val of axis.values) {
        next.push({ ...base, [axis.name]: val.label });
      }
    }
    variants = next;
  }
  const excludes = isRecord(rawMatrix) && Array.isArray(rawMatrix.exclude)
    ? rawMatrix.exclude
    : [];
  const rules = excludes.flatMap((ex, i) =>
    isRecord(ex) ? [_excludeRule(c, ex, i)] : []
  );
  return variants.filter((vt) =>
    !rules.some((rule) => Object.entries(rule).every(([a, l]) => vt[a] === l))
  );
}

function _excludeRule(
  c: Compilation,
  ex: Record<string, unknown>,
  i: number,
): Record<string, string> {
  const rule: Record<string, string> = {};
  for (const [axisName, val] of Object.entries(ex)) {
    const at = ["matrix", "exclude", i, axisName];
    const axis = c.axes.find((a) => a.name === axisName);
    if (!axis) {
      c.diags.report(
        "matrix",
        at,
        `exclude names unknown axis "${axisName}"${
          didYouMean(axisName, c.axes.map((a) => a.name))
        }`,
        true,
      );
      continue;
    }
    const label = isRecord(val) ? String(val.name) : String(val);
    if (!axis.values.some((x) => x.label === label)) {
      c.diags.report(
        "matrix",
        at,
        `axis ${axisName} has no value "${label}"${
          didYouMean(label, axis.values.map((x) => x.label))
        }`,
      );
    }
    rule[axisName] = label;
  }
  return rule;
}
