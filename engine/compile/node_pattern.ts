/**
 * Node selection patterns (`--only`, `cache export --filter`): an id, a plain
 * id, a group, or a glob with `*` over ids.
 *
 * @module
 */
import type { GraphNode } from "./graph.ts";

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
