/**
 * Planning: which nodes are cached, which run, which wait for inputs, which
 * are skipped, and why a node is not cached (diffed against the last run).
 *
 * @module
 */
import { codeDigest } from "./digest.ts";
import { CorruptEntryError } from "./errors.ts";
import type { Experiment, GraphNode } from "./experiment.ts";
import {
  computeKeys,
  explainChange,
  type KeyComponents,
  type NodeKey,
} from "./keys.ts";
import {
  listManifests,
  type Manifest,
  type ManifestNode,
  readManifest,
} from "./manifest.ts";
import type { Store } from "./store.ts";
import { UserError } from "./errors.ts";
import { didYouMean } from "./suggest.ts";

/** Plan status of a node. */
export type PlanStatus = "cached" | "run" | "blocked" | "skipped";

/** One node of a plan. */
export interface PlanItem {
  /** The graph node. */
  readonly node: GraphNode;
  /** Its key. */
  readonly key: NodeKey;
  /** `cached`; `run` (inputs ready); `blocked` (waits for inputs that must run first); `skipped`. */
  status: PlanStatus;
  /** Why it is not cached (or skipped). */
  why: string[];
  /** Ids of inputs it waits for (when blocked). */
  waitingFor: string[];
}

/** A plan. */
export interface Plan {
  /** The experiment. */
  readonly exp: Experiment;
  /** Keys of every node (index-aligned with `exp.nodes`). */
  readonly keys: readonly NodeKey[];
  /** Items of the selected nodes, in topological order. */
  readonly items: PlanItem[];
  /** Item per node index (selected nodes only). */
  readonly byIndex: ReadonlyMap<number, PlanItem>;
  /** The last run's manifest, if any. */
  readonly previous: Manifest | null;
  /** Problems met while planning (e.g. corrupt entries), for the user. */
  readonly notes: string[];
}

/** Options of {@linkcode makePlan}. */
export interface PlanOptions {
  /** Node ids or patterns to plan for (with their inputs). @default all */
  readonly only?: readonly string[];
  /** Only the `only` nodes themselves, not their uncached inputs (for `run-node`). @default false */
  readonly exact?: boolean;
  /** Precomputed keys. */
  readonly keys?: readonly NodeKey[];
}

/** Whether `id` matches a selection pattern: exact id, plain id, group, or a `*` glob. */
export function matchesPattern(node: GraphNode, pattern: string): boolean {
  if (pattern === node.id || pattern === node.plain || pattern === node.group) {
    return true;
  }
  if (pattern.includes("*")) {
    const re = new RegExp(
      "^" + pattern.split("*").map((s) =>
        s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")
      ).join(".*") + "$",
    );
    return re.test(node.id);
  }
  return false;
}

/** Indices of the nodes selected by `patterns` (throws a UserError for a pattern that matches nothing). */
export function selectNodes(
  exp: Experiment,
  patterns: readonly string[],
): Set<number> {
  const out = new Set<number>();
  for (const p of patterns) {
    let n = 0;
    for (const node of exp.nodes) {
      if (matchesPattern(node, p)) {
        out.add(node.index);
        n++;
      }
    }
    if (n === 0) {
      const names = new Set<string>();
      for (const node of exp.nodes) {
        names.add(node.group).add(node.plain).add(node.id);
      }
      throw new UserError(
        `--only ${p}: no node matches${didYouMean(p, names)}`,
      );
    }
  }
  return out;
}

