/**
 * Progress output of a run: on a terminal, one live line per running node
 * (node, step/total, note, ETA) redrawn in place; otherwise (or when `CI` is
 * set) plain timestamped lines.
 *
 * @module
 */

/** Receives the events of a run. */
export interface Reporter {
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

/** `1.2s`, `3m04s`, `1h02m`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "?";
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)}s`;
  const m = Math.floor(s / 60), rs = Math.floor(s % 60);
  if (m < 60) return `${m}m${String(rs).padStart(2, "0")}s`;
  return `${Math.floor(m / 60)}h${String(m % 60).padStart(2, "0")}m`;
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
  /** Creates the reporter. */
  constructor(options: ReporterOptions = {}) {
    this.#write = options.write ?? _stderr;
    this.#now = options.now ?? Date.now;
    this.#interval = options.intervalMs ?? 10_000;
  }
  #line(text: string): void {
    const t = new Date(this.#now()).toISOString().slice(11, 19);
    this.#write(`[${t}] ${text}\n`);
  }
  /** @inheritdoc */
  start(id: string): void {
    const now = this.#now();
    this.#running.set(id, { start: now, done: 0, total: 0, lastPrinted: now });
    this.#line(`start ${id}`);
  }
  /** @inheritdoc */
  progress(id: string, done: number, total: number, note?: string): void {
    const r = this.#running.get(id);
    if (!r) return;
    const now = this.#now();
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
    if (status === "failed") {
      this.#line(`FAIL  ${id} after ${formatDuration(ms)}: ${error ?? ""}`);
    } else {this.#line(
        `${status === "cached" ? "cache" : "done "} ${id} (${
          formatDuration(ms)
        })`,
      );}
  }
  /** @inheritdoc */
  info(line: string): void {
    this.#line(line);
  }
  /** @inheritdoc */
  close(): void {}
}

/** Live lines on a terminal: one per running node, redrawn in place. */
export class TtyReporter implements Reporter {
  #write: (t: string) => void;
  #now: () => number;
  #running = new Map<string, _Running>();
  #lines = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;
  /** Creates the reporter. */
  constructor(options: ReporterOptions = {}) {
    this.#write = options.write ?? _stderr;
    this.#now = options.now ?? Date.now;
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
    for (const [id, r] of this.#running) {
      if (lines.length === max - 1 && this.#running.size > max) {
        lines.push(`  … and ${this.#running.size - lines.length} more running`);
        break;
      }
      lines.push(("▸ " + _describe(id, r, now)).slice(0, cols - 1));
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
  start(id: string): void {
    this.#running.set(id, {
      start: this.#now(),
      done: 0,
      total: 0,
      lastPrinted: 0,
    });
    this.#schedule();
  }
  /** @inheritdoc */
  progress(id: string, done: number, total: number, note?: string): void {
    const r = this.#running.get(id);
    if (!r) return;
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
    if (status === "failed") {
      this.#permanent(
        `\x1b[31m✗\x1b[0m ${id} (${formatDuration(ms)}): ${error ?? ""}`,
      );
    } else if (status === "done") {
      this.#permanent(`\x1b[32m✓\x1b[0m ${id} (${formatDuration(ms)})`);
    } else this.#permanent(`= ${id} (cached)`);
  }
  /** @inheritdoc */
  info(line: string): void {
    this.#permanent(line);
  }
  /** @inheritdoc */
  close(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#write(this.#clear());
    this.#lines = 0;
    this.#closed = true;
  }
}

/** A reporter that prints nothing. */
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
