/**
 * Parameters: `with:` is checked against the kind's valibot schema before
 * anything runs. References are holes (their values are unknown until the
 * referenced node runs): issues inside a hole are not reported; literal
 * values are. Nodes that read the matrix are checked again per variant.
 *
 * @module
 */
import * as v from "valibot";
import {
  InputRef,
  MatrixRef,
  NodeRef,
  type Resolvable,
  SeedRef,
  type Template,
} from "../refs.ts";
import type { DocPath } from "./source.ts";
import { didYouMean } from "../suggest.ts";
import type { NodeKind } from "../types.ts";
import { Broken } from "./references.ts";
import type { Compilation, PlainNode } from "./plain_node.ts";

/** Checks a plain node's kind and its `with:` (references as holes). */
export function checkParams(c: Compilation, p: PlainNode): void {
  const kind = c.kinds.get(p.kindName);
  if (!kind) {
    c.diags.report(
      "unknown-kind",
      [...p.at, "kind"],
      `unknown kind "${p.kindName}"${
        didYouMean(p.kindName, [...c.kinds.keys(), "stages"])
      }`,
    );
    return;
  }
  const keys = _objectKeys(kind.params);
  if (keys) {
    c.diags.unknownKeys(
      p.rawWith,
      keys,
      [...p.at, "with"],
      `parameter of kind ${kind.name}`,
      "unknown-param",
    );
  }
  validateParams(c, kind, p.template, [...p.at, "with"], "");
}

/**
 * Validates parameters (a template, or one variant's resolvable parameters)
 * against the kind's schema; `suffix` is appended to each message (e.g.
 * ` (in score[seed=2])`).
 */
export function validateParams(
  c: Compilation,
  kind: NodeKind,
  params: Template | Resolvable,
  at: DocPath,
  suffix: string,
): void {
  const holes: DocPath[] = [];
  const r = v.safeParse(kind.params, _probe(params, [], holes));
  if (r.success) return;
  const inHole = (path: DocPath) =>
    holes.some((h) => {
      const n = Math.min(h.length, path.length);
      for (let i = 0; i < n; i++) {
        if (String(h[i]) !== String(path[i])) return false;
      }
      return true;
    });
  // Unknown top-level parameters are reported by unknownKeys (with "did
  // you mean"); unknown keys deeper down (a config's fields) here.
  const issues = r.issues.filter((i) =>
    !(i.type === "object" && i.expected === "never") &&
    !(i.type === "strict_object" && i.expected === "never" &&
      (i.path?.length ?? 0) <= 1)
  );
  // A mapping key is written literally even when its value is a
  // reference (`files: { ../x: $node.blob }`): it is in a hole only when the
  // whole mapping is one.
  const isKey = (i: v.BaseIssue<unknown>) => i.path?.at(-1)?.origin === "key";
  const aboveHole = (path: DocPath) =>
    holes.some((h) =>
      h.length < path.length && h.every((x, i) => String(x) === String(path[i]))
    );
  const before = c.diags.list.length;
  c.diags.issues(issues.filter(isKey), at, "invalid-param", aboveHole, true);
  c.diags.issues(
    issues.filter((i) => !isKey(i)),
    at,
    "invalid-param",
    inHole,
    true,
  );
  if (suffix) c.diags.suffixSince(before, suffix);
}

function _objectKeys(schema: unknown): string[] | null {
  const s = schema as { type?: string; entries?: Record<string, unknown> };
  if (s && (s.type === "object" || s.type === "strict_object") && s.entries) {
    return Object.keys(s.entries);
  }
  return null;
}

/** The parameters with every reference replaced by a placeholder string; `holes` collects their paths. */
function _probe(
  t: Template | Resolvable,
  at: (string | number)[],
  holes: DocPath[],
): unknown {
  if (
    t instanceof NodeRef || t instanceof MatrixRef || t instanceof SeedRef ||
    t instanceof InputRef || t instanceof Broken
  ) {
    holes.push([...at]);
    return "$ref";
  }
  if (t === null || typeof t !== "object") return t;
  if (Array.isArray(t)) return t.map((x, i) => _probe(x, [...at, i], holes));
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(t)) out[k] = _probe(x, [...at, k], holes);
  return out;
}
