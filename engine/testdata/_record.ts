/**
 * Test helper: when ENVSMITH_TEST_LOG is set, test kinds append one line per
 * execution (`id key`) to it, so tests can count what actually ran.
 *
 * @module
 */
import type { NodeContext } from "../types.ts";

/** Appends `id key` to $ENVSMITH_TEST_LOG (if set). */
export function record(ctx: NodeContext): void {
  const path = Deno.env.get("ENVSMITH_TEST_LOG");
  if (path) {
    Deno.writeTextFileSync(path, `${ctx.id} ${ctx.key}\n`, { append: true });
  }
}
