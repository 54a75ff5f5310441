/**
 * Planning: which nodes are cached, which run, which wait for inputs, which
 * are skipped, and why a node is not cached (diffed against the last run).
 *
 * @module
 */
import { existsSync } from "node:fs";
import { nodeCodeDigest } from "../cache/digest.ts";
import { matchesPattern } from "../compile/node_pattern.ts";
import { CorruptEntryError } from "../errors.ts";
import type { Experiment, GraphNode } from "../compile/experiment.ts";
import {
  computeKeys,
  explainChange,
  type NodeKey,
  type PreviousKey,
} from "../cache/keys.ts";
import {
  listManifests,
  type Manifest,
  type ManifestNode,
  readManifest,
} from "../cache/manifest.ts";
import type { ImportMark, Store } from "../cache/store.ts";
import { UserError } from "../errors.ts";
import { didYouMean } from "../suggest.ts";

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
  /** Its entry came from a bundle: shown, never used as a cached result (see `Store.importMark`). */
  imported?: ImportMark;
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

/** What planning one experiment knows (shared by the steps of {@linkcode makePlan}). */
interface _Planning {
  readonly exp: Experiment;
  readonly store: Store;
  readonly keys: readonly NodeKey[];
  readonly history: _History;
  /** Keys with an entry file (one directory listing instead of a failed open per missing entry). */
  readonly present: ReadonlySet<string>;
  /** Keys whose entry was imported from a bundle. */
  readonly imported: ReadonlySet<string>;
  readonly notes: string[];
  /** Item per node index, made on first use. */
  readonly planned: Map<number, PlanItem>;
}

/** The last run that included each node (looking back over a few runs, so an `--only` run does not hide the others). */
interface _History {
  readonly previous: Manifest | null;
  readonly byId: ReadonlyMap<string, ManifestNode>;
  readonly code: ReadonlyMap<string, Manifest["code"]>;
}

function _history(
  exp: Experiment,
  store: Store,
  notes: string[],
): _History {
  const byId = new Map<string, ManifestNode>();
  const code = new Map<string, Manifest["code"]>();
  let previous: Manifest | null = null;
  const files = listManifests(store, exp.name);
  for (let i = files.length - 1, read = 0; i >= 0 && read < 5; i--) {
    const m = readManifest(files[i]!, (line) => notes.push(line));
    if (!m) continue;
    read++;
    previous ??= m;
    for (const n of m.nodes) {
      if (n.status === "unselected" || byId.has(n.id)) continue;
      byId.set(n.id, n);
      code.set(n.id, m.code);
    }
    if (byId.size >= exp.nodes.length) break;
  }
  return { previous, byId, code };
}

/**
 * Makes the plan: verifies the entries of cached nodes (quarantining corrupt ones) and explains misses.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import { compileExperiment } from "../compile/experiment.ts";
 * const one: NodeKind<{ x: number }> = {
 *   name: "one", description: "x back", params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url, run: (p) => Promise.resolve({ value: p.x }),
 * };
 * const exp = compileExperiment("e.yaml", "experiment: e\nseed: 1\nnodes:\n  a: { kind: one, with: { x: 4 } }\n", {
 *   kinds: [one as NodeKind],
 * });
 * import { Store } from "../cache/store.ts";
 * import { makePlan } from "./plan.ts";
 * const dir = await Deno.makeTempDir();
 * const plan = makePlan(exp, new Store(dir));
 * assert.deepEqual(plan.items.map((i) => [i.node.id, i.status]), [["a", "run"]]);
 * await Deno.remove(dir, { recursive: true });
 * ```
 */
export function makePlan(
  exp: Experiment,
  store: Store,
  options: PlanOptions = {},
): Plan {
  const keys = options.keys ?? computeKeys(exp);
  const selected = options.only && options.only.length > 0
    ? selectNodes(exp, options.only)
    : null;
  const notes: string[] = [];
  const p: _Planning = {
    exp,
    store,
    keys,
    history: _history(exp, store, notes),
    present: new Set(store.keys()),
    imported: store.importedKeys(),
    notes,
    planned: new Map(),
  };
  const need = selected
    ? _withInputs(p, selected, options.exact === true)
    : null;
  const { items, byIndex } = _items(p, need);
  if (selected && options.exact) _checkExact(exp, items);
  // Cached inputs of selected nodes are needed for their values.
  for (const it of items) {
    for (const d of it.node.deps) {
      if (!byIndex.has(d)) byIndex.set(d, _item(p, d));
    }
  }
  return {
    exp,
    keys,
    items,
    byIndex,
    previous: p.history.previous,
    notes: p.notes,
  };
}

/** The plan item of node `i`, probed on first use. */
function _item(p: _Planning, i: number): PlanItem {
  let it = p.planned.get(i);
  if (!it) {
    it = _probe(p, i);
    p.planned.set(i, it);
  }
  return it;
}

