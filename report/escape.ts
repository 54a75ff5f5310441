/**
 * Escaping of text put into the report's HTML and SVG.
 *
 * @module
 */

/**
 * Escapes `&`, `<`, `>`, `"` and `'` so any string is safe as element text
 * and inside a quoted attribute value (HTML and SVG).
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { escapeHtml } from "./escape.ts";
 * assert.equal(
 *   escapeHtml(`<script>alert("x")</script>`),
 *   "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;",
 * );
 * // &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;
 * ```
 */
export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) =>
      c === "&"
        ? "&amp;"
        : c === "<"
        ? "&lt;"
        : c === ">"
        ? "&gt;"
        : c === '"'
        ? "&quot;"
        : "&#39;",
  );
}
