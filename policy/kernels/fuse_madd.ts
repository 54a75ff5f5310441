/**
 * Derives the fused-multiply-add variant of a WAT kernel source: every
 * folded `(f32x4.add X (f32x4.mul A B))` and `(f32x4.add (f32x4.mul A B) X)`
 * becomes `(f32x4.relaxed_madd A B X)` (relaxed SIMD: `A * B + X`, fused on
 * a CPU with FMA, so its rounding depends on the CPU).
 *
 * The rewrite works on the S-expression tree of the text, not on the text
 * with patterns: parentheses are matched, `;; ...` line comments,
 * `(; ... ;)` block comments (nested) and `"..."` strings are kept as they
 * are and never read as code. Everything outside a rewritten form is
 * reproduced byte for byte; inside one, the operands keep their own text.
 *
 * Only the fully folded two-operand forms are rewritten (flat instruction
 * sequences are left alone). `(f32x4.add X (f32x4.mul A B))` evaluates X
 * before A and B, `relaxed_madd` after them: that order is changed only
 * when X, A and B have no side effects (no `local.set`/`local.tee`,
 * `global.set`, call, store or other memory/table write); otherwise the form
 * is kept unfused and counted in `kept`.
 *
 * ```ts
 * import { fuseMultiplyAdds } from "./fuse_madd.ts";
 * const r = fuseMultiplyAdds("(f32x4.add (local.get $c) (f32x4.mul (local.get $a) (local.get $b)))");
 * // r.wat === "(f32x4.relaxed_madd (local.get $a) (local.get $b) (local.get $c))", r.fused === 1
 * ```
 *
 * @module
 */

/** A piece of WAT text: a token, whitespace or a comment, or a parenthesised list. */
type Node =
  | { kind: "atom"; text: string }
  | { kind: "trivia"; text: string }
  | { kind: "list"; items: Node[] };

/** The WAT text could not be read as balanced S-expressions. */
export class WatSyntaxError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WatSyntaxError";
  }
}

/** What {@linkcode fuseMultiplyAdds} did. */
export interface FuseResult {
  /** The rewritten WAT text. */
  wat: string;
  /** Multiply-adds turned into `f32x4.relaxed_madd`. */
  fused: number;
  /** `(f32x4.add X (f32x4.mul A B))` forms left unfused because reordering would move a side effect. */
  kept: number;
}

