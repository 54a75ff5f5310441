/**
 * Content keys of nodes and why a key changed.
 *
 * A key is the sha256 of the canonical JSON of its {@linkcode KeyComponents}:
 * the key format version, the kind, the digest of the kind's module graph,
 * the parameters (references replaced by the referenced node's key and field
 * path) and, for kinds that declare one, a fingerprint (e.g. digests of input
 * files). Any part that cannot be hashed makes the node not cacheable.
 *
 * @module
 */
import { canonicalJson, sha256Hex } from "../canonical.ts";
import { digestGeneration, nodeCodeDigest } from "./digest.ts";
import { UserError } from "../errors.ts";
import { DEFAULT_LIMITS } from "../limits.ts";
import type { Experiment } from "../compile/experiment.ts";
import { InputRef, type Resolvable } from "../refs.ts";
import { isFileField } from "../compile/file_refs.ts";
import type { Json } from "../types.ts";

/** Bumped when the meaning of keys changes (invalidates every cache entry). */
export const KEY_FORMAT = 1;

/** What a key is the hash of. */
export interface KeyComponents {
  /** {@linkcode KEY_FORMAT}. */
  readonly format: number;
  /** Kind name. */
  readonly kind: string;
  /** Digest of the kind's module graph. */
  readonly code: string;
  /** Parameters; an input is `{"$ref": {"key": KEY, "path": [...]}}` (with `"file": true` for a file reference); literal keys starting with `$` get one more `$`. */
  readonly params: Json;
  /** The kind's fingerprint, when it has one. */
  readonly fingerprint?: Json;
}

/** The key of one node. */
export interface NodeKey {
  /** sha256 hex. For a node that is not cacheable, a key that is never stored. */
  readonly key: string;
  /** Whether results may be stored and reused. */
  readonly cacheable: boolean;
  /** Why not, when not. */
  readonly reason?: string;
  /** What was hashed (partial when not cacheable). */
  readonly components: KeyComponents;
  /** Key of each input -> its node id (to explain changes by name). */
  readonly inputs: Readonly<Record<string, string>>;
}

const _keysMemo = new WeakMap<
  Experiment,
  { generation: number; keys: NodeKey[] }
>();

/**
 * Computes the keys of every node of an experiment (in its topological
 * order). Remembered per experiment object for the life of the process
 * (until the code digests are cleared): `tables` and `report` ask for the
 * keys of one experiment several times. Treat the array as read-only.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import * as v from "valibot";
 * import type { NodeKind } from "../types.ts";
 * import { compileExperiment } from "../compile/experiment.ts";
 * import { computeKeys } from "./keys.ts";
 * const one: NodeKind<{ x: number }> = {
 *   name: "one", description: "x back", params: v.strictObject({ x: v.number() }),
 *   module: import.meta.url, run: (p) => Promise.resolve({ value: p.x }),
 * };
 * const keysOf = (x: number) =>
 *   computeKeys(compileExperiment("e.yaml", `experiment: e\nseed: 1\nnodes:\n  a: { kind: one, with: { x: ${x} } }\n`, {
 *     kinds: [one as NodeKind],
 *   }));
 * assert.match(keysOf(4)[0]!.key, /^[0-9a-f]{64}$/);
 * assert.equal(keysOf(4)[0]!.key, keysOf(4)[0]!.key); // same content, same key
 * assert.notEqual(keysOf(4)[0]!.key, keysOf(5)[0]!.key);
 * ```
 */
export function computeKeys(exp: Experiment): NodeKey[] {
  const generation = digestGeneration();
  const hit = _keysMemo.get(exp);
  if (hit && hit.generation === generation) return hit.keys;
  const keys = _computeKeys(exp);
  _keysMemo.set(exp, { generation, keys });
  return keys;
}

