/**
 * `./envsmith reward --instances FILE`: envsmith's dynamics as a reward
 * process for language-model trainers in any language.
 *
 * A long-lived process. It loads the instances (JSON lines, as `generate`
 * writes them), then reads requests on stdin, one JSON object per line:
 *
 * ```json
 * {"id": "base-3", "completion": "Agent 0: R R D\nAgent 1: S L", "seed": 0}
 * ```
 *
 * and answers each on stdout, in order, one JSON object per line:
 *
 * ```json
 * {"id": "base-3", "reward": 1, "outcome": "success", "on_goal": 2, "steps": 3}
 * ```
 *
 * The completion is parsed exactly as the LLM policy parses a reply and
 * executed with the dynamics (`policy/plan_reward.ts`; `seed` draws the slip,
 * default 0). A completion that is not a plan is the outcome `invalid_plan`
 * with reward 0 and a `parse_error`. A request that is not a request (not
 * JSON, no `id` or `completion`, an id not in FILE) is answered with
 * `{"id": ..., "error": "..."}` and the process goes on. Answers are flushed
 * after every chunk read, so a trainer may send one line and wait, or
 * stream thousands.
 *
 * ```sh
 * ./envsmith generate --preset easy --count 100 > inst.jsonl
 * echo '{"id":"...","completion":"Agent 0: R"}' | ./envsmith reward --instances inst.jsonl
 * ```
 *
 * @module
 */
import { Command } from "@commander-js/extra-typings";
import { UserError } from "@envsmith/engine";
import {
  type CompletionScore,
  scoreCompletion,
  type ScoringInstance,
  scoringInstance,
} from "../policy/plan_reward.ts";
import { type MapfCliIo, mapfIo, readInstanceInput } from "./_mapf.ts";

/** Streams of the reward process (tests replace them). */
export interface RewardIo {
  /** Chunks of standard input as they arrive. */
  input(): AsyncIterable<Uint8Array>;
  /** Write (and flush) text to standard output. */
  write(text: string): Promise<void>;
  /** A line on standard error. */
  err(text: string): void;
  /** Reads the instances file. */
  files: MapfCliIo;
}

/** Standard streams. */
export const rewardIo: RewardIo = {
  input: () => Deno.stdin.readable,
  write: async (text) => {
    const bytes = new TextEncoder().encode(text);
    let off = 0;
    while (off < bytes.length) {
      off += await Deno.stdout.write(bytes.subarray(off));
    }
  },
  err: (t) => console.error(t),
  files: mapfIo,
};

/** Counts of one reward session. */
export interface RewardSessionStats {
  /** Requests answered with a reward. */
  scored: number;
  /** Lines answered with an error. */
  errors: number;
}

/** The answer line of one request line (no trailing newline). */
export function answerRewardLine(
  line: string,
  instances: ReadonlyMap<string, ScoringInstance>,
): { text: string; ok: boolean } {
  let req: unknown;
  try {
    req = JSON.parse(line);
  } catch (e) {
    return _error(null, `not JSON (${(e as Error).message})`);
  }
  if (typeof req !== "object" || req === null || Array.isArray(req)) {
    return _error(null, 'expected an object {"id": ..., "completion": ...}');
  }
  const r = req as Record<string, unknown>;
  const id = typeof r.id === "string" ? r.id : null;
  if (id === null) return _error(r.id ?? null, '"id" must be a string');
  if (typeof r.completion !== "string") {
    return _error(id, '"completion" must be a string');
  }
  const seed = r.seed ?? 0;
  if (
    typeof seed !== "number" || !Number.isInteger(seed) || seed < 0 ||
    seed > 0xffffffff
  ) {
    return _error(id, '"seed" must be an integer in 0..4294967295');
  }
  const inst = instances.get(id);
  if (inst === undefined) {
    return _error(id, "no instance with this id in --instances");
  }
  const s: CompletionScore & { id: string } = {
    id,
    ...scoreCompletion(inst, r.completion, seed),
  };
  return { text: JSON.stringify(s), ok: true };
}

