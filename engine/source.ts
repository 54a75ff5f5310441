/**
 * YAML source with positions: every value of the document can be located
 * (file:line:col) by its path.
 *
 * @module
 */
import {
  isMap,
  isPair,
  isScalar,
  isSeq,
  LineCounter,
  parseDocument,
  visit,
} from "yaml";
import type { Document, Node as YamlNode } from "yaml";
import {
  type Diagnostic,
  type DiagnosticCode,
  ExperimentSyntaxError,
} from "./errors.ts";

/** A path inside the document: object keys and array indices. */
export type DocPath = readonly (string | number)[];

/** A loaded YAML document that can locate its values. */
export class Source {
  /** File name as given (used in messages). */
  readonly file: string;
  /** The plain JavaScript value of the document. */
  readonly data: unknown;
  #doc: Document.Parsed;
  #lines: LineCounter;

  /**
   * Parses `text`; throws {@linkcode ExperimentSyntaxError} listing every
   * syntax error (duplicate keys included).
   */
  constructor(file: string, text: string) {
    this.file = file;
    this.#lines = new LineCounter();
    // Duplicate keys are found below in one pass: the parser's own check
    // (uniqueKeys) is quadratic in the size of a mapping.
    this.#doc = parseDocument(text, {
      lineCounter: this.#lines,
      prettyErrors: false,
      uniqueKeys: false,
      merge: true,
    });
    const diags: Diagnostic[] = this.#doc.errors.map((e) => {
      const { line, col } = this.#lines.linePos(e.pos[0]);
      const first = e.message.split("\n")[0] ?? e.message;
      return {
        code: "yaml",
        file,
        line,
        col,
        path: "",
        message: first.replace(/ at line \d+, column \d+.*$/, ""),
      };
    });
    visit(this.#doc, {
      Map: (_, map) => {
        const seen = new Set<string>();
        for (const pair of map.items) {
          if (!isScalar(pair.key)) continue;
          const k = String(pair.key.value);
          if (k === "<<") continue;
          if (seen.has(k)) {
            const { line, col } = this.#lines.linePos(pair.key.range?.[0] ?? 0);
            diags.push({
              code: "yaml",
              file,
              line,
              col,
              path: "",
              message: `Map keys must be unique; "${k}" is repeated`,
            });
          }
          seen.add(k);
        }
      },
    });
    if (diags.length > 0) {
      diags.sort((a, b) => a.line - b.line || a.col - b.col);
      throw new ExperimentSyntaxError(diags);
    }
    this.data = this.#doc.toJS({ maxAliasCount: 10000 });
  }

  /** 1-based line and column of the value (or, with `key`, of the key) at `path`. */
  locate(path: DocPath, key = false): { line: number; col: number } {
    let node: unknown = this.#doc.contents;
    let keyNode: unknown = null;
    for (const seg of path) {
      if (isMap(node)) {
        const pair = node.items.find((p) =>
          isPair(p) &&
          (isScalar(p.key)
            ? String(p.key.value) === String(seg)
            : String(p.key) === String(seg))
        );
        if (!pair) break;
        keyNode = pair.key;
        node = pair.value;
      } else if (isSeq(node) && typeof seg === "number") {
        keyNode = null;
        node = node.items[seg];
      } else break;
      if (node === null || node === undefined) {
        node = keyNode;
        break;
      }
    }
    const target = (key && keyNode ? keyNode : node) as YamlNode | null;
    const offset = target?.range?.[0] ?? 0;
    return this.#lines.linePos(offset);
  }

  /** A diagnostic located at `path`. */
  diag(
    code: DiagnosticCode,
    path: DocPath,
    message: string,
    key = false,
  ): Diagnostic {
    const { line, col } = this.locate(path, key);
    return {
      code,
      file: this.file,
      line,
      col,
      path: formatPath(path),
      message,
    };
  }
}

/** `nodes.train.with.envs[2]` */
export function formatPath(path: DocPath): string {
  let s = "";
  for (const seg of path) {
    if (typeof seg === "number") s += `[${seg}]`;
    else s += s ? `.${seg}` : seg;
  }
  return s;
}
