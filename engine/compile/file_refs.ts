/**
 * File references: `$node.FIELD` where the referenced node's kind declares
 * FIELD in {@linkcode NodeKind.files}. They are resolved to a path in the
 * store when the reading node runs, left out of what its fingerprint sees,
 * and refused at plan when they name a file field (one some registered kind
 * declares) on a node whose kind does not produce it.
 *
 * @module
 */
import { isRecord } from "./diagnostics.ts";
import { MatrixRef, NodeRef, type Template } from "../refs.ts";
import type { NodeKind } from "../types.ts";
import type { DocPath } from "./source.ts";
import type { Compilation, PlainNode } from "./plain_node.ts";

/** Whether `kind`'s value field at `path` is a declared file. */
export function isFileField(
  kind: NodeKind | undefined,
  path: readonly string[],
): boolean {
  return path.length === 1 && kind?.files !== undefined &&
    Object.hasOwn(kind.files, path[0]!);
}

/** Whether a reference reads a declared file of the node it names. */
export function isFileReference(c: Compilation, ref: NodeRef): boolean {
  const target = c.plains.get(ref.node);
  return target !== undefined &&
    isFileField(c.kinds.get(target.kindName), ref.path);
}

/**
 * Reports every reference of `p` that reads a file field (a field name some
 * registered kind declares as a file) of a node whose kind does not
 * produce that file, e.g. `gguf: $policy.gguf` where `policy` is an ONNX
 * `train` node.
 */
export function checkFileReferences(c: Compilation, p: PlainNode): void {
  const producers = new Map<string, string[]>();
  for (const k of c.kinds.values()) {
    for (const f of Object.keys(k.files ?? {})) {
      producers.set(f, [...(producers.get(f) ?? []), k.name]);
    }
  }
  if (producers.size === 0) return;
  const visit = (t: Template, at: DocPath): void => {
    if (t instanceof NodeRef) {
      const field = t.path[0];
      const makers = field === undefined ? undefined : producers.get(field);
      if (makers === undefined || t.path.length !== 1) return;
      const target = c.plains.get(t.node);
      const kind = target ? c.kinds.get(target.kindName) : undefined;
      if (target && kind && !isFileField(kind, t.path)) {
        c.diags.report(
          "reference",
          at,
          `"${t.raw}": ${t.node} (kind ${kind.name}) produces no ${field} file; reference a node of kind ${
            makers.join(" or ")
          }`,
        );
      }
      return;
    }
    if (t instanceof MatrixRef) {
      for (const e of t.embedded.values()) visit(e, at);
      return;
    }
    if (Array.isArray(t)) {
      t.forEach((x, i) => visit(x, [...at, i]));
      return;
    }
    if (isRecord(t)) {
      for (const [k, x] of Object.entries(t)) visit(x as Template, [...at, k]);
    }
  };
  visit(p.template, [...p.at, "with"]);
}