function _computeKeys(exp: Experiment): NodeKey[] {
  const out: NodeKey[] = [];
  for (const node of exp.nodes) {
    const inputs: Record<string, string> = {};
    let reason: string | undefined;
    let code = "";
    try {
      code = nodeCodeDigest(node.kind, node.literal, exp.dir).digest;
    } catch (e) {
      if (e instanceof UserError) {
        throw new UserError(`${node.id}: ${e.message}`);
      }
      reason = `code of kind ${node.kind.name} cannot be digested: ${
        (e as Error).message
      }`;
    }
    const params = _encode(node.params, (ref) => {
      const dep = out[ref.index]!;
      inputs[dep.key] = exp.nodes[ref.index]!.id;
      if (!dep.cacheable && !reason) {
        reason = `input ${exp.nodes[ref.index]!.id} is not cacheable`;
      }
      // A file reference (the producer's kind declares the field in
      // `files`) is marked, so a job rebuilt from its key components
      // resolves it to a path too.
      return isFileField(exp.nodes[ref.index]!.kind, ref.path)
        ? { $ref: { key: dep.key, path: [...ref.path], file: true } }
        : { $ref: { key: dep.key, path: [...ref.path] } };
    });
    let fingerprint: Json | undefined;
    if (node.kind.fingerprint) {
      try {
        fingerprint = node.kind.fingerprint(node.literal, {
          baseDir: exp.dir,
          inputBytes: (exp.limits ?? DEFAULT_LIMITS).inputBytes,
        });
      } catch (e) {
        // A mistake in the experiment (a declared input file that does not
        // exist) is refused before anything runs, not run to fail.
        if (e instanceof UserError) {
          throw new UserError(`${node.id}: ${e.message}`);
        }
        reason ??= `fingerprint of kind ${node.kind.name} failed: ${
          (e as Error).message
        }`;
      }
    }
    const components: KeyComponents = {
      format: KEY_FORMAT,
      kind: node.kind.name,
      code,
      params,
      ...(fingerprint !== undefined ? { fingerprint } : {}),
    };
    let key: string;
    try {
      key = sha256Hex(canonicalJson(components));
    } catch (e) {
      reason ??= `parameters cannot be hashed: ${(e as Error).message}`;
      key = "";
    }
    if (reason) {
      key = sha256Hex(
        canonicalJson({
          uncacheable: KEY_FORMAT,
          experiment: exp.name,
          id: node.id,
        }),
      );
      out.push({ key, cacheable: false, reason, components, inputs });
    } else out.push({ key, cacheable: true, components, inputs });
  }
  return out;
}

function _encode(t: Resolvable, ref: (r: InputRef) => Json): Json {
  if (t instanceof InputRef) return ref(t);
  if (t === null || typeof t !== "object") return t;
  if (Array.isArray(t)) return t.map((x) => _encode(x, ref));
  const out: { [k: string]: Json } = {};
  for (const [k, x] of Object.entries(t)) {
    out[k.startsWith("$") ? "$" + k : k] = _encode(x, ref);
  }
  return out;
}

/** A uint32 seed from a key (its first 8 hex digits). */
export function seedOfKey(key: string): number {
  return Number.parseInt(key.slice(0, 8), 16) >>> 0;
}

/** What is known about an earlier key of the same node, to explain a change. */
export interface PreviousKey {
  /** The earlier components. */
  readonly components: KeyComponents;
  /** Key -> node id of the earlier inputs. */
  readonly inputs?: Readonly<Record<string, string>>;
  /** Earlier code files (path -> sha256), when known. */
  readonly codeFiles?: Readonly<Record<string, string>>;
}

function _show(x: Json | undefined): string {
  if (x === undefined) return "(absent)";
  const s = JSON.stringify(x);
  return s.length > 48 ? s.slice(0, 45) + "..." : s;
}

function _isRef(
  x: Json | undefined,
): x is { $ref: { key: string; path: string[] } } {
  return typeof x === "object" && x !== null && !Array.isArray(x) &&
    Object.keys(x).length === 1 && "$ref" in x;
}

/**
 * Human-readable reasons why `now` differs from `before`, e.g.
 * `param with.updates changed 40 -> 60`, `input curriculum.1.policy changed`,
 * `code of nodes/train.ts changed`.
 */
export function explainChange(
  before: PreviousKey,
  now: {
    components: KeyComponents;
    inputs: Readonly<Record<string, string>>;
    codeFiles?: Readonly<Record<string, string>>;
  },
): string[] {
  const out: string[] = [];
  const a = before.components, b = now.components;
  if (a.format !== b.format) {
    out.push(`key format changed ${a.format} -> ${b.format}`);
  }
  if (a.kind !== b.kind) out.push(`kind changed ${a.kind} -> ${b.kind}`);
  else if (a.code !== b.code) {
    out.push(_codeChange(before.codeFiles, now.codeFiles, b.kind));
  }
  _paramChanges(a.params, b.params, "with", before, now.inputs, out);
  if (
    canonicalJson(a.fingerprint ?? null) !==
      canonicalJson(b.fingerprint ?? null)
  ) {
    const sub: string[] = [];
    _fingerprintChanges(a.fingerprint, b.fingerprint, "", sub);
    out.push(`fingerprint changed: ${sub.join(", ")}`);
  }
  if (out.length === 0) {
    out.push(
      "no recorded difference (the earlier result was not stored or was removed)",
    );
  }
  return out;
}

