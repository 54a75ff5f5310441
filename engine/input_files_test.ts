import { scaledMs } from "./_test_util.ts";
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { hashInputs, InputFileError } from "./input_files.ts";

const sha = (b: Uint8Array | string) =>
  createHash("sha256").update(b).digest("hex");

/** Asserts `fn` throws one InputFileError line matching `re`, within `ms`. */
function refused(fn: () => unknown, re: RegExp, ms = 1000): void {
  const t0 = performance.now();
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof InputFileError, `got ${e}`);
    assert.match(e.message, re);
    assert.ok(!e.message.includes("\n"), e.message);
    return true;
  });
  const took = performance.now() - t0;
  assert.ok(took < ms, `refused after ${took.toFixed(0)} ms`);
}

Deno.test("hashInputs: regular files and folders of them, by path, as their sha256", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-inputs-" });
  try {
    await Deno.mkdir(join(dir, "lib/sub"), { recursive: true });
    await Deno.writeTextFile(join(dir, "train.py"), "print(1)\n");
    await Deno.writeTextFile(join(dir, "lib/b.txt"), "b");
    await Deno.writeTextFile(join(dir, "lib/sub/a.txt"), "a");
    await Deno.symlink("train.py", join(dir, "alias.py"));
    const got = hashInputs(dir, ["train.py", "lib", "alias.py"], 1024);
    assert.deepEqual(got, {
      "train.py": sha("print(1)\n"),
      "lib/b.txt": sha("b"),
      "lib/sub/a.txt": sha("a"),
      "alias.py": sha("print(1)\n"),
    });
    // A file rewritten with the same size gets its new digest (the
    // process's memo is keyed by inode, size and times).
    await Deno.writeTextFile(join(dir, "train.py"), "print(2)\n");
    assert.equal(
      hashInputs(dir, ["train.py"], 1024)["train.py"],
      sha("print(2)\n"),
    );
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("hashInputs: devices, FIFOs, sockets and loops are refused in one line before they are opened", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-inputs-" });
  let listener: Deno.Listener | undefined;
  try {
    await Deno.symlink("/dev/zero", join(dir, "zero"));
    await Deno.symlink("/dev/urandom", join(dir, "random"));
    const fifo = await new Deno.Command("mkfifo", {
      args: [join(dir, "fifo")],
    }).output();
    assert.ok(fifo.success);
    listener = Deno.listen({ transport: "unix", path: join(dir, "sock") });
    await Deno.mkdir(join(dir, "data"));
    await Deno.writeTextFile(join(dir, "data/ok.txt"), "ok");
    await Deno.symlink("../fifo", join(dir, "data/pipe"));
    await Deno.mkdir(join(dir, "tree/loop"), { recursive: true });
    await Deno.symlink("..", join(dir, "tree/loop/up"));
    refused(
      () => hashInputs(dir, ["zero"], 1 << 30),
      /^input zero \(\/dev\/zero\) is a device, not a regular file: inputs: are hashed into the key/,
    );
    refused(() => hashInputs(dir, ["random"], 1 << 30), /is a device/);
    refused(
      () => hashInputs(dir, ["fifo"], 1 << 30),
      /^input fifo is a FIFO, not a regular file/,
    );
    refused(
      () => hashInputs(dir, ["sock"], 1 << 30),
      /^input sock is a socket, not a regular file/,
    );
    refused(
      () => hashInputs(dir, ["data"], 1 << 30),
      /^input data\/pipe \(.*\/fifo\) is a FIFO/,
    );
    refused(
      () => hashInputs(dir, ["tree"], 1 << 30),
      /a folder already listed \(a symlink loop\?\)/,
    );
    refused(
      () => hashInputs(dir, ["nope.py"], 1 << 30),
      /^input file nope\.py does not exist \(inputs are relative to /,
    );
  } finally {
    listener?.close();
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("hashInputs: the input-bytes limit is checked from sizes before reading; files are streamed", async () => {
  const dir = await Deno.makeTempDir({ prefix: "envsmith-inputs-" });
  try {
    // a sparse 2 GiB file: refused at once, nothing read
    const big = await Deno.open(join(dir, "big"), {
      write: true,
      create: true,
    });
    await big.truncate(2 * 1024 ** 3);
    big.close();
    refused(
      () => hashInputs(dir, ["big"], 1024 ** 3),
      /^the inputs of this node hold more than 1073741824 bytes \(big is 2147483648\);.*raise it with --limit input-bytes=N/,
    );
    // the limit holds for the files together
    await Deno.writeFile(join(dir, "a"), new Uint8Array(600));
    await Deno.writeFile(join(dir, "b"), new Uint8Array(600));
    refused(() => hashInputs(dir, ["a", "b"], 1000), /more than 1000 bytes/);
    // a 96 MiB file is hashed in chunks: memory does not follow its size
    const mid = await Deno.open(join(dir, "mid"), {
      write: true,
      create: true,
    });
    await mid.truncate(96 * 1024 ** 2);
    mid.close();
    const rss0 = Deno.memoryUsage().rss;
    const t0 = performance.now();
    const got = hashInputs(dir, ["mid"], 1024 ** 3);
    const ms = performance.now() - t0;
    const grew = (Deno.memoryUsage().rss - rss0) / 2 ** 20;
    assert.equal(got.mid, sha(new Uint8Array(96 * 1024 ** 2)));
    assert.ok(grew < 64, `memory grew ${grew.toFixed(0)} MB`);
    assert.ok(ms < scaledMs(5000), `${ms.toFixed(0)} ms`);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
