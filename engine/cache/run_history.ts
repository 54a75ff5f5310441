/**
 * Run history from the manifests of an experiment: what changed between two
 * runs (overrides, parameters, code files, nodes added or removed), used by
 * `runs EXPERIMENT` and `runs diff A B`.
 *
 * @module
 */
import type { KeyComponents } from "./keys.ts";
import type { Manifest, ManifestNode } from "./manifest.ts";
import type { Store } from "./store.ts";
import type { Json } from "../types.ts";

/** One parameter that changed, over the nodes where it changed. */
export interface ParamChange {
  /** Node id with variants dropped and stage indices as `*` (`curriculum.*.policy`). */
  readonly node: string;
  /** Dotted path in the node's parameters (`samples`, `reward.goal`). */
  readonly path: string;
  /** The value in the earlier run (`undefined`: absent). */
  readonly before: Json | undefined;
  /** The value in the later run. */
  readonly after: Json | undefined;
  /** How many nodes changed so. */
  readonly count: number;
}

/** What changed from one run to another. */
export interface RunChanges {
  /** `--set` overrides only the later run has. */
  readonly overridesAdded: readonly string[];
  /** `--set` overrides only the earlier run has. */
  readonly overridesRemoved: readonly string[];
  /** Parameters that changed. */
  readonly params: readonly ParamChange[];
  /** Code files whose content changed (or that appear in one run only). */
  readonly code: readonly string[];
  /** Node ids only the later run has. */
  readonly added: readonly string[];
  /** Node ids only the earlier run has. */
  readonly removed: readonly string[];
  /** Nodes whose key changed but whose components are no longer readable (entry removed). */
  readonly unexplained: number;
}

/** `curriculum.2.policy[context=full,seed=1]` -> `curriculum.*.policy`. */
export function nodePattern(id: string): string {
  return id.replace(/\[.*\]$/, "").replace(/\.\d+\./g, ".*.");
}

/** Wall time of a run in ms (null while it runs or when it did not finish). */
export function wallMs(m: Manifest): number | null {
  if (!m.finished) return null;
  const ms = Date.parse(m.finished) - Date.parse(m.started);
  return Number.isFinite(ms) ? ms : null;
}

/** The components of a manifest node: in the manifest, else in its stored entry. */
function _components(store: Store, n: ManifestNode): KeyComponents | null {
  if (n.components) return n.components;
  try {
    return store.readEntry(n.key)?.components ?? null;
  } catch {
    return null;
  }
}

function _isRef(x: unknown): boolean {
  return typeof x === "object" && x !== null && !Array.isArray(x) &&
    Object.keys(x).length === 1 && "$ref" in x;
}

/** A parameter value with every input (`$ref`) replaced by one mark: inputs are not parameters, their keys move with upstream changes. */
function _mask(x: Json | undefined): Json | undefined {
  if (_isRef(x)) return "<input>";
  if (Array.isArray(x)) return x.map((y) => _mask(y) ?? null);
  if (typeof x === "object" && x !== null) {
    return Object.fromEntries(
      Object.entries(x).map(([k, y]) => [k, _mask(y) ?? null]),
    );
  }
  return x;
}

/** Leaf differences of two (masked) parameter values; lists compare whole. */
function _leafDiffs(
  a: Json | undefined,
  b: Json | undefined,
  path: string[],
  out: { path: string; before: Json | undefined; after: Json | undefined }[],
): void {
  const isObj = (x: unknown): x is Record<string, Json> =>
    typeof x === "object" && x !== null && !Array.isArray(x);
  if (isObj(a) && isObj(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      _leafDiffs(a[k], b[k], [...path, k], out);
    }
    return;
  }
  if (JSON.stringify(a) !== JSON.stringify(b)) {
    out.push({ path: path.join("."), before: a, after: b });
  }
}

