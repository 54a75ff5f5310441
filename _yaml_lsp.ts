/**
 * A minimal Language Server Protocol client for tests: starts the real
 * yaml-language-server (npm, pinned in deno.json) over stdio under Deno,
 * opens YAML documents and returns the diagnostics the server publishes for
 * them, as an editor with the YAML language server would show them.
 *
 * @example
 * Not run: it starts the YAML language server, a child process, for seconds (schema_file_test.ts runs it).
 * ```ts ignore
 * await using ls = await startYamlLanguageServer();
 * const diags = await ls.diagnose("file:///repo/experiments/x.yaml", text);
 * ```
 *
 * @module
 */

/** One diagnostic, as LSP publishes it (lines and characters 0-based). */
export interface LspDiagnostic {
  /** Where. */
  readonly range: {
    readonly start: { readonly line: number; readonly character: number };
    readonly end: { readonly line: number; readonly character: number };
  };
  /** What. */
  readonly message: string;
  /** 1 error, 2 warning, 3 information, 4 hint. */
  readonly severity?: number;
  /** Who (e.g. `YAML`, or the schema's title). */
  readonly source?: string;
}

/** A running server. */
export interface YamlLanguageServer extends AsyncDisposable {
  /** Opens `text` as `uri` and resolves with its first diagnostics. */
  diagnose(
    uri: string,
    text: string,
    timeoutMs?: number,
  ): Promise<LspDiagnostic[]>;
  /**
   * Opens `text` as `uri`, waits for its diagnostics (the schema is loaded
   * then), and returns the hover text at a 0-based line and character
   * (empty when the server has none).
   */
  hover(
    uri: string,
    text: string,
    line: number,
    character: number,
  ): Promise<string>;
  /** Shuts the server down (LSP shutdown + exit). */
  close(): Promise<void>;
}

const _enc = new TextEncoder();
const _dec = new TextDecoder();

/**
 * Starts yaml-language-server (`deno run npm:yaml-language-server --stdio`
 * with this project's deno.json and lockfile, so it works offline once
 * installed) and initializes it with schema validation on and the schema
 * store off (no network).
 */
