/**
 * Extract a JSON value from a chat reply.
 *
 * Models wrap JSON in prose, in Markdown code fences, or after a reasoning
 * block (`<think>...</think>`, as Qwen3 emits). {@linkcode extractJson} tries,
 * in order: the whole reply; each fenced code block (```json first); the first
 * balanced `{...}` or `[...]` span outside strings. The first candidate that
 * parses wins.
 *
 * @module
 */
import { JsonExtractionError } from "./errors.ts";

const THINK = /<think>[\s\S]*?(<\/think>|$)/gi;
const FENCE = /```([A-Za-z0-9_-]*)[^\S\n]*\n?([\s\S]*?)```/g;

/** Options of {@linkcode extractJson}. */
export interface ExtractJsonOptions {
  /**
   * Accept only a JSON object (not an array or a scalar).
   * @default true
   */
  objectOnly?: boolean;
}

/**
 * Parse the JSON value a reply carries.
 *
 * @example
 * ```ts
 * import { extractJson } from "./json_extract.ts";
 * import assert from "node:assert/strict";
 * const value = extractJson('<think>hmm</think>Here: {"agents": 3}. Done.');
 * assert.deepEqual(value, { agents: 3 });
 * ```
 *
 * @throws {JsonExtractionError} when no candidate parses; the message names
 * the parse error of the most promising candidate.
 */
export function extractJson(
  reply: string,
  options: ExtractJsonOptions = {},
): unknown {
  const objectOnly = options.objectOnly ?? true;
  const text = reply.replace(THINK, "").trim();
  const candidates: string[] = [text];
  const fenced: { lang: string; body: string }[] = [];
  for (const m of text.matchAll(FENCE)) {
    fenced.push({
      lang: (m[1] ?? "").toLowerCase(),
      body: (m[2] ?? "").trim(),
    });
  }
  fenced.sort((a, b) => _rank(a.lang) - _rank(b.lang));
  for (const f of fenced) candidates.push(f.body);
  const span = _balancedSpan(text, objectOnly);
  if (span !== undefined) candidates.push(span);

  let firstError: string | undefined;
  for (const candidate of candidates) {
    if (candidate === "") continue;
    try {
      const value: unknown = JSON.parse(candidate);
      if (objectOnly && !_isObject(value)) {
        firstError ??= "the JSON value is not an object";
        continue;
      }
      return value;
    } catch (e) {
      // Prefer the error of a candidate that looks like JSON.
      if (/^[[{]/.test(candidate)) {
        firstError ??= (e as Error).message;
      }
    }
  }
  const what = objectOnly ? "JSON object" : "JSON value";
  const why = firstError === undefined
    ? `no ${what} found`
    : `the ${what} does not parse (${firstError})`;
  throw new JsonExtractionError(
    `Cannot extract a ${what} from the reply (${reply.length} chars): ${why}. ` +
      `Reply with a single ${what}, optionally inside a \`\`\`json code fence.`,
    reply,
  );
}

function _rank(lang: string): number {
  return lang === "json" ? 0 : lang === "" ? 1 : 2;
}

function _isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The first balanced `{...}` (or `[...]`) span, skipping string contents. */
function _balancedSpan(text: string, objectOnly: boolean): string | undefined {
  for (let start = 0; start < text.length; start++) {
    const c = text[start];
    if (c !== "{" && (objectOnly || c !== "[")) continue;
    let depth = 0;
    let inString = false;
    for (let i = start; i < text.length; i++) {
      const ch = text[i];
      if (inString) {
        if (ch === "\\") i++;
        else if (ch === '"') inString = false;
        continue;
      }
      if (ch === '"') inString = true;
      else if (ch === "{" || ch === "[") depth++;
      else if (ch === "}" || ch === "]") {
        depth--;
        if (depth === 0) return text.slice(start, i + 1);
      }
    }
    return undefined; // unbalanced from the first opener: give up
  }
  return undefined;
}
