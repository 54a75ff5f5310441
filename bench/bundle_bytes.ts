/**
 * Which fields take the bytes of a results bundle: per node kind and per
 * field path (to depth 3), the bytes of the JSON the entries hold, and for
 * the top-level fields the bytes they take gzip-compressed (each field's
 * values of one kind concatenated and compressed alone, so the column says
 * what a field costs after compression).
 *
 * ```sh
 * deno run -A bench/bundle_bytes.ts results/tables.esb.gz [--top 40]
 * ```
 *
 * @module
 */
import { gunzipSync, gzipSync } from "node:zlib";

const file = Deno.args[0];
if (!file) {
  console.error("usage: deno run -A bench/bundle_bytes.ts BUNDLE [--top N]");
  Deno.exit(2);
}
const topAt = Deno.args.indexOf("--top");
const top = topAt >= 0 ? Number(Deno.args[topAt + 1]) : 40;

let raw = Deno.readFileSync(file);
if (raw[0] === 0x1f && raw[1] === 0x8b) raw = gunzipSync(raw);
const dec = new TextDecoder();

interface Stat {
  n: number;
  bytes: number;
}
const byKind = new Map<string, Stat>();
const byPath = new Map<string, Stat>();
const columns = new Map<string, string[]>();
let headerBytes = 0, blobBytes = 0, entryBytes = 0;

function add(m: Map<string, Stat>, k: string, bytes: number): void {
  const s = m.get(k) ?? { n: 0, bytes: 0 };
  s.n++;
  s.bytes += bytes;
  m.set(k, s);
}

function walk(kind: string, path: string, v: unknown, depth: number): void {
  if (depth > 3 || v === null || typeof v !== "object") return;
  if (Array.isArray(v)) {
    // The elements of an array as one path (`x[]`), their fields below it.
    for (const e of v) {
      if (e !== null && typeof e === "object" && !Array.isArray(e)) {
        for (const [k, x] of Object.entries(e)) {
          const p = `${path}[].${k}`;
          add(byPath, `${kind}\t${p}`, JSON.stringify(x).length);
          walk(kind, p, x, depth + 1);
        }
      }
    }
    return;
  }
  for (const [k, x] of Object.entries(v)) {
    const p = path ? `${path}.${k}` : k;
    const s = JSON.stringify(x);
    add(byPath, `${kind}\t${p}`, s.length);
    if (depth === 0) {
      const c = columns.get(`${kind}\t${p}`) ?? [];
      c.push(s);
      columns.set(`${kind}\t${p}`, c);
    }
    walk(kind, p, x, depth + 1);
  }
}

let at = raw.indexOf(10) + 1;
for (;;) {
  const nl = raw.indexOf(10, at);
  const head = JSON.parse(dec.decode(raw.subarray(at, nl)));
  headerBytes += nl - at + 1;
  if (head.type === "end") break;
  const body = raw.subarray(nl + 1, nl + 1 + head.size);
  at = nl + 1 + head.size + 1;
  if (head.type !== "entry") {
    blobBytes += head.size;
    continue;
  }
  entryBytes += head.size;
  const text = dec.decode(body);
  const json = text.slice(text.indexOf("\n") + 1);
  const entry = JSON.parse(json);
  add(byKind, entry.kind, body.length);
  walk(entry.kind, "", entry, 0);
}

const mb = (b: number) => (b / 1e6).toFixed(2);
console.log(
  `${file}: ${mb(raw.length)} MB uncompressed: entries ${
    mb(entryBytes)
  } MB, blobs ${mb(blobBytes)} MB, record headers ${mb(headerBytes)} MB\n`,
);
console.log("| kind | entries | MB | share |\n| --- | --- | --- | --- |");
for (const [k, s] of [...byKind].sort((a, b) => b[1].bytes - a[1].bytes)) {
  console.log(
    `| ${k} | ${s.n} | ${mb(s.bytes)} | ${
      (100 * s.bytes / entryBytes).toFixed(1)
    } % |`,
  );
}
console.log(
  "\nTop-level fields (MB of JSON; MB gzip-compressed per kind and field):\n",
);
console.log("| kind | field | MB | gzip MB |\n| --- | --- | --- | --- |");
const tops = [...columns].map(([k, c]) => {
  const text = c.join("\n");
  return { k, bytes: text.length, gz: gzipSync(text).length };
}).sort((a, b) => b.gz - a.gz).slice(0, top);
for (const t of tops) {
  const [kind, path] = t.k.split("\t");
  console.log(`| ${kind} | ${path} | ${mb(t.bytes)} | ${mb(t.gz)} |`);
}
console.log(`\nField paths to depth 3, largest ${top} (MB of JSON):\n`);
console.log("| kind | path | values | MB |\n| --- | --- | --- | --- |");
for (
  const [k, s] of [...byPath].sort((a, b) => b[1].bytes - a[1].bytes).slice(
    0,
    top,
  )
) {
  const [kind, path] = k.split("\t");
  console.log(`| ${kind} | ${path} | ${s.n} | ${mb(s.bytes)} |`);
}
