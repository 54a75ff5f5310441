/**
 * A prompt/reply cache keyed by request hash, so a run against a real model
 * can be replayed offline.
 *
 * The hash covers what determines a reply: the sanitised base URL, the model,
 * the messages and the sampling parameters. It never covers, and the entries
 * never contain, the API key or any header. Entries are JSON files
 * `<dir>/<hash[0..2]>/<hash>.json`, written to a temporary file and renamed
 * into place, so a killed run never leaves a partial entry behind; an entry
 * that does not parse or whose stored hash differs is ignored (and rewritten
 * on the next live reply).
 *
 * @module
 */
import { canonicalJson, sha256Hex } from "@envsmith/engine/hash";

/** Format version of cache entries; part of every request hash. */
export const REPLY_CACHE_VERSION = 1;

/** What a request hash is computed from. */
export interface CachedRequest {
  /** Base URL without credentials or query string. */
  readonly baseURL: string;
  /** Model name. */
  readonly model: string;
  /** The chat messages. */
  readonly messages: readonly { role: string; content: string }[];
  /** Sampling and length parameters sent with the request. */
  readonly params: Readonly<Record<string, number | string | boolean | null>>;
}

/** A reply as cached. */
export interface CachedReply {
  /** Text of the first choice. */
  readonly text: string;
  /** Why generation stopped, as the endpoint said. */
  readonly finishReason: string | null;
  /** Token usage as the endpoint reported it (zeros when absent). */
  readonly usage: {
    readonly promptTokens: number;
    readonly completionTokens: number;
    readonly totalTokens: number;
  };
}

interface _Entry {
  version: number;
  hash: string;
  request: CachedRequest;
  reply: CachedReply;
}

/**
 * The hash of a request: sha256 of canonical JSON of the cache version and the
 * request.
 */
export function requestHash(request: CachedRequest): string {
  return sha256Hex(canonicalJson({ v: REPLY_CACHE_VERSION, request }));
}

/** A directory of cached replies. */
export class ReplyCache {
  #dir: string;

  /** Use (and create on first write) the directory `dir`. */
  constructor(dir: string) {
    this.#dir = dir;
  }

  /** The cache directory. */
  get dir(): string {
    return this.#dir;
  }

  /** Path of the entry for a hash. */
  pathOf(hash: string): string {
    return `${this.#dir}/${hash.slice(0, 2)}/${hash}.json`;
  }

  /** The cached reply for a hash, or `undefined` (also for a corrupt entry). */
  async get(hash: string): Promise<CachedReply | undefined> {
    let text: string;
    try {
      text = await Deno.readTextFile(this.pathOf(hash));
    } catch (e) {
      if (e instanceof Deno.errors.NotFound) return undefined;
      throw e;
    }
    try {
      const entry = JSON.parse(text) as _Entry;
      if (
        entry.version !== REPLY_CACHE_VERSION || entry.hash !== hash ||
        requestHash(entry.request) !== hash ||
        typeof entry.reply?.text !== "string"
      ) return undefined;
      return entry.reply;
    } catch {
      return undefined;
    }
  }

  /** Store a reply (atomically: temporary file, then rename). */
  async put(
    hash: string,
    request: CachedRequest,
    reply: CachedReply,
  ): Promise<void> {
    const path = this.pathOf(hash);
    const dir = path.slice(0, path.lastIndexOf("/"));
    await Deno.mkdir(dir, { recursive: true });
    const entry: _Entry = {
      version: REPLY_CACHE_VERSION,
      hash,
      request,
      reply,
    };
    const tmp = `${path}.${crypto.randomUUID()}.tmp`;
    await Deno.writeTextFile(tmp, JSON.stringify(entry, null, 1) + "\n");
    await Deno.rename(tmp, path);
  }
}