function lineOf(text: string, at: number): number {
  let line = 1;
  for (let i = 0; i < at; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** Read `text` into a list of top-level nodes (whitespace and comments included). */
function parse(text: string): Node[] {
  const root: Node[] = [];
  const stack: { items: Node[]; at: number }[] = [];
  let cur = root;
  let i = 0;
  const n = text.length;
  while (i < n) {
    const c = text[i];
    if (c === ";" && text[i + 1] === ";") {
      let j = text.indexOf("\n", i);
      if (j < 0) j = n;
      cur.push({ kind: "trivia", text: text.slice(i, j) });
      i = j;
    } else if (c === "(" && text[i + 1] === ";") {
      let depth = 1, j = i + 2;
      while (j < n && depth > 0) {
        if (text[j] === "(" && text[j + 1] === ";") depth++, j += 2;
        else if (text[j] === ";" && text[j + 1] === ")") depth--, j += 2;
        else j++;
      }
      if (depth > 0) {
        throw new WatSyntaxError(
          `line ${lineOf(text, i)}: block comment "(;" is never closed by ";)"`,
        );
      }
      cur.push({ kind: "trivia", text: text.slice(i, j) });
      i = j;
    } else if (c === "(") {
      const list: Node = { kind: "list", items: [] };
      cur.push(list);
      stack.push({ items: cur, at: i });
      cur = list.items;
      i++;
    } else if (c === ")") {
      const up = stack.pop();
      if (!up) {
        throw new WatSyntaxError(
          `line ${lineOf(text, i)}: ")" closes no open "("`,
        );
      }
      cur = up.items;
      i++;
    } else if (c === " " || c === "\t" || c === "\n" || c === "\r") {
      let j = i + 1;
      while (j < n && " \t\n\r".includes(text.charAt(j))) j++;
      cur.push({ kind: "trivia", text: text.slice(i, j) });
      i = j;
    } else if (c === '"') {
      let j = i + 1;
      while (j < n && text[j] !== '"') j += text[j] === "\\" ? 2 : 1;
      if (j >= n) {
        throw new WatSyntaxError(
          `line ${lineOf(text, i)}: string is never closed by '"'`,
        );
      }
      cur.push({ kind: "atom", text: text.slice(i, j + 1) });
      i = j + 1;
    } else {
      let j = i + 1;
      while (
        j < n && !' \t\n\r()"'.includes(text.charAt(j)) &&
        !(text[j] === ";" && text[j + 1] === ";")
      ) j++;
      cur.push({ kind: "atom", text: text.slice(i, j) });
      i = j;
    }
  }
  if (stack.length > 0) {
    const open = stack[stack.length - 1]!.at;
    throw new WatSyntaxError(
      `line ${lineOf(text, open)}: "(" is never closed by ")"`,
    );
  }
  return root;
}

function print(nodes: Node[]): string {
  let out = "";
  for (const node of nodes) {
    out += node.kind === "list" ? `(${print(node.items)})` : node.text;
  }
  return out;
}

/** The list's items without whitespace and comments. */
function significant(node: Node): Node[] | undefined {
  return node.kind === "list"
    ? node.items.filter((x) => x.kind !== "trivia")
    : undefined;
}

/** The operands of a folded `(op X Y)` whose operands are folded forms, or undefined. */
function binary(node: Node, op: string): [Node, Node] | undefined {
  const [head, x, y, ...rest] = significant(node) ?? [];
  if (
    head?.kind === "atom" && head.text === op && x?.kind === "list" &&
    y?.kind === "list" && rest.length === 0
  ) return [x, y];
  return undefined;
}

/** Instructions that write a local, global, memory or table, or call code that might. */
const EFFECT =
  /^(local\.set|local\.tee|global\.set|call|call_indirect|call_ref|return_call.*|.*\.store.*|memory\.(grow|fill|copy|init)|data\.drop|table\..*|elem\.drop|throw.*)$/;

function hasEffect(node: Node): boolean {
  if (node.kind === "atom") return EFFECT.test(node.text);
  if (node.kind === "trivia") return false;
  return node.items.some(hasEffect);
}

/**
 * Rewrite every folded f32x4 multiply-add in `wat` into `f32x4.relaxed_madd`
 * (see the module documentation for what is and is not rewritten).
 * Throws {@linkcode WatSyntaxError} on unbalanced text.
 */
export function fuseMultiplyAdds(wat: string): FuseResult {
  let fused = 0, kept = 0;
  const madd = (a: Node, b: Node, x: Node): Node => {
    fused++;
    const sp: Node = { kind: "trivia", text: " " };
    return {
      kind: "list",
      items: [
        { kind: "atom", text: "f32x4.relaxed_madd" },
        sp,
        a,
        sp,
        b,
        sp,
        x,
      ],
    };
  };
  const rewrite = (node: Node): Node => {
    if (node.kind !== "list") return node;
    node = { kind: "list", items: node.items.map(rewrite) };
    const add = binary(node, "f32x4.add");
    if (!add) return node;
    const [first, second] = add;
    const late = binary(second, "f32x4.mul");
    if (late) {
      // (f32x4.add X (f32x4.mul A B)): X is evaluated first today
      if (![first, ...late].some(hasEffect)) return madd(...late, first);
      if (!binary(first, "f32x4.mul")) {
        kept++;
        return node;
      }
    }
    const early = binary(first, "f32x4.mul");
    if (early) return madd(...early, second);
    return node;
  };
  return { wat: print(parse(wat).map(rewrite)), fused, kept };
}
