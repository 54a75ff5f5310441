/**
 * Progress output of a run: on a terminal, one live line per running node
 * (node, step/total, note, ETA) redrawn in place under one run-wide bar
 * (done/total nodes, running nodes, ETA from the cache's history of node
 * times); otherwise (or when `CI` is set) plain timestamped lines with a
 * periodic one-line summary of the same figures, and no terminal codes.
 *
 * @module
 */

import { formatDuration } from "../duration.ts";
import {
  formatRunSnapshot,
  progressBar,
  type RunOutline,
  RunProgress,
} from "./run_progress.ts";

export { formatDuration };

/**
 * Receives the events of a run.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import type { Reporter } from "./progress.ts";
 * // A reporter that keeps each node's end, e.g. for a dashboard.
 * const ends: string[] = [];
 * const reporter: Reporter = {
 *   start() {}, progress() {}, waiting() {}, info() {}, close() {},
 *   end: (id, status) => void ends.push(`${id} ${status}`),
 * };
 * reporter.end("train", "done", 1200);
 * assert.deepEqual(ends, ["train done"]);
 * ```
 */
export interface Reporter {
  /**
   * The run is about to start: the nodes it will execute and their
   * expected durations (run-wide progress and ETA). Optional.
   */
  begin?(outline: RunOutline): void;
  /** A node started. */
  start(id: string): void;
  /** A node reported progress. */
  progress(id: string, done: number, total: number, note?: string): void;
  /** A node waits for a lock held by another process. */
  waiting(id: string, holder: string): void;
  /** A node ended. */
  end(
    id: string,
    status: "done" | "cached" | "failed",
    ms: number,
    error?: string,
  ): void;
  /** A free line (notes, warnings). */
  info(line: string): void;
  /** The run is over: stop redrawing. */
  close(): void;
}

interface _Running {
  start: number;
  firstProgress?: number;
  firstDone?: number;
  done: number;
  total: number;
  note?: string;
  waiting?: string | undefined;
  lastPrinted: number;
}

function _eta(r: _Running, now: number): string {
  if (r.total <= 0 || r.done <= 0 || r.firstProgress === undefined) return "";
  const doneSince = r.done - (r.firstDone ?? 0);
  const elapsed = now - r.firstProgress;
  if (doneSince <= 0 || elapsed <= 0) return "";
  return ` ETA ${formatDuration((elapsed / doneSince) * (r.total - r.done))}`;
}

function _describe(id: string, r: _Running, now: number): string {
  if (r.waiting) return `${id}  waiting for ${r.waiting}`;
  const steps = r.total > 0 ? `  ${r.done}/${r.total}` : "";
  const note = r.note ? `  ${r.note}` : "";
  return `${id}${steps}${note}  ${formatDuration(now - r.start)}${
    _eta(r, now)
  }`;
}

/** Options of the reporters. */
export interface ReporterOptions {
  /** Where lines go. @default Deno.stderr */
  readonly write?: (text: string) => void;
  /** Clock. @default Date.now */
  readonly now?: () => number;
  /** Plain mode: minimum interval between progress lines of one node. @default 10000 */
  readonly intervalMs?: number;
  /** Plain mode: interval of the run-wide summary line (0: none). @default 60000 */
  readonly summaryMs?: number;
  /** Terminal mode: colour the ✓/✗ marks. @default true unless NO_COLOR is set */
  readonly color?: boolean;
}

function _noColor(): boolean {
  try {
    return (Deno.env.get("NO_COLOR") ?? "") !== "";
  } catch {
    return false;
  }
}

/** A timer that does not keep the process alive. */
function _unrefInterval(
  f: () => void,
  ms: number,
): ReturnType<typeof setInterval> {
  const id = setInterval(f, ms);
  try {
    Deno.unrefTimer(id as unknown as number);
  } catch { /* not supported */ }
  return id;
}

function _stderr(text: string): void {
  const bytes = new TextEncoder().encode(text);
  let off = 0;
  while (off < bytes.length) off += Deno.stderr.writeSync(bytes.subarray(off));
}