/** `code of nodes/train.ts, mapf/pool.ts changed`, from the files of both digests when known. */
function _codeChange(
  fa: Readonly<Record<string, string>> | undefined,
  fb: Readonly<Record<string, string>> | undefined,
  kind: string,
): string {
  if (!fa || !fb) return `code of kind ${kind} changed`;
  const changed = [...new Set([...Object.keys(fa), ...Object.keys(fb)])]
    .sort().filter((f) => fa[f] !== fb[f]);
  const files = changed.map((f) =>
    f in fa ? (f in fb ? f : `${f} (removed)`) : `${f} (new)`
  );
  return changed.length
    ? `code of ${files.join(", ")} changed`
    : `code of kind ${kind} changed (package versions)`;
}

function _isObject(x: Json | undefined): x is { [k: string]: Json } {
  return typeof x === "object" && x !== null && !Array.isArray(x);
}

/** The parameter differences between `x` and `y` at `path` (inputs by name). */
function _paramChanges(
  x: Json | undefined,
  y: Json | undefined,
  path: string,
  before: PreviousKey,
  inputs: Readonly<Record<string, string>>,
  out: string[],
): void {
  if (_isRef(x) || _isRef(y)) {
    out.push(..._refChange(x, y, path, before, inputs));
    return;
  }
  if (_isObject(x) && _isObject(y)) {
    for (
      const k of [...new Set([...Object.keys(x), ...Object.keys(y)])].sort()
    ) {
      const sub = `${path}.${k.startsWith("$$") ? k.slice(1) : k}`;
      _paramChanges(x[k], y[k], sub, before, inputs, out);
    }
    return;
  }
  if (Array.isArray(x) && Array.isArray(y) && x.length === y.length) {
    x.forEach((xi, i) =>
      _paramChanges(xi, y[i], `${path}[${i}]`, before, inputs, out)
    );
    return;
  }
  if (
    canonicalJson(x ?? null) !== canonicalJson(y ?? null) ||
    (x === undefined) !== (y === undefined)
  ) {
    out.push(`param ${path} changed ${_show(x)} -> ${_show(y)}`);
  }
}

/** How a reference (or a value that is now or was a reference) changed. */
function _refChange(
  x: Json | undefined,
  y: Json | undefined,
  path: string,
  before: PreviousKey,
  inputs: Readonly<Record<string, string>>,
): string[] {
  if (!_isRef(x) || !_isRef(y)) {
    return [
      `param ${path} changed ${_isRef(x) ? "(a reference)" : _show(x)} -> ${
        _isRef(y) ? "(a reference)" : _show(y)
      }`,
    ];
  }
  if (x.$ref.key !== y.$ref.key) {
    const name = inputs[y.$ref.key] ?? before.inputs?.[x.$ref.key] ??
      y.$ref.key.slice(0, 12);
    const was = before.inputs?.[x.$ref.key];
    return [
      was && was !== name
        ? `input ${path} now reads ${name} (was ${was})`
        : `input ${name} changed`,
    ];
  }
  if (canonicalJson(x.$ref.path) !== canonicalJson(y.$ref.path)) {
    return [
      `reference ${path} now reads field ${
        y.$ref.path.join(".") || "(whole value)"
      } (was ${x.$ref.path.join(".") || "(whole value)"})`,
    ];
  }
  return [];
}

/** The paths at which two fingerprints differ. */
function _fingerprintChanges(
  x: Json | undefined,
  y: Json | undefined,
  p: string,
  out: string[],
): void {
  if (_isObject(x) && _isObject(y)) {
    for (
      const k of [...new Set([...Object.keys(x), ...Object.keys(y)])].sort()
    ) {
      _fingerprintChanges(x[k], y[k], p ? `${p}.${k}` : k, out);
    }
  } else if (canonicalJson(x ?? null) !== canonicalJson(y ?? null)) {
    out.push(p || "(all)");
  }
}
