/**
 * What the report's browser tests share: the headless Chromium they drive and
 * the flags that make its render of a local file quiet and offline.
 */

/** The Chromium binary the report's browser tests run (skipped without it). */
export const CHROMIUM = "/usr/bin/chromium";

/**
 * Chromium's flags for a headless render of a local page: no sandbox, GPU,
 * first-run dialog, background network or component updates.
 */
export const HEADLESS_FLAGS: readonly string[] = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
];