/** Whether node `i` is cached, skipped or must run, and why it is not cached. */
function _probe(p: _Planning, i: number): PlanItem {
  const node = p.exp.nodes[i]!;
  const key = p.keys[i]!;
  const item: PlanItem = { node, key, status: "run", why: [], waitingFor: [] };
  if (node.skipped) {
    item.status = "skipped";
    item.why.push(node.skipped);
    return item;
  }
  if (!key.cacheable) {
    item.why.push(`not cacheable: ${key.reason}`);
    return item;
  }
  if (p.imported.has(key.key) && p.present.has(key.key)) {
    // Shown by tables, never a cached result here (nor a corrupt one when
    // its blobs were not in the bundle).
    const mark = p.store.importMark(key.key);
    if (mark) item.imported = mark;
    item.why.push(
      mark?.resultsOnly
        ? `imported from ${mark.bundle} without its blobs (results only): run computes it here`
        : `imported from ${
          mark?.bundle ?? "a bundle"
        }, not computed here: run computes it (cache import --trust takes a bundle as it is)`,
    );
    return item;
  }
  try {
    if (p.present.has(key.key) && p.store.checkEntry(key.key)) {
      item.status = "cached";
      return item;
    }
  } catch (e) {
    if (!(e instanceof CorruptEntryError)) throw e;
    p.notes.push(
      existsSync(e.file)
        ? `${e.message}; it could not be moved aside (a read-only cache?): ${node.id} will be recomputed by a run on a writable cache`
        : `${e.message}; moved aside, ${node.id} will be recomputed`,
    );
    item.why.push(`its cache entry was corrupt (${e.message})`);
    return item;
  }
  item.why.push(..._whyNotCached(p, node, key));
  return item;
}

/** Why a cacheable node has no entry, from the last run that included it. */
function _whyNotCached(p: _Planning, node: GraphNode, key: NodeKey): string[] {
  const prev = p.history.byId.get(node.id);
  if (!p.history.previous) return ["not computed yet"];
  if (!prev) return ["new node (not in the last run)"];
  if (prev.key !== key.key) return _keyChanged(p, node, key, prev);
  switch (prev.status) {
    case "failed":
      return [`failed in the last run: ${prev.error ?? "?"}`];
    case "blocked":
      return [`blocked in the last run: ${prev.reason ?? "an input failed"}`];
    case "skipped":
      return [`skipped in the last run: ${prev.reason ?? "?"}`];
    case "cached":
    case "done":
      return ["its cache entry is gone (cache gc, or another cache directory)"];
    default:
      return ["the last run stopped before it finished"];
  }
}

/** What changed between the last run's key of a node and its key now. */
function _keyChanged(
  p: _Planning,
  node: GraphNode,
  key: NodeKey,
  prev: ManifestNode,
): string[] {
  let codeFiles: Record<string, string> | undefined;
  try {
    codeFiles = {
      ...nodeCodeDigest(node.kind, node.literal, p.exp.dir).files,
    };
  } catch { /* explained as not cacheable elsewhere */ }
  let before: PreviousKey | null = null;
  if (prev.components) {
    const files = p.history.code.get(node.id)?.[prev.components.code];
    before = {
      components: prev.components,
      inputs: prev.inputs ?? {},
      ...(files ? { codeFiles: files } : {}),
    };
  } else {
    try {
      const e = p.store.readEntry(prev.key);
      if (e) {
        before = {
          components: e.components,
          inputs: { ...e.inputs },
          codeFiles: { ...e.codeFiles },
        };
      }
    } catch { /* corrupt: no explanation */ }
  }
  if (!before) {
    return ["its key changed (the earlier components are no longer stored)"];
  }
  return explainChange(before, {
    components: key.components,
    inputs: key.inputs,
    ...(codeFiles ? { codeFiles } : {}),
  });
}

/** The selected nodes plus (unless `exact`) their uncached inputs, transitively. */
function _withInputs(
  p: _Planning,
  selected: ReadonlySet<number>,
  exact: boolean,
): Set<number> {
  const need = new Set(selected);
  const order = [...selected].sort((a, b) => b - a);
  const visit = new Set<number>(order);
  const stack = [...order];
  while (stack.length > 0) {
    const i = stack.pop()!;
    const it = _item(p, i);
    if (it.status === "cached" || it.status === "skipped") continue;
    for (const d of p.exp.nodes[i]!.deps) {
      const dit = _item(p, d);
      if (!visit.has(d) && !exact && dit.status !== "cached") {
        visit.add(d);
        need.add(d);
        stack.push(d);
      }
    }
  }
  return need;
}

/** The items of the needed nodes (all without a selection) in topological order, with what each waits for. */
function _items(
  p: _Planning,
  need: ReadonlySet<number> | null,
): { items: PlanItem[]; byIndex: Map<number, PlanItem> } {
  const items: PlanItem[] = [];
  const byIndex = new Map<number, PlanItem>();
  const status = new Map<number, PlanStatus>();
  for (const node of p.exp.nodes) {
    if (need && !need.has(node.index)) continue;
    const it = _item(p, node.index);
    if (it.status !== "cached" && it.status !== "skipped") {
      for (const d of node.deps) {
        const ds = status.get(d) ?? _item(p, d).status;
        if (ds === "skipped") {
          it.status = "skipped";
          it.why = [`input ${p.exp.nodes[d]!.id} is skipped`];
          break;
        }
        if (ds !== "cached") it.waitingFor.push(p.exp.nodes[d]!.id);
      }
      if (it.status === "run" && it.waitingFor.length > 0) {
        it.status = "blocked";
      }
    }
    status.set(node.index, it.status);
    items.push(it);
    byIndex.set(node.index, it);
  }
  return { items, byIndex };
}

/** In exact mode (`run-node`), inputs that are not cached cannot be satisfied. */
function _checkExact(exp: Experiment, items: readonly PlanItem[]): void {
  for (const it of items) {
    if (it.waitingFor.length === 0) continue;
    const many = it.waitingFor.length > 1;
    throw new UserError(
      `${it.node.id} cannot run alone: its input${many ? "s" : ""} ${
        it.waitingFor.join(", ")
      } ${
        many ? "are" : "is"
      } not cached; run them first (./envsmith run ${exp.file} --only ${
        it.waitingFor.join(" ")
      })`,
    );
  }
}