/** Plain timestamped lines (no terminal control codes). */
export class PlainReporter implements Reporter {
  #write: (t: string) => void;
  #now: () => number;
  #interval: number;
  #running = new Map<string, _Running>();
  #run: RunProgress | undefined;
  #summaryMs: number;
  #timer: ReturnType<typeof setInterval> | undefined;
  /** Creates the reporter. */
  constructor(options: ReporterOptions = {}) {
    this.#write = options.write ?? _stderr;
    this.#now = options.now ?? Date.now;
    this.#interval = options.intervalMs ?? 10_000;
    this.#summaryMs = options.summaryMs ?? 60_000;
  }
  #line(text: string): void {
    const t = new Date(this.#now()).toISOString().slice(11, 19);
    this.#write(`[${t}] ${text}\n`);
  }
  /** `[12/346]` after a node's end line, once the run is outlined. */
  #count(): string {
    if (!this.#run) return "";
    const s = this.#run.snapshot(this.#now());
    return ` [${s.done + s.failed + s.blocked}/${s.total}]`;
  }
  /** The run-wide summary line (also printed every `summaryMs`). */
  summary(): void {
    if (!this.#run) return;
    this.#line(
      `progress ${
        formatRunSnapshot(this.#run.snapshot(this.#now()), { names: 3 })
      }`,
    );
  }
  /** @inheritdoc */
  begin(outline: RunOutline): void {
    this.#run = new RunProgress(outline, this.#now());
    if (outline.nodes.length === 0) return;
    const known = outline.nodes.filter((n) => n.estimateMs !== undefined);
    const eta = this.#run.snapshot(this.#now()).etaMs;
    this.#line(
      `${outline.nodes.length} node${
        outline.nodes.length > 1 ? "s" : ""
      } to run, ${outline.jobs} at a time; ${
        eta === null
          ? "ETA after the first node (no earlier times in this cache)"
          : `ETA ${
            formatDuration(eta)
          } (earlier times of ${known.length}/${outline.nodes.length} nodes)`
      }`,
    );
    if (this.#summaryMs > 0) {
      this.#timer = _unrefInterval(() => this.summary(), this.#summaryMs);
    }
  }
  /** @inheritdoc */
  start(id: string): void {
    const now = this.#now();
    this.#running.set(id, { start: now, done: 0, total: 0, lastPrinted: now });
    this.#run?.start(id, now);
    this.#line(`start ${id}`);
  }
  /** @inheritdoc */
  progress(id: string, done: number, total: number, note?: string): void {
    const r = this.#running.get(id);
    if (!r) return;
    const now = this.#now();
    this.#run?.progress(id, done, total, now);
    if (r.firstProgress === undefined) {
      r.firstProgress = now;
      r.firstDone = done;
    }
    r.done = done;
    r.total = total;
    r.waiting = undefined;
    if (note !== undefined) r.note = note;
    if (now - r.lastPrinted >= this.#interval) {
      r.lastPrinted = now;
      this.#line(`      ${_describe(id, r, now)}`);
    }
  }
  /** @inheritdoc */
  waiting(id: string, holder: string): void {
    const r = this.#running.get(id);
    if (r && r.waiting === undefined) {
      this.#line(`wait  ${id}: another process computes it (${holder})`);
    }
    if (r) r.waiting = holder;
  }
  /** @inheritdoc */
  end(
    id: string,
    status: "done" | "cached" | "failed",
    ms: number,
    error?: string,
  ): void {
    this.#running.delete(id);
    this.#run?.end(id, status, this.#now());
    if (status === "failed") {
      this.#line(
        `FAIL  ${id} after ${formatDuration(ms)}${this.#count()}: ${
          error ?? ""
        }`,
      );
    } else {this.#line(
        `${status === "cached" ? "cache" : "done "} ${id} (${
          formatDuration(ms)
        })${this.#count()}`,
      );}
  }
  /** @inheritdoc */
  info(line: string): void {
    this.#line(line);
  }
  /** @inheritdoc */
  close(): void {
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }
}