export async function startYamlLanguageServer(
  options: { readonly cwd?: string; readonly version?: string } = {},
): Promise<YamlLanguageServer> {
  const config = JSON.parse(
    Deno.readTextFileSync(new URL("./deno.json", import.meta.url)),
  ) as { imports: Record<string, string> };
  const spec = config.imports["yaml-language-server"]!;
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "-A",
      "--quiet",
      "--config",
      new URL("./deno.json", import.meta.url).pathname,
      spec,
      "--stdio",
    ],
    cwd: options.cwd ?? new URL(".", import.meta.url).pathname,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const writer = child.stdin.getWriter();
  let nextId = 1;
  const pending = new Map<number, (msg: Record<string, unknown>) => void>();
  const waiters = new Map<string, (diags: LspDiagnostic[]) => void>();
  const stderr: string[] = [];
  const send = (msg: Record<string, unknown>) => {
    const body = _enc.encode(JSON.stringify({ jsonrpc: "2.0", ...msg }));
    const head = _enc.encode(`Content-Length: ${body.length}\r\n\r\n`);
    return writer.write(new Uint8Array([...head, ...body]));
  };
  const request = (method: string, params: unknown) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      send({ id, method, params });
    });
  const settings = {
    yaml: {
      validate: true,
      hover: true,
      completion: false,
      format: { enable: false },
      schemaStore: { enable: false },
    },
  };
  const onMessage = (msg: Record<string, unknown>) => {
    if (typeof msg.id === "number" && msg.method === undefined) {
      pending.get(msg.id)?.(msg);
      pending.delete(msg.id);
      return;
    }
    if (msg.id !== undefined && typeof msg.method === "string") {
      // Requests from the server: configuration, capability registration...
      const result = msg.method === "workspace/configuration"
        ? ((msg.params as { items: { section?: string }[] }).items ?? []).map(
          (it) =>
            it.section === "yaml"
              ? settings.yaml
              : it.section
              ? (settings as Record<string, unknown>)[it.section] ?? null
              : settings,
        )
        : null;
      send({ id: msg.id, result });
      return;
    }
    if (msg.method === "textDocument/publishDiagnostics") {
      const p = msg.params as { uri: string; diagnostics: LspDiagnostic[] };
      waiters.get(p.uri)?.(p.diagnostics);
    }
  };
  const reading = (async () => {
    let buf = new Uint8Array(0);
    for await (const chunk of child.stdout) {
      const joined = new Uint8Array(buf.length + chunk.length);
      joined.set(buf);
      joined.set(chunk, buf.length);
      buf = joined;
      for (;;) {
        const headEnd = _indexOf(buf, [13, 10, 13, 10]);
        if (headEnd < 0) break;
        const head = _dec.decode(buf.subarray(0, headEnd));
        const len = Number(/Content-Length: *(\d+)/i.exec(head)?.[1] ?? NaN);
        if (!Number.isFinite(len)) throw new Error(`bad LSP header: ${head}`);
        if (buf.length < headEnd + 4 + len) break;
        const body = _dec.decode(buf.subarray(headEnd + 4, headEnd + 4 + len));
        buf = buf.slice(headEnd + 4 + len);
        onMessage(JSON.parse(body));
      }
    }
  })();
  const errReading = (async () => {
    for await (const chunk of child.stderr) stderr.push(_dec.decode(chunk));
  })();
  const root = new URL(".", import.meta.url).href;
  let initTimer: ReturnType<typeof setTimeout> | undefined;
  const init = await Promise.race([
    request("initialize", {
      processId: Deno.pid,
      rootUri: root,
      capabilities: {
        workspace: { configuration: true },
        textDocument: { publishDiagnostics: {} },
      },
      workspaceFolders: [{ uri: root, name: "envsmith" }],
    }),
    new Promise<never>((_, reject) =>
      initTimer = setTimeout(
        () =>
          reject(
            new Error(
              `yaml-language-server did not answer initialize within 60 s; stderr: ${
                stderr.join("")
              }`,
            ),
          ),
        60_000,
      )
    ),
  ]).finally(() => clearTimeout(initTimer));
  if (init.error) {
    throw new Error(`initialize failed: ${JSON.stringify(init.error)}`);
  }
  await send({ method: "initialized", params: {} });
  await send({
    method: "workspace/didChangeConfiguration",
    params: { settings },
  });
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    try {
      let t: ReturnType<typeof setTimeout> | undefined;
      await Promise.race([
        request("shutdown", null),
        new Promise((r) => t = setTimeout(r, 5000)),
      ]).finally(() => clearTimeout(t));
      await send({ method: "exit" });
      await writer.close();
    } catch { /* already gone */ }
    const timer = setTimeout(() => {
      try {
        child.kill("SIGKILL");
      } catch { /* exited */ }
    }, 5000);
    await child.status;
    clearTimeout(timer);
    await reading.catch(() => {});
    await errReading.catch(() => {});
  };
  let version = 0;
  return {
    async diagnose(uri, text, timeoutMs = 30_000) {
      const got = new Promise<LspDiagnostic[]>((resolve, reject) => {
        const t = setTimeout(() => {
          waiters.delete(uri);
          reject(
            new Error(
              `no diagnostics for ${uri} within ${timeoutMs} ms; stderr: ${
                stderr.join("").slice(-2000)
              }`,
            ),
          );
        }, timeoutMs);
        waiters.set(uri, (d) => {
          clearTimeout(t);
          waiters.delete(uri);
          resolve(d);
        });
      });
      await send({
        method: "textDocument/didOpen",
        params: {
          textDocument: { uri, languageId: "yaml", version: ++version, text },
        },
      });
      const diags = await got;
      await send({
        method: "textDocument/didClose",
        params: { textDocument: { uri } },
      });
      return diags;
    },
    async hover(uri, text, line, character) {
      const opened = new Promise<void>((resolve) => {
        waiters.set(uri, () => {
          waiters.delete(uri);
          resolve();
        });
      });
      await send({
        method: "textDocument/didOpen",
        params: {
          textDocument: { uri, languageId: "yaml", version: ++version, text },
        },
      });
      await opened;
      const reply = await request("textDocument/hover", {
        textDocument: { uri },
        position: { line, character },
      });
      await send({
        method: "textDocument/didClose",
        params: { textDocument: { uri } },
      });
      const contents = (reply.result as { contents?: unknown } | null)
        ?.contents;
      if (typeof contents === "string") return contents;
      if (Array.isArray(contents)) {
        return contents.map((c) =>
          typeof c === "string" ? c : (c as { value?: string }).value ?? ""
        ).join("\n");
      }
      return (contents as { value?: string } | undefined)?.value ?? "";
    },
    close,
    [Symbol.asyncDispose]: close,
  };
}

function _indexOf(buf: Uint8Array, pattern: readonly number[]): number {
  outer: for (let i = 0; i + pattern.length <= buf.length; i++) {
    for (let j = 0; j < pattern.length; j++) {
      if (buf[i + j] !== pattern[j]) continue outer;
    }
    return i;
  }
  return -1;
}
