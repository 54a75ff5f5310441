/**
 * The entries of a run by node index: computed ones held in memory, cached
 * ones read (and verified) from the store on first use, so a fully cached
 * run reads only the values its dependents need.
 *
 * @module
 */
import type { Entry, Store } from "./store.ts";

/** Entries by node index (see the module documentation). */
export class EntryMap {
  #store: Store;
  #keys: readonly string[];
  #loaded = new Map<number, Entry>();
  #stored = new Set<number>();
  /** Creates the map over `keys` (index-aligned with the experiment's nodes). */
  constructor(store: Store, keys: readonly string[]) {
    this.#store = store;
    this.#keys = keys;
  }
  /** Marks a node as available in the store. */
  markStored(i: number): void {
    this.#stored.add(i);
  }
  /** Whether a node's entry is available. */
  has(i: number): boolean {
    return this.#loaded.has(i) || this.#stored.has(i);
  }
  /** Sets a computed entry. */
  set(i: number, e: Entry): void {
    this.#loaded.set(i, e);
  }
  /** The entry of a node, reading it from the store if needed. */
  get(i: number): Entry | undefined {
    const hit = this.#loaded.get(i);
    if (hit || !this.#stored.has(i)) return hit;
    const e = this.#store.loadVerified(this.#keys[i]!);
    if (e) this.#loaded.set(i, e);
    return e ?? undefined;
  }
}
