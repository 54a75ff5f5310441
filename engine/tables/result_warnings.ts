/**
 * Warnings about cached results that make what is built on them suspect,
 * asked of each kind that has a {@linkcode NodeKind.warning} for the nodes no
 * node of the same kind reads (the end of each chain: a policy's last
 * training stage). One line per node of the file and warning, over its
 * variants: shown after a run, by `tables` and in reports.
 *
 * @module
 */
import type { Experiment, GraphNode } from "../compile/experiment.ts";
import { computeKeys, type NodeKey } from "../cache/keys.ts";
import { collapsedId } from "../run/plan_graph.ts";
import type { Store } from "../cache/store.ts";
import type { Json, ResultWarning } from "../types.ts";

/** The warning of the nodes of one box (a node of the file, over its variants). */
export interface GroupedWarning {
  /** The node of the file (`last`, `curriculum.*.policy`). */
  readonly node: string;
  /** What is wrong. */
  readonly summary: string;
  /** Advice (the first node's). */
  readonly advice: string;
  /** Each node it holds for, with its detail. */
  readonly hits: readonly { readonly id: string; readonly detail: string }[];
  /** How many of the box's nodes were checked (had a cached result). */
  readonly checked: number;
}

/** The nodes whose kind warns and that no node of the same kind reads. */
export function chainEnds(exp: Experiment): GraphNode[] {
  const readBySameKind = new Set<number>();
  for (const n of exp.nodes) {
    for (const d of n.deps) {
      if (exp.nodes[d]!.kind.name === n.kind.name) readBySameKind.add(d);
    }
  }
  return exp.nodes.filter((n) =>
    n.kind.warning !== undefined && !n.skipped && !readBySameKind.has(n.index)
  );
}

/**
 * The warnings of an experiment's cached results, grouped per node of the
 * file and summary. `resultOf` gives a node's cached value and report (null
 * when not cached: not checked).
 */
export function resultWarnings(
  exp: Experiment,
  resultOf: (node: GraphNode) => { value: Json; report?: Json } | null,
): GroupedWarning[] {
  const groups = new Map<string, {
    node: string;
    summary: string;
    advice: string;
    hits: { id: string; detail: string }[];
  }>();
  const checked = new Map<string, number>();
  for (const n of chainEnds(exp)) {
    const r = resultOf(n);
    if (r === null) continue;
    const box = collapsedId(n);
    checked.set(box, (checked.get(box) ?? 0) + 1);
    let w: ResultWarning | null = null;
    try {
      w = n.kind.warning!(r);
    } catch {
      w = null; // a result the check cannot read is not a warning
    }
    if (w === null) continue;
    const k = `${box}\u0000${w.summary}`;
    const g = groups.get(k) ??
      { node: box, summary: w.summary, advice: w.advice, hits: [] };
    g.hits.push({ id: n.id, detail: w.detail });
    groups.set(k, g);
  }
  return [...groups.values()].map((g) => ({
    ...g,
    checked: checked.get(g.node) ?? g.hits.length,
  }));
}

/** One line: `warning: the policy did not learn in 4 of 4 "last" nodes (…): advice`. */
export function formatWarning(w: GroupedWarning, listed = 3): string {
  const hits = w.hits.slice(0, listed).map((h) => `${h.detail} in ${h.id}`)
    .join("; ");
  const more = w.hits.length > listed
    ? `; and ${w.hits.length - listed} more`
    : "";
  return `warning: ${w.summary} in ${w.hits.length} of ${w.checked} "${w.node}" node${
    w.checked > 1 ? "s" : ""
  } (${hits}${more}): ${w.advice}`;
}

/**
 * The warning lines of an experiment's results in `store` (its current
 * keys); entries that cannot be read are not checked. `onRead` hears of
 * every node whose result was asked for (what the lines depend on).
 */
export function experimentWarningLines(
  exp: Experiment,
  store: Store,
  keys: readonly NodeKey[] = computeKeys(exp),
  onRead?: (node: GraphNode) => void,
): string[] {
  return resultWarnings(exp, (n) => {
    onRead?.(n);
    const k = keys[n.index];
    if (!k?.cacheable) return null;
    try {
      const e = store.readEntry(k.key);
      return e
        ? {
          value: e.value,
          ...(e.report !== undefined ? { report: e.report } : {}),
        }
        : null;
    } catch {
      return null;
    }
  }).map((w) => formatWarning(w));
}
