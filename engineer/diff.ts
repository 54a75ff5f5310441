/**
 * A structured diff between two configurations, for reports: which
 * components were kept (and re-weighted), changed (with field changes), added
 * or removed.
 *
 * @module
 */
import {
  type AnyEnvConfig,
  components,
  configId,
  ENV_CONFIG_FIELDS,
  type EnvConfig,
} from "../schemas/env_config.ts";

/** One field change. */
export interface FieldChange {
  /** Field path, e.g. `agents` or `horizon.factor`. */
  path: string;
  /** Value before (null when absent). */
  from: number | string | null;
  /** Value after. */
  to: number | string | null;
}

/** What happened to one component. */
export interface ComponentChange {
  /** `kept` (same config), `changed` (edited from `from_id`), `added`, `removed`. */
  status: "kept" | "changed" | "added" | "removed";
  /** Id of the component after (before, for `removed`). */
  config_id: string;
  /** Id of the component it was derived from (changed/added: the nearest old one). */
  from_id: string | null;
  /** Weight before (normalised; null when new). */
  weight_from: number | null;
  /** Weight after (normalised; null when removed). */
  weight_to: number | null;
  /** Field changes relative to `from_id`. */
  changes: FieldChange[];
}

/** A structured diff. */
export interface ConfigDiff {
  /** Whether anything differs. */
  changed: boolean;
  /** `configId` before and after. */
  from_id: string;
  /** `configId` after. */
  to_id: string;
  /** Per component. */
  components: ComponentChange[];
  /** One line per change, for logs. */
  summary: string[];
}

function _flat(c: EnvConfig): Map<string, number | string> {
  const m = new Map<string, number | string>();
  for (const f of ENV_CONFIG_FIELDS) {
    const v = c[f];
    if (typeof v === "object") {
      for (const [k, x] of Object.entries(v)) m.set(`${f}.${k}`, x as number);
    } else m.set(f, v);
  }
  return m;
}

/** Field changes from `a` to `b`. */
export function fieldChanges(a: EnvConfig, b: EnvConfig): FieldChange[] {
  const fa = _flat(a);
  const fb = _flat(b);
  const out: FieldChange[] = [];
  const keys = [...new Set([...fa.keys(), ...fb.keys()])];
  for (const k of keys) {
    const x = fa.get(k) ?? null;
    const y = fb.get(k) ?? null;
    if (x !== y) out.push({ path: k, from: x, to: y });
  }
  return out;
}

function _norm(config: AnyEnvConfig) {
  const comps = components(config);
  const total = comps.reduce((s, c) => s + c.weight, 0);
  return comps.map((c) => ({
    id: configId(c.config),
    weight: Math.round((c.weight / total) * 1000) / 1000,
    config: c.config,
  }));
}

/**
 * Diff two configurations.
 *
 * Long by design: matching components (exact first, then nearest) and describing the matches share the pairing state.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { diffConfigs } from "./diff.ts";
 * import { PRESETS } from "../schemas/env_config.ts";
 * const d = diffConfigs(PRESETS.easy, { ...PRESETS.easy, agents: 3 });
 * assert.deepEqual(d.summary, ["agents: 2 -> 3"]);
 * ```
 */
export function diffConfigs(
  before: AnyEnvConfig,
  after: AnyEnvConfig,
): ConfigDiff {
  const a = _norm(before);
  const b = _norm(after);
  const used = new Set<number>();
  const out: ComponentChange[] = [];
  const matched: number[] = b.map(() => -1);
  // Exact matches first.
  b.forEach((nb, j) => {
    const i = a.findIndex((na, k) => !used.has(k) && na.id === nb.id);
    if (i >= 0) {
      used.add(i);
      matched[j] = i;
    }
  });
  const freeOld = a.map((_, i) => i).filter((i) => !used.has(i));
  const freeNew = b.map((_, j) => j).filter((j) => matched[j]! < 0);
  // As many unmatched new as old: pair them as edits, nearest first.
  const pairAsEdits = freeOld.length === freeNew.length;
  b.forEach((nb, j) => {
    const i = matched[j]!;
    if (i >= 0) {
      out.push({
        status: "kept",
        config_id: nb.id,
        from_id: nb.id,
        weight_from: a[i]!.weight,
        weight_to: nb.weight,
        changes: [],
      });
      return;
    }
    const pool = pairAsEdits
      ? a.map((_, k) => k).filter((k) => !used.has(k))
      : a.map((_, k) => k);
    let best = pool[0] ?? 0;
    let bestN = Infinity;
    for (const k of pool) {
      const n = fieldChanges(a[k]!.config, nb.config).length;
      if (n < bestN) {
        bestN = n;
        best = k;
      }
    }
    const base = a[best]!;
    if (pairAsEdits) used.add(best);
    out.push({
      status: pairAsEdits ? "changed" : "added",
      config_id: nb.id,
      from_id: base.id,
      weight_from: pairAsEdits ? base.weight : null,
      weight_to: nb.weight,
      changes: fieldChanges(base.config, nb.config),
    });
  });
  a.forEach((na, i) => {
    if (used.has(i)) return;
    out.push({
      status: "removed",
      config_id: na.id,
      from_id: na.id,
      weight_from: na.weight,
      weight_to: null,
      changes: [],
    });
  });
  const summary: string[] = [];
  const single = a.length === 1 && b.length === 1;
  for (const c of out) {
    const fields = c.changes.map((x) => `${x.path}: ${x.from} -> ${x.to}`);
    if (single) {
      summary.push(...fields);
      continue;
    }
    if (c.status === "kept") {
      if (c.weight_from !== c.weight_to) {
        summary.push(
          `component ${c.config_id}: weight ${c.weight_from} -> ${c.weight_to}`,
        );
      }
    } else if (c.status === "removed") {
      summary.push(
        `component ${c.config_id} removed (weight ${c.weight_from})`,
      );
    } else {
      summary.push(
        `component ${c.config_id} ${c.status} from ${c.from_id} (weight ${c.weight_to}): ${
          fields.join(", ") || "no field changes"
        }`,
      );
    }
  }
  const fromId = configId(before);
  const toId = configId(after);
  return {
    changed: fromId !== toId,
    from_id: fromId,
    to_id: toId,
    components: out,
    summary,
  };
}
