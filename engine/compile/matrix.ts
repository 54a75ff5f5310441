/**
 * `matrix:`: the variant axes of an experiment and the variants that are not
 * excluded.
 *
 * @module
 */
import * as v from "valibot";
import {
  IdSchema,
  MatrixSchema,
  SampledAxisSchema,
} from "./experiment_schema.ts";
import {
  sampleAxis,
  type SampledAxis,
  sampleGroup,
} from "./matrix_sampling.ts";
import type { AxisValue } from "./graph.ts";
import type { Json } from "../types.ts";
import { didYouMean } from "../suggest.ts";
import { isRecord } from "./diagnostics.ts";
import type { Compilation } from "./plain_node.ts";

/**
 * Reads the axes of `matrix:` into `c.axes`: lists of values, and sampled
 * ranges (drawn from `seed` unless they name their own).
 */
export function readMatrix(c: Compilation, raw: unknown, seed = 0): void {
  if (raw === undefined) return;
  if (!isRecord(raw)) {
    c.diags.report(
      "matrix",
      ["matrix"],
      "matrix is a mapping of axis names to lists of values",
    );
    return;
  }
  // Sampled axes are checked on their own (one message at their place).
  const lists = Object.fromEntries(
    Object.entries(raw).filter(([k, x]) => k === "exclude" || !isRecord(x)),
  );
  const r = v.safeParse(MatrixSchema, lists);
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
    } else if (isRecord(values)) {
      const s = v.safeParse(SampledAxisSchema, values);
      if (s.success) c.axes.push(_sampledAxis(name, s.output, seed));
      else {
        // The schema check reports the ill-formed axis at its place; one
        // value stands in for it so references to the axis add no errors.
        c.axes.push({
          name,
          values: [{ label: "?", value: 0, requiresEnv: [] }],
        });
      }
    }
  }
  // Sampled axes of one group (method, samples, seed) are drawn jointly:
  // their i-th values make one point. A group of one is an ordinary axis.
  const groups = new Map<string, number>();
  for (const a of c.axes) {
    if (a.zip) groups.set(a.zip, (groups.get(a.zip) ?? 0) + 1);
  }
  for (const [i, a] of c.axes.entries()) {
    if (a.zip && groups.get(a.zip)! < 2) {
      c.axes[i] = { name: a.name, values: a.values };
    }
  }
}

/** A sampled axis: its drawn values, labelled by the value (`~2` on a repeat). */
function _sampledAxis(
  name: string,
  spec: SampledAxis,
  seed: number,
): { name: string; values: AxisValue[]; zip: string } {
  const seen = new Map<string, number>();
  const values = sampleAxis(name, spec, seed).map((x) => {
    const base = String(x);
    const n = (seen.get(base) ?? 0) + 1;
    seen.set(base, n);
    return {
      label: n === 1 ? base : `${base}~${n}`,
      value: x,
      requiresEnv: [],
    };
  });
  return { name, values, zip: sampleGroup(spec, seed) };
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
  // Crossed, except sampled axes drawn jointly: the first axis of a group
  // picks a point, the group's other axes take that point's values.
  let variants: { v: Record<string, string>; at: Record<string, number> }[] = [
    { v: {}, at: {} },
  ];
  for (const axis of c.axes) {
    const next: typeof variants = [];
    for (const base of variants) {
      const picked = axis.zip === undefined ? undefined : base.at[axis.zip];
      if (picked !== undefined) {
        next.push({
          v: { ...base.v, [axis.name]: axis.values[picked]!.label },
          at: base.at,
        });
        continue;
      }
      axis.values.forEach((val, i) => {
        next.push({
          v: { ...base.v, [axis.name]: val.label },
          at: axis.zip === undefined ? base.at : { ...base.at, [axis.zip]: i },
        });
      });
    }
    variants = next;
  }
  const excludes = isRecord(rawMatrix) && Array.isArray(rawMatrix.exclude)
    ? rawMatrix.exclude
    : [];
  const rules = excludes.flatMap((ex, i) =>
    isRecord(ex) ? [_excludeRule(c, ex, i)] : []
  );
  return variants.map((x) => x.v).filter((vt) =>
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
