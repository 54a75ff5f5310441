import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { runCommand } from "./commands.ts";
import { cacheExportCommand } from "./cache_commands.ts";
import { tablesCommand } from "./tables_command.ts";
import { commandContext, tmpProject } from "../_test_util.ts";
import { kinds } from "../testdata/kinds.ts";
import type { NodeKind } from "../types.ts";
import {
  depHolds,
  readShippedTables,
  ShippedTablesError,
  shippedTablesFileOf,
  writeShippedTables,
} from "../tables/shipped_tables.ts";

const YAML = `experiment: shipped
seed: 1
matrix:
  k: [1, 2, 3]
nodes:
  c: { kind: test.add, with: { a: $matrix.k, b: 10 } }
tables:
  - { name: sums, title: Sums by k, node: c, rows: k, columns: value.sum }
`;

/** A project whose results are exported as `results/r.esb.gz` with its memo written beside it. */
async function shippedProject(withKinds: readonly NodeKind[] = kinds) {
  const p = await tmpProject(YAML);
  const ctx = commandContext(p.cache, { kinds: withKinds });
  assert.equal((await runCommand(ctx, p.file)).code, 0);
  Deno.mkdirSync(join(p.dir, "results"));
  const bundle = join(p.dir, "results", "r.esb.gz");
  assert.equal(await cacheExportCommand(ctx, bundle, {}), 0);
  const memoOut = join(p.dir, "results", "r.memo.json.gz");
  const writer = commandContext(p.cache, { kinds: withKinds });
  assert.equal(
    await tablesCommand(writer, [p.file], {
      out: join(p.dir, "w"),
      memoOut,
      imports: [bundle],
    }),
    0,
  );
  return { p, bundle, memo: shippedTablesFileOf(bundle), writer };
}

const outLines = (lines: string[]) =>
  lines.filter((l) => !l.startsWith("ERR "));

Deno.test("shipped tables: a fresh cache prints the memo's tables without importing, byte-equal to the import path", async () => {
  const { p, bundle, memo, writer } = await shippedProject();
  await using _ = p;
  assert.ok(existsSync(memo), "memo written beside the bundle");
  assert.match(
    writer.lines.join("\n"),
    /wrote 1 tables of 1 experiment files to .*r\.tables\.json\.gz/,
  );
  const m = readShippedTables(memo);
  assert.equal(m.bundles.length, 1);
  assert.equal(m.bundles[0]!.name, "r.esb.gz");
  // every dep of the table is in the bundle: three imported keys
  const deps = Object.values(m.files)[0]!.tables[0]!.deps;
  assert.equal(deps.length, 3);
  assert.ok(deps.every(([, s]) => s.startsWith("imported ")));

  const fresh = join(p.dir, "fresh");
  const fast = commandContext(fresh);
  assert.equal(
    await tablesCommand(fast, [p.file], {
      out: join(p.dir, "t1"),
      imports: [bundle],
    }),
    0,
  );
  const text = fast.lines.join("\n");
  assert.match(
    text,
    /1 table printed from .*r\.tables\.json\.gz without importing/,
  );
  assert.doesNotMatch(text, /imported .* into/);
  assert.ok(!existsSync(join(fresh, "entries")), "nothing imported");
  assert.match(text, /\| 2 \| 12\.000 \|/);

  // The full path (memo moved away): the same stdout, byte for byte, and the same files.
  Deno.renameSync(memo, memo + ".off");
  const full = commandContext(join(p.dir, "fresh2"));
  assert.equal(
    await tablesCommand(full, [p.file], {
      out: join(p.dir, "t2"),
      imports: [bundle],
    }),
    0,
  );
  assert.match(full.lines.join("\n"), /imported .*r\.esb\.gz into/);
  assert.equal(outLines(fast.lines).join(""), outLines(full.lines).join(""));
  for (const f of ["sums.csv", "sums.json"]) {
    assert.equal(
      Deno.readTextFileSync(join(p.dir, "t1", f)),
      Deno.readTextFileSync(join(p.dir, "t2", f)),
    );
  }
});