/** Makes the plan: verifies the entries of cached nodes (quarantining corrupt ones) and explains misses. */
export function makePlan(
  exp: Experiment,
  store: Store,
  options: PlanOptions = {},
): Plan {
  const keys = options.keys ?? computeKeys(exp);
  let selected: Set<number> | null = null;
  if (options.only && options.only.length > 0) {
    selected = selectNodes(exp, options.only);
  }
  // The last run that included each node (looking back over a few runs, so
  // an `--only` run does not hide the others).
  const prevById = new Map<string, ManifestNode>();
  const prevCode = new Map<string, Manifest["code"]>();
  let previous: Manifest | null = null;
  const files = listManifests(store, exp.name);
  for (let i = files.length - 1, read = 0; i >= 0 && read < 5; i--) {
    const m = readManifest(files[i]!);
    if (!m) continue;
    read++;
    previous ??= m;
    for (const n of m.nodes) {
      if (n.status === "unselected" || prevById.has(n.id)) continue;
      prevById.set(n.id, n);
      prevCode.set(n.id, m.code);
    }
    if (prevById.size >= exp.nodes.length) break;
  }
  // One directory listing instead of a failed open per missing entry.
  const present = new Set(store.keys());
  const notes: string[] = [];
  const items: PlanItem[] = [];
  const byIndex = new Map<number, PlanItem>();
  const status = new Map<number, PlanStatus>();
  const probe = (i: number): PlanItem => {
    const node = exp.nodes[i]!;
    const key = keys[i]!;
    const item: PlanItem = {
      node,
      key,
      status: "run",
      why: [],
      waitingFor: [],
    };
    if (node.skipped) {
      item.status = "skipped";
      item.why.push(node.skipped);
      return item;
    }
    if (key.cacheable) {
      try {
        if (present.has(key.key) && store.checkEntry(key.key)) {
          item.status = "cached";
          return item;
        }
      } catch (e) {
        if (!(e instanceof CorruptEntryError)) throw e;
        notes.push(`${e.message}; moved aside, ${node.id} will be recomputed`);
        item.why.push(`its cache entry was corrupt (${e.message})`);
        return item;
      }
    } else {
      item.why.push(`not cacheable: ${key.reason}`);
      return item;
    }
    const prev = prevById.get(node.id);
    if (!previous) item.why.push("not computed yet");
    else if (!prev) item.why.push("new node (not in the last run)");
    else if (prev.key !== key.key) {
      let codeFiles: Record<string, string> | undefined;
      try {
        codeFiles = { ...codeDigest(node.kind.module).files };
      } catch { /* explained as not cacheable elsewhere */ }
      let before: {
        components: KeyComponents;
        inputs: Record<string, string>;
        codeFiles?: Record<string, string>;
      } | null = null;
      if (prev.components) {
        const files = prevCode.get(node.id)?.[prev.components.code];
        before = {
          components: prev.components,
          inputs: prev.inputs ?? {},
          ...(files ? { codeFiles: files } : {}),
        };
      } else {
        try {
          const e = store.readEntry(prev.key);
          if (e) {
            before = {
              components: e.components,
              inputs: { ...e.inputs },
              codeFiles: { ...e.codeFiles },
            };
          }
        } catch { /* corrupt: no explanation */ }
      }
      if (before) {
        item.why.push(...explainChange(before, {
          components: key.components,
          inputs: key.inputs,
          ...(codeFiles ? { codeFiles } : {}),
        }));
      } else {item.why.push(
          "its key changed (the earlier components are no longer stored)",
        );}
    } else if (prev.status === "failed") {
      item.why.push(`failed in the last run: ${prev.error ?? "?"}`);
    } else if (prev.status === "blocked") {
      item.why.push(
        `blocked in the last run: ${prev.reason ?? "an input failed"}`,
      );
    } else if (prev.status === "skipped") {
      item.why.push(`skipped in the last run: ${prev.reason ?? "?"}`);
    } else if (prev.status === "cached" || prev.status === "done") {
      item.why.push(
        "its cache entry is gone (cache gc, or another cache directory)",
      );
    } else item.why.push("the last run stopped before it finished");
    return item;
  };
  // Walk in topological order; with a selection, add the uncached inputs of selected nodes.
  const need = new Set<number>();
  if (selected) {
    const stack = [...selected];
    for (const i of stack) need.add(i);
    // Inputs are pulled in lazily below (only if not cached).
  }
  const planned = new Map<number, PlanItem>();
  const ensure = (i: number): PlanItem => {
    let it = planned.get(i);
    if (!it) {
      it = probe(i);
      planned.set(i, it);
    }
    return it;
  };
  if (selected) {
    // Pull in uncached inputs transitively (not in exact mode).
    const order = [...selected].sort((a, b) => b - a);
    const visit = new Set<number>(order);
    const stack = [...order];
    while (stack.length > 0) {
      const i = stack.pop()!;
      const it = ensure(i);
      if (it.status === "cached" || it.status === "skipped") continue;
      for (const d of exp.nodes[i]!.deps) {
        const dit = ensure(d);
        if (!visit.has(d) && !options.exact && dit.status !== "cached") {
          visit.add(d);
          need.add(d);
          stack.push(d);
        }
      }
    }
  }
  for (const node of exp.nodes) {
    if (selected && !need.has(node.index)) continue;
    const it = ensure(node.index);
    if (it.status !== "cached" && it.status !== "skipped") {
      for (const d of node.deps) {
        const ds = status.get(d) ?? ensure(d).status;
        if (ds === "skipped") {
          it.status = "skipped";
          it.why = [`input ${exp.nodes[d]!.id} is skipped`];
          break;
        }
        if (ds !== "cached") it.waitingFor.push(exp.nodes[d]!.id);
      }
      if (it.status === "run" && it.waitingFor.length > 0) {
        it.status = "blocked";
      }
    }
    status.set(node.index, it.status);
    items.push(it);
    byIndex.set(node.index, it);
  }
  // In exact mode, inputs that are not cached cannot be satisfied.
  if (selected && options.exact) {
    for (const it of items) {
      if (it.waitingFor.length > 0) {
        throw new UserError(
          `${it.node.id} cannot run alone: its input${
            it.waitingFor.length > 1 ? "s" : ""
          } ${it.waitingFor.join(", ")} ` +
            `${
              it.waitingFor.length > 1 ? "are" : "is"
            } not cached; run them first (deno task run ${exp.file} --only ${
              it.waitingFor.join(" ")
            })`,
        );
      }
    }
  }
  // Cached inputs of selected nodes are needed for their values.
  for (const it of items) {
    for (const d of it.node.deps) {
      if (!byIndex.has(d)) {
        const dit = ensure(d);
        byIndex.set(d, dit);
      }
    }
  }
  return { exp, keys, items, byIndex, previous, notes };
}