function _error(id: unknown, error: string): { text: string; ok: boolean } {
  return { text: JSON.stringify({ id, error }), ok: false };
}

/**
 * Longest request line read (1 MiB; a completion is a few KB): a longer
 * one is skipped as it streams, never held, and answered with an error.
 */
export const MAX_REQUEST_BYTES = 1024 * 1024;

/**
 * Serve rewards: read request lines from `io.input()` until it ends, answer
 * each on `io.write`, flushed per chunk read. Memory is bounded by
 * `maxLine` (characters of one line) whatever the input: a line longer
 * than that is answered with an error, in its turn, and the session goes on.
 */
export async function serveRewards(
  instances: ReadonlyMap<string, ScoringInstance>,
  io: Pick<RewardIo, "input" | "write">,
  maxLine: number = MAX_REQUEST_BYTES,
): Promise<RewardSessionStats> {
  const decoder = new TextDecoder();
  const stats: RewardSessionStats = { scored: 0, errors: 0 };
  let rest = "";
  /** Characters of an over-long line skipped so far (-1: not skipping). */
  let skipped = -1;
  const answer = (line: string, out: string[]) => {
    if (line.trim() === "") return;
    const a = answerRewardLine(line, instances);
    if (a.ok) stats.scored++;
    else stats.errors++;
    out.push(a.text);
  };
  const tooLong = (chars: number, out: string[]) => {
    stats.errors++;
    out.push(
      _error(
        null,
        `request line of ${chars} characters or more, longer than the ${maxLine} a request may have; skipped`,
      ).text,
    );
  };
  const take = (text: string, out: string[]) => {
    if (skipped >= 0) {
      const nl = text.indexOf("\n");
      if (nl < 0) {
        skipped += text.length;
        return;
      }
      tooLong(skipped + nl, out);
      skipped = -1;
      text = text.slice(nl + 1);
    }
    const lines = (rest + text).split("\n");
    rest = lines.pop()!;
    for (const line of lines) {
      if (line.length > maxLine) tooLong(line.length, out);
      else answer(line, out);
    }
    if (rest.length > maxLine) {
      skipped = rest.length;
      rest = "";
    }
  };
  for await (const chunk of io.input()) {
    const out: string[] = [];
    take(decoder.decode(chunk, { stream: true }), out);
    if (out.length > 0) await io.write(out.join("\n") + "\n");
  }
  const out: string[] = [];
  take(decoder.decode(), out);
  if (skipped >= 0) tooLong(skipped, out);
  else answer(rest, out);
  if (out.length > 0) await io.write(out.join("\n") + "\n");
  return stats;
}

/** The `reward` subcommand. */
export function rewardCommand(io: RewardIo = rewardIo) {
  return new Command("reward")
    .description(
      "Serve rewards to an LM trainer: JSON lines {id, completion} on stdin -> {id, reward, outcome, parse_error?} on stdout",
    )
    .requiredOption(
      "--instances <file>",
      "the instances completions answer (JSON lines, as `generate` writes)",
    )
    .addHelpText(
      "after",
      '\nExample:\n  echo \'{"id":"ID","completion":"Agent 0: R D"}\' | ./envsmith reward --instances inst.jsonl',
    )
    .action(async (o) => {
      const list = await readInstanceInput(io.files, o.instances);
      const map = new Map<string, ScoringInstance>();
      for (const inst of list) {
        if (map.has(inst.id)) {
          throw new UserError(
            `${o.instances}: the id "${inst.id}" appears twice; reward requests name instances by id, so ids must be unique`,
          );
        }
        map.set(inst.id, scoringInstance(inst));
      }
      const stats = await serveRewards(map, io);
      io.err(
        `reward: ${stats.scored} completions scored, ${stats.errors} bad requests`,
      );
    });
}