Deno.test("shipped tables: a result warning is printed from the memo as the import path prints it", async () => {
  // test.add warns when its sum is above 11 (k = 2 and 3)
  const add = kinds.find((k) => k.name === "test.add")!;
  const warned: NodeKind[] = [
    ...kinds.filter((k) => k !== add),
    {
      ...add,
      warning: ({ value }) => {
        const sum = (value as { sum: number }).sum;
        return sum > 11
          ? {
            summary: "the sum is large",
            detail: `sum ${sum} > 11`,
            advice: "use a smaller k",
          }
          : null;
      },
    },
  ];
  const { p, bundle } = await shippedProject(warned);
  await using _ = p;
  const print = async (cache: string, out: string) => {
    const ctx = commandContext(join(p.dir, cache), { kinds: warned });
    assert.equal(
      await tablesCommand(ctx, [p.file], {
        out: join(p.dir, out),
        imports: [bundle],
      }),
      0,
    );
    return ctx.lines;
  };
  const fast = await print("fresh", "t1");
  assert.match(
    fast.join("\n"),
    /printed from .*r\.tables\.json\.gz without importing/,
  );
  const warning = outLines(fast).filter((l) => l.includes("the sum is large"));
  assert.equal(warning.length, 1, fast.join("\n"));
  assert.match(warning[0]!, /2 of 3/);
  assert.match(warning[0]!, /sum 12 > 11/);
  Deno.renameSync(shippedTablesFileOf(bundle), join(p.dir, "memo.off"));
  const full = await print("fresh2", "t2");
  assert.match(full.join("\n"), /imported .*r\.esb\.gz into/);
  assert.deepEqual(outLines(fast), outLines(full));
});

Deno.test("shipped tables: a key that moved is not served from the memo: the bundles are imported and the table says so", async () => {
  const { p, bundle } = await shippedProject();
  await using _ = p;
  // Same file, same spec; the kind's fingerprint moves every key of c.
  const moved = kinds.map((k) =>
    k.name === "test.add" ? { ...k, fingerprint: () => "another input" } : k
  );
  const ctx = commandContext(join(p.dir, "fresh"), { kinds: moved });
  const code = await tablesCommand(ctx, [p.file], {
    out: join(p.dir, "t"),
    imports: [bundle],
  });
  const text = ctx.lines.join("\n");
  assert.match(
    text,
    /table sums of .* read c\[k=1\], whose key or state moved since: importing the bundles/,
  );
  assert.match(text, /imported .*r\.esb\.gz into/);
  assert.doesNotMatch(text, /printed from/);
  // the moved keys are not in the bundle: every cell is missing, exit 1
  assert.equal(code, 1);
  assert.doesNotMatch(text, /\| 2 \| 12\.000 \|/);
});

Deno.test("shipped tables: a local entry that would shadow the bundle's sends the file to the import", async () => {
  const { p, bundle } = await shippedProject();
  await using _ = p;
  // p.cache computed c itself: "ok KEY", while the memo saw "imported KEY".
  const ctx = commandContext(p.cache);
  assert.equal(
    await tablesCommand(ctx, [p.file], {
      out: join(p.dir, "t"),
      imports: [bundle],
    }),
    0,
  );
  assert.match(ctx.lines.join("\n"), /whose key or state moved since/);
});

Deno.test("shipped tables: a corrupt memo is one warning line, then the import path prints the tables", async () => {
  const { p, bundle, memo } = await shippedProject();
  await using _ = p;
  Deno.writeFileSync(memo, new TextEncoder().encode("not gzip at all"));
  assert.throws(() => readShippedTables(memo), ShippedTablesError);
  const ctx = commandContext(join(p.dir, "fresh"));
  assert.equal(
    await tablesCommand(ctx, [p.file], {
      out: join(p.dir, "t"),
      imports: [bundle],
    }),
    0,
  );
  const warn = ctx.lines.filter((l) => l.includes("r.tables.json.gz"));
  assert.equal(warn.length, 1);
  assert.match(
    warn[0]!,
    /^ERR warning: .*r\.tables\.json\.gz cannot be read \(.*\); write it again with `tables --memo-out`; importing the bundles$/,
  );
  assert.ok(!ctx.lines.some((l) => /\n\s+at /.test(l)), "no stack trace");
  assert.match(ctx.lines.join("\n"), /\| 2 \| 12\.000 \|/);
});

Deno.test("shipped tables: another bundle (other bytes) than the memo's is imported, not served", async () => {
  const { p, bundle, memo } = await shippedProject();
  await using _ = p;
  // the memo names other bytes (as after a rerun replaced the bundle)
  const m = readShippedTables(memo);
  writeShippedTables(memo, {
    ...m,
    bundles: [{ name: "r.esb.gz", sha256: "0".repeat(64) }],
  });
  const ctx = commandContext(join(p.dir, "fresh"));
  await tablesCommand(ctx, [p.file], {
    out: join(p.dir, "t"),
    imports: [bundle],
  });
  assert.match(
    ctx.lines.join("\n"),
    /was built from other bundles than .* \(sha256 differs\): importing them/,
  );
});

