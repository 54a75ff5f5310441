/**
 * Limits on how far an experiment expands, checked before the expansion they
 * bound: the stages of a `stages` node before it is unrolled, the matrix
 * product before variants are listed, and the node count before the graph is
 * built. A file over a limit gets one diagnostic at the place that causes it.
 *
 * @module
 */
import { raiseHint } from "../limits.ts";
import type { DocPath } from "./source.ts";
import type { Compilation, PlainNode } from "./plain_node.ts";

/** `1234567` -> `1,234,567` */
function _n(x: number): string {
  return x.toLocaleString("en-US");
}

/**
 * Whether a stages node of `count` stages with `each` nodes may be unrolled
 * (within the stages limit and, with the nodes collected so far, the nodes
 * limit); reports at `at` (its `count`) when not.
 */
export function checkStageCount(
  c: Compilation,
  count: number,
  each: number,
  at: DocPath,
): boolean {
  if (count > c.limits.stages) {
    c.diags.report(
      "limit",
      at,
      `count: ${_n(count)} stages; a stages node is limited to ${
        _n(c.limits.stages)
      }; ${raiseHint("stages")}`,
    );
    return false;
  }
  const total = c.plains.size + count * each;
  if (total > c.limits.nodes) {
    c.diags.report(
      "limit",
      at,
      `count: ${_n(count)} stages of ${each} nodes unroll into ${
        _n(count * each)
      } nodes; an experiment is limited to ${_n(c.limits.nodes)} nodes; ${
        raiseHint("nodes")
      }`,
    );
    return false;
  }
  return true;
}

/** Whether the matrix product is within the variants limit; reports at `matrix` when not. */
export function checkVariantCount(c: Compilation): boolean {
  let n = 1;
  const zipped = new Set<string>();
  for (const a of c.axes) {
    if (a.zip !== undefined) {
      if (zipped.has(a.zip)) continue; // drawn jointly with an earlier axis
      zipped.add(a.zip);
    }
    n *= a.values.length;
  }
  if (n <= c.limits.variants) return true;
  c.diags.report(
    "limit",
    ["matrix"],
    `the matrix has ${_n(n)} variants (${
      c.axes.map((a) => `${a.values.length} ${a.name}`).join(" x ")
    }); a matrix is limited to ${_n(c.limits.variants)}; ${
      raiseHint("variants")
    }`,
    true,
  );
  return false;
}

/**
 * How many copies of each plain node expanding `order` over `variants` makes
 * (one per combination of the axes it depends on, at most one per variant),
 * each weighted by `weight`: the total and the three largest, as text.
 */
function _expanded(
  c: Compilation,
  order: readonly PlainNode[],
  variants: readonly Readonly<Record<string, string>>[],
  weight: (p: PlainNode) => number,
): { total: number; top: string } {
  const sizes = new Map(c.axes.map((a) => [a.name, a.values.length]));
  const counts: [string, number][] = [];
  let total = 0;
  for (const p of order) {
    let n = 1;
    for (const a of p.axes) n *= sizes.get(a) ?? 1;
    n = Math.min(n, variants.length) * weight(p);
    counts.push([p.id, n]);
    total += n;
  }
  const top = counts.sort((a, b) => b[1] - a[1]).slice(0, 3).map(([id, n]) =>
    `${id}: ${_n(n)}`
  ).join(", ");
  return { total, top };
}

/**
 * Whether expanding `order` over `variants` stays within the nodes limit;
 * reports at `nodes` when not, naming the plain nodes that expand most.
 */
export function checkNodeCount(
  c: Compilation,
  order: readonly PlainNode[],
  variants: readonly Readonly<Record<string, string>>[],
): boolean {
  const { total, top } = _expanded(c, order, variants, () => 1);
  if (total <= c.limits.nodes) return true;
  c.diags.report(
    "limit",
    ["nodes"],
    `the experiment expands to ${
      _n(total)
    } nodes (${top}); an experiment is limited to ${_n(c.limits.nodes)}; ${
      raiseHint("nodes")
    }`,
    true,
  );
  return false;
}

/**
 * Whether expanding `order` over `variants` stays within the references
 * limit (each copy of a plain node holds its references again); reports at
 * `nodes` when not, naming the plain nodes that hold most.
 */
export function checkReferenceCount(
  c: Compilation,
  order: readonly PlainNode[],
  variants: readonly Readonly<Record<string, string>>[],
  referencesOf: (p: PlainNode) => number,
): boolean {
  const { total, top } = _expanded(c, order, variants, referencesOf);
  if (total <= c.limits.references) return true;
  c.diags.report(
    "limit",
    ["nodes"],
    `the experiment expands to ${
      _n(total)
    } references between nodes (${top}); an experiment is limited to ${
      _n(c.limits.references)
    }; ${raiseHint("references")}`,
    true,
  );
  return false;
}
