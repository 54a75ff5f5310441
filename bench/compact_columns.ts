/**
 * Which columns take the bytes of a compact results bundle (either format,
 * see engine/cache/compact_bundle.ts), and what three transforms of its
 * columns save against format 1's plain columns, measured on the real
 * payload (brotli over the whole payload, as the format compresses it).
 * Format 2 adopted all three (engine/cache/compact_text.ts):
 *
 * - `zip`: sibling numeric fields of an array's objects with at most 16
 *   distinct values (e.g. the four per-instance outcomes) as one column of
 *   tab-joined rows, so the compressor sees their joint distribution;
 * - `delta`: a column of integers stored as differences when that is
 *   shorter (cumulative counters such as `train.report.curve[].samples`);
 * - `hash`: every 64-hex-digit run after its first occurrence as a short
 *   reference (cache keys repeat across columns further apart than
 *   brotli's 16 MB window).
 *
 * Each transform is measured alone here (the format runs them together and
 * checks their round trip).
 *
 * ```sh
 * deno run -A bench/compact_columns.ts results/tables.esb.gz [--top 30] [--quality 9,10]
 * ```
 *
 * @module
 */
import { brotliCompressSync, constants } from "node:zlib";
import { compactColumns } from "@envsmith/engine/cache";

const file = Deno.args[0];
if (!file) {
  console.error(
    "usage: deno run -A bench/compact_columns.ts BUNDLE [--top N] [--quality Q,...]",
  );
  Deno.exit(2);
}
function _arg(name: string, fallback: string): string {
  const at = Deno.args.indexOf(name);
  return at >= 0 ? Deno.args[at + 1] ?? fallback : fallback;
}
const top = Number(_arg("--top", "30"));
const qualities = _arg("--quality", "9").split(",").map(Number);

// Either format is read through the product's decoder and measured as
// format 1 stores it (the baseline the transforms are measured against).
const read = compactColumns(Deno.readFileSync(file), 2 ** 31);
const enc = new TextEncoder();
const cols = new Map(
  [...read.columns].map(([name, text]) => [name, text.split("\n")]),
);
const metaText = JSON.stringify({
  records: read.records,
  columns: [...read.columns].map(([name, text]) => [
    name,
    cols.get(name)!.length,
    enc.encode(text).length,
  ]),
});
const raw = read.raw;
const metaBytes = enc.encode(metaText).length;
const payloadBytes = metaBytes + 1 +
  [...read.columns.values()].reduce((n, t) => n + enc.encode(t).length, 0) +
  raw.length;
function brotli(u: Uint8Array, quality: number): number {
  return brotliCompressSync(u, {
    params: {
      [constants.BROTLI_PARAM_QUALITY]: quality,
      [constants.BROTLI_PARAM_LGWIN]: 24,
      [constants.BROTLI_PARAM_SIZE_HINT]: u.length,
    },
  }).length;
}
const mb = (n: number) => (n / 1e6).toFixed(2);

// Per column, compressed alone (an upper bound of its share).
const alone = [...cols].map(([name, t]) => {
  const text = enc.encode(t.join("\n"));
  return {
    name,
    tokens: t.length,
    bytes: text.length,
    packed: brotli(text, 9),
  };
}).sort((a, b) => b.packed - a.packed);
console.log(
  `${file}: payload ${mb(payloadBytes)} MB (meta ${mb(metaBytes)}, raw bodies ${
    mb(raw.length)
  }), ${cols.size} columns`,
);
console.log("\ncolumn | tokens | bytes | brotli 9 alone");
for (const c of alone.slice(0, top)) {
  console.log(`${c.name} | ${c.tokens} | ${c.bytes} | ${c.packed}`);
}

const NUMBER = /^(-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?|true|false)$/;
const INT = /^-?(0|[1-9]\d{0,14})$/;

function zip(src: Map<string, string[]>): Map<string, string[]> {
  const out = new Map(src);
  for (const [name, toks] of src) {
    if (!name.endsWith("[]") || !toks.every((t) => t.startsWith("{"))) continue;
    const members = [...src.keys()].filter((k) => {
      const field = k.slice(name.length + 1);
      if (!k.startsWith(name + ".") || !/^[A-Za-z_]\w*$/.test(field)) {
        return false;
      }
      const t = src.get(k)!;
      return t.length === toks.length && t.every((x) => NUMBER.test(x)) &&
        new Set(t).size <= 16;
    });
    if (members.length < 2) continue;
    const arrays = members.map((k) => src.get(k)!);
    out.set(
      members.join("\t"),
      toks.map((_, i) => arrays.map((a) => a[i]).join("\t")),
    );
    for (const k of members) out.delete(k);
  }
  return out;
}

function delta(src: Map<string, string[]>): Map<string, string[]> {
  const out = new Map(src);
  for (const [name, toks] of src) {
    if (!toks.every((t) => INT.test(t))) continue;
    let prev = 0;
    const d = toks.map((t) => {
      const x = Number(t) - prev;
      prev = Number(t);
      return String(x);
    });
    if (d.join("").length < toks.join("").length) out.set(name, d);
  }
  return out;
}

function texts(src: Map<string, string[]>, hash: boolean): Uint8Array {
  let parts = [
    metaText,
    ...[...src.keys()].sort().map((k) => src.get(k)!.join("\n")),
  ];
  if (hash) {
    const seen = new Map<string, number>();
    parts = parts.map((t) =>
      t.replace(/[0-9a-f]{64}/g, (h) => {
        const i = seen.get(h);
        if (i !== undefined) return "\x02" + i + "\x03";
        seen.set(h, seen.size);
        return h;
      })
    );
  }
  return enc.encode(parts.join("\n"));
}

console.log(
  "\ntransform | quality | columns MB | raw bodies MB | total MB | seconds",
);
for (const quality of qualities) {
  const rawPacked = brotli(raw, quality);
  const variants: [string, () => Uint8Array][] = [
    ["none", () => texts(cols, false)],
    ["zip", () => texts(zip(cols), false)],
    ["delta", () => texts(delta(cols), false)],
    ["hash", () => texts(cols, true)],
    ["zip+delta+hash", () => texts(delta(zip(cols)), true)],
  ];
  for (const [label, make] of variants) {
    if (quality > 9 && label !== "none" && label !== "zip+delta+hash") continue;
    const t0 = performance.now();
    const packed = brotli(make(), quality);
    console.log(
      `${label} | ${quality} | ${mb(packed)} | ${mb(rawPacked)} | ${
        mb(packed + rawPacked)
      } | ${((performance.now() - t0) / 1000).toFixed(0)}`,
    );
  }
}