/** Every code file of a manifest: path -> sha256. */
function _codeFiles(m: Manifest): Map<string, string> {
  const files = new Map<string, string>();
  for (const digest of Object.values(m.code ?? {})) {
    for (const [path, sha] of Object.entries(digest)) files.set(path, sha);
  }
  return files;
}

/** What changed from run `a` to run `b` (of the same experiment). */
export function diffRuns(store: Store, a: Manifest, b: Manifest): RunChanges {
  const before = new Set(a.overrides ?? []), after = new Set(b.overrides ?? []);
  const aById = new Map(a.nodes.map((n) => [n.id, n]));
  const bIds = new Set(b.nodes.map((n) => n.id));
  const groups = new Map<string, ParamChange>();
  let unexplained = 0;
  for (const nb of b.nodes) {
    const na = aById.get(nb.id);
    if (!na || na.key === nb.key) continue;
    const ca = _components(store, na), cb = _components(store, nb);
    if (!ca || !cb) {
      unexplained++;
      continue;
    }
    const diffs: {
      path: string;
      before: Json | undefined;
      after: Json | undefined;
    }[] = [];
    _leafDiffs(_mask(ca.params), _mask(cb.params), [], diffs);
    for (const d of diffs) {
      const node = nodePattern(nb.id);
      const id = JSON.stringify([node, d.path, d.before, d.after]);
      const g = groups.get(id);
      groups.set(
        id,
        g ? { ...g, count: g.count + 1 } : { node, ...d, count: 1 },
      );
    }
  }
  const fa = _codeFiles(a), fb = _codeFiles(b);
  const code = [...new Set([...fa.keys(), ...fb.keys()])].filter((p) =>
    fa.get(p) !== fb.get(p) && fa.has(p) && fb.has(p)
  ).sort();
  return {
    overridesAdded: [...after].filter((o) => !before.has(o)),
    overridesRemoved: [...before].filter((o) => !after.has(o)),
    params: [...groups.values()],
    code,
    added: b.nodes.filter((n) => !aById.has(n.id)).map((n) => n.id),
    removed: a.nodes.filter((n) => !bIds.has(n.id)).map((n) => n.id),
    unexplained,
  };
}

function _show(x: Json | undefined): string {
  return x === undefined ? "(unset)" : JSON.stringify(x);
}

/** One line per kind of change (empty when nothing changed). */
export function describeChanges(c: RunChanges, maxParams = 6): string[] {
  const lines: string[] = [];
  if (c.overridesAdded.length) {
    lines.push(`--set added: ${c.overridesAdded.join(" ")}`);
  }
  if (c.overridesRemoved.length) {
    lines.push(`--set dropped: ${c.overridesRemoved.join(" ")}`);
  }
  const params = [...c.params].sort((x, y) =>
    x.node < y.node ? -1 : x.node > y.node ? 1 : x.path < y.path ? -1 : 1
  );
  for (const p of params.slice(0, maxParams)) {
    lines.push(
      `param ${p.node} with.${p.path}: ${_show(p.before)} -> ${
        _show(p.after)
      } (${p.count} node${p.count > 1 ? "s" : ""})`,
    );
  }
  if (params.length > maxParams) {
    lines.push(`and ${params.length - maxParams} more parameter changes`);
  }
  if (c.code.length) {
    lines.push(
      `code: ${c.code.slice(0, 6).join(", ")}${
        c.code.length > 6 ? ` and ${c.code.length - 6} more files` : ""
      }`,
    );
  }
  const list = (ids: readonly string[]) =>
    [...new Set(ids.map(nodePattern))].slice(0, 4).join(", ");
  if (c.added.length) {
    lines.push(`${c.added.length} nodes added (${list(c.added)})`);
  }
  if (c.removed.length) {
    lines.push(`${c.removed.length} nodes removed (${list(c.removed)})`);
  }
  if (c.unexplained) {
    lines.push(
      `${c.unexplained} keys changed whose entries are gone (cache gc): not explained`,
    );
  }
  return lines;
}
