/** Debian's chromium (`apt-get install chromium`; .ci/run installs it): no browser is downloaded. */
export const CHROMIUM_PATH = process.env.SVC_CHROMIUM ?? "/usr/bin/chromium";

/** Flags for a quiet headless run (Playwright adds --headless and the fresh profile's --user-data-dir). */
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