/** Live lines on a terminal: one per running node, redrawn in place. */
export class TtyReporter implements Reporter {
  #write: (t: string) => void;
  #now: () => number;
  #running = new Map<string, _Running>();
  #lines = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #ticker: ReturnType<typeof setInterval> | undefined;
  #closed = false;
  #run: RunProgress | undefined;
  #color: boolean;
  /** Creates the reporter. */
  constructor(options: ReporterOptions = {}) {
    this.#write = options.write ?? _stderr;
    this.#now = options.now ?? Date.now;
    this.#color = options.color ?? !_noColor();
  }
  #columns(): number {
    try {
      return Deno.consoleSize().columns;
    } catch {
      return 100;
    }
  }
  #rows(): number {
    try {
      return Deno.consoleSize().rows;
    } catch {
      return 24;
    }
  }
  #clear(): string {
    return this.#lines > 0 ? `\x1b[${this.#lines}F\x1b[J` : "";
  }
  #block(): string {
    const cols = this.#columns();
    const max = Math.max(1, this.#rows() - 3);
    const now = this.#now();
    const lines: string[] = [];
    const room = this.#run ? max - 1 : max;
    for (const [id, r] of this.#running) {
      if (lines.length === room - 1 && this.#running.size > room) {
        lines.push(`  … and ${this.#running.size - lines.length} more running`);
        break;
      }
      lines.push(("▸ " + _describe(id, r, now)).slice(0, cols - 1));
    }
    if (this.#run && this.#run.total > 0) {
      const s = this.#run.snapshot(now);
      const text = formatRunSnapshot(s);
      const width = Math.max(10, Math.min(30, cols - text.length - 4));
      lines.push(`${progressBar(s, width)} ${text}`.slice(0, cols - 1));
    }
    this.#lines = lines.length;
    return lines.map((l) => l + "\n").join("");
  }
  #render(): void {
    this.#timer = undefined;
    if (this.#closed) return;
    this.#write(this.#clear() + this.#block());
  }
  #schedule(): void {
    if (this.#timer === undefined && !this.#closed) {
      this.#timer = setTimeout(() => this.#render(), 100);
    }
  }
  #permanent(line: string): void {
    this.#write(
      this.#clear() + line.slice(0, Math.max(20, this.#columns() * 4)) + "\n" +
        (this.#closed ? "" : this.#block()),
    );
  }
  /** @inheritdoc */
  begin(outline: RunOutline): void {
    this.#run = new RunProgress(outline, this.#now());
    if (outline.nodes.length === 0) return;
    // Elapsed time and ETA move without events: redraw every second.
    this.#ticker = _unrefInterval(() => this.#schedule(), 1000);
    this.#schedule();
  }
  /** @inheritdoc */
  start(id: string): void {
    this.#running.set(id, {
      start: this.#now(),
      done: 0,
      total: 0,
      lastPrinted: 0,
    });
    this.#run?.start(id, this.#now());
    this.#schedule();
  }
  /** @inheritdoc */
  progress(id: string, done: number, total: number, note?: string): void {
    const r = this.#running.get(id);
    if (!r) return;
    this.#run?.progress(id, done, total, this.#now());
    if (r.firstProgress === undefined) {
      r.firstProgress = this.#now();
      r.firstDone = done;
    }
    r.done = done;
    r.total = total;
    r.waiting = undefined;
    if (note !== undefined) r.note = note;
    this.#schedule();
  }
  /** @inheritdoc */
  waiting(id: string, holder: string): void {
    const r = this.#running.get(id);
    if (r) r.waiting = holder;
    this.#schedule();
  }
  /** @inheritdoc */
  end(
    id: string,
    status: "done" | "cached" | "failed",
    ms: number,
    error?: string,
  ): void {
    this.#running.delete(id);
    this.#run?.end(id, status, this.#now());
    const paint = (code: number, mark: string) =>
      this.#color ? `\x1b[${code}m${mark}\x1b[0m` : mark;
    if (status === "failed") {
      this.#permanent(
        `${paint(31, "✗")} ${id} (${formatDuration(ms)}): ${error ?? ""}`,
      );
    } else if (status === "done") {
      this.#permanent(`${paint(32, "✓")} ${id} (${formatDuration(ms)})`);
    } else this.#permanent(`= ${id} (cached)`);
  }
  /** @inheritdoc */
  info(line: string): void {
    this.#permanent(line);
  }
  /** @inheritdoc */
  close(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (this.#ticker !== undefined) clearInterval(this.#ticker);
    this.#timer = undefined;
    this.#ticker = undefined;
    this.#write(this.#clear());
    this.#lines = 0;
    this.#closed = true;
  }
}