Deno.test("depHolds: an absent key matches the bundle's record of it only when the key is the same", () => {
  assert.equal(depHolds("imported abc", "absent abc"), true);
  assert.equal(depHolds("absent abc", "absent abc"), true);
  assert.equal(depHolds("imported abc", "absent abd"), false);
  assert.equal(depHolds("imported abc", "ok abc"), false);
  assert.equal(depHolds("absent abc", "imported abc"), false);
  assert.equal(depHolds("skipped: X not set", "skipped: X not set"), true);
});

Deno.test("shipped tables: with its inputs recorded, a file is served by its recorded keys without compiling, and compiled again when an input it read differs", async () => {
  const root = fileURLToPath(new URL("../", import.meta.url));
  const add = kinds.find((k) => k.name === "test.add")!;
  let fingerprints = 0;
  const counted: NodeKind[] = [
    ...kinds.filter((k) => k !== add),
    {
      ...add,
      fingerprint: () => {
        fingerprints++;
        return Deno.env.get("ENVSMITH_TEST_KEY_INPUT") ?? null;
      },
    },
  ];
  Deno.env.delete("ENVSMITH_TEST_KEY_INPUT");
  const p = await tmpProject(YAML);
  await using _ = p;
  const ctx = {
    ...commandContext(p.cache, { kinds: counted }),
    programRoot: root,
  };
  assert.equal((await runCommand(ctx, p.file)).code, 0);
  const bundle = join(p.dir, "r.esb.gz");
  assert.equal(await cacheExportCommand(ctx, bundle, {}), 0);
  const writer = {
    ...commandContext(p.cache, { kinds: counted }),
    programRoot: root,
  };
  await tablesCommand(writer, [p.file], {
    out: join(p.dir, "w"),
    memoOut: join(p.dir, "r.memo.json.gz"),
    imports: [bundle],
  });
  const inputs = Object.values(
    readShippedTables(shippedTablesFileOf(bundle)).files,
  )[0]!.inputs!;
  assert.ok(inputs !== undefined, "inputs recorded");
  assert.deepEqual(inputs.env.ENVSMITH_TEST_KEY_INPUT, null);

  const print = async (cache: string) => {
    const c = {
      ...commandContext(join(p.dir, cache), { kinds: counted }),
      programRoot: root,
    };
    const before = fingerprints;
    const code = await tablesCommand(c, [p.file], {
      out: join(p.dir, cache + "-t"),
      imports: [bundle],
    });
    return { code, text: c.lines.join("\n"), compiled: fingerprints > before };
  };
  const fast = await print("fresh");
  assert.equal(fast.code, 0);
  assert.equal(fast.compiled, false, "served without keying the file");
  assert.match(fast.text, /1 table printed from .* without importing/);
  assert.match(fast.text, /\| 2 \| 12\.000 \|/);

  // the inputs hold, but this cache computed c itself ("ok", where the memo
  // saw the bundle's "imported"): compiled, and the compiling path names it
  const shadowed = {
    ...commandContext(p.cache, { kinds: counted }),
    programRoot: root,
  };
  const beforeShadowed = fingerprints;
  await tablesCommand(shadowed, [p.file], {
    out: join(p.dir, "shadowed-t"),
    imports: [bundle],
  });
  assert.ok(fingerprints > beforeShadowed, "compiled");
  assert.match(
    shadowed.lines.join("\n"),
    /read c\[k=1\], whose key or state moved since/,
  );

  // the variable the keys read is now set: compiled, the keys moved, imported
  Deno.env.set("ENVSMITH_TEST_KEY_INPUT", "another model");
  try {
    const moved = await print("fresh2");
    assert.equal(moved.compiled, true);
    assert.match(
      moved.text,
      /whose key or state moved since: importing the bundles/,
    );
    assert.equal(moved.code, 1);
  } finally {
    Deno.env.delete("ENVSMITH_TEST_KEY_INPUT");
  }

  // another text (a comment): compiled again, the same keys, served
  Deno.writeTextFileSync(p.file, "# a comment\n" + YAML);
  const edited = await print("fresh3");
  assert.equal(edited.compiled, true);
  assert.equal(edited.code, 0);
  assert.match(edited.text, /\| 2 \| 12\.000 \|/);
});
