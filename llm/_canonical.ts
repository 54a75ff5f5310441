// Canonical JSON (sorted object keys, no whitespace) and sha256, private to llm/.
import { createHash } from "node:crypto";

/** Canonical JSON: object keys sorted, `undefined` members dropped. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(v).sort()) {
        const x = (v as Record<string, unknown>)[k];
        if (x !== undefined) out[k] = x;
      }
      return out;
    }
    return v;
  });
}

/** sha256 hex of a string (UTF-8). */
export function sha256Hex(text: string | Uint8Array): string {
  return createHash("sha256").update(text).digest("hex");
}