/**
 * A reporter that prints nothing.
 *
 * @example
 * ```ts
 * import assert from "node:assert/strict";
 * import { SilentReporter } from "./progress.ts";
 * import { runPlan } from "./scheduler.ts";
 * // What the tests and the examples pass so that a run prints nothing.
 * const options: Parameters<typeof runPlan>[2] = { reporter: new SilentReporter() };
 * assert.ok(options?.reporter instanceof SilentReporter);
 * ```
 */
export class SilentReporter implements Reporter {
  /** @inheritdoc */
  start(): void {}
  /** @inheritdoc */
  progress(): void {}
  /** @inheritdoc */
  waiting(): void {}
  /** @inheritdoc */
  end(): void {}
  /** @inheritdoc */
  info(): void {}
  /** @inheritdoc */
  close(): void {}
}

/** The live reporter on a terminal, plain lines otherwise or when `CI` is set. */
export function defaultReporter(): Reporter {
  const ci = Deno.env.get("CI");
  const tty = Deno.stderr.isTerminal() && !(ci && ci !== "0" && ci !== "false");
  return tty ? new TtyReporter() : new PlainReporter();
}

/**
 * Passes every event to `inner` and keeps the latest progress of the run in
 * a small JSON file (`{id, done, total, note}`, replaced by rename at most
 * once per `intervalMs`), so a process elsewhere (the Slurm executor) can
 * follow a node that runs in a batch job. `run-node` uses it when
 * `ENVSMITH_PROGRESS_FILE` is set.
 */
export class ProgressFileReporter implements Reporter {
  #inner: Reporter;
  #path: string;
  #interval: number;
  #last = 0;
  /** Wraps `inner`; writes to `path`. */
  constructor(inner: Reporter, path: string, intervalMs = 1000) {
    this.#inner = inner;
    this.#path = path;
    this.#interval = intervalMs;
  }
  /** @inheritdoc */
  begin(outline: RunOutline): void {
    this.#inner.begin?.(outline);
  }
  /** @inheritdoc */
  start(id: string): void {
    this.#inner.start(id);
  }
  /** @inheritdoc */
  progress(id: string, done: number, total: number, note?: string): void {
    this.#inner.progress(id, done, total, note);
    const now = Date.now();
    if (now - this.#last < this.#interval && done < total) return;
    this.#last = now;
    try {
      const tmp = `${this.#path}.${Deno.pid}.tmp`;
      Deno.writeTextFileSync(
        tmp,
        JSON.stringify({ id, done, total, ...(note ? { note } : {}) }),
      );
      Deno.renameSync(tmp, this.#path);
    } catch { /* progress is best effort */ }
  }
  /** @inheritdoc */
  waiting(id: string, holder: string): void {
    this.#inner.waiting(id, holder);
  }
  /** @inheritdoc */
  end(
    id: string,
    status: "done" | "cached" | "failed",
    ms: number,
    error?: string,
  ): void {
    this.#inner.end(id, status, ms, error);
  }
  /** @inheritdoc */
  info(line: string): void {
    this.#inner.info(line);
  }
  /** @inheritdoc */
  close(): void {
    this.#inner.close();
  }
}
