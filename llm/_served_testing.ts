// Test fixtures of served models (llm/ and the llm engineer's tests): a fake
// OpenAI-compatible server and process-group inspection.
import assert from "node:assert/strict";

/** A fake OpenAI-compatible server: lists one model, answers chats with "ok". */
export const FAKE_SERVER = `
const [port, model] = Deno.args;
Deno.serve({ hostname: "127.0.0.1", port: Number(port), onListen() {} }, (req) => {
  const path = new URL(req.url).pathname;
  if (path === "/v1/models") {
    return Response.json({ object: "list", data: [{ id: model ?? "fake", object: "model" }] });
  }
  return Response.json({ error: { message: "the fake server answers no chats" } }, { status: 500 });
});
`;

/** The process group id a log names ("process group N"). */
export function pgidOf(lines: readonly string[]): number {
  const m = lines.join("\n").match(/process group (\d+)/);
  assert.ok(m, `no process group in ${lines.join(" | ")}`);
  return Number(m[1]);
}

/** The pids of every live process of group `pgid`. */
export function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const stat = Deno.readTextFileSync(`/proc/${e.name}/stat`);
      const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      if (Number(rest[2]) === pgid && rest[0] !== "Z") out.push(Number(e.name));
    } catch { /* gone */ }
  }
  return out;
}
