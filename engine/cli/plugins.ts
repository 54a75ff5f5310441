/**
 * Load node kinds from modules outside `nodes/` (`--kinds MODULE`,
 * `$ENVSMITH_KINDS`): each module exports `kinds` (an array) or `kind`.
 *
 * @module
 */
import { resolve } from "node:path";
import { UserError } from "../errors.ts";
import { toFileUrl } from "../paths.ts";
import type { NodeKind } from "../types.ts";

/**
 * Import each module (a path relative to the working directory, or a URL) and
 * collect its kinds.
 *
 * @throws {UserError} naming the module when it cannot be imported or exports
 * no kinds.
 */
export async function loadKindModules(
  modules: readonly string[],
): Promise<NodeKind[]> {
  const out: NodeKind[] = [];
  for (const m of modules) {
    let mod: Record<string, unknown>;
    try {
      mod = await import(m.includes("://") ? m : toFileUrl(resolve(m)));
    } catch (e) {
      throw new UserError(
        `--kinds ${m}: cannot import: ${(e as Error).message}`,
      );
    }
    const list = mod.kinds ?? (mod.kind ? [mod.kind] : undefined);
    if (!Array.isArray(list)) {
      throw new UserError(
        `--kinds ${m}: the module exports neither "kinds" (an array) nor "kind"`,
      );
    }
    out.push(...(list as NodeKind[]));
  }
  return out;
}
