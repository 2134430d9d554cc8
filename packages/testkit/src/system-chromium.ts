/**
 * How tests and benchmarks start the system's Chromium (`apt-get install chromium`) through
 * playwright-core, which cannot download a browser here: headless, without its sandbox (tests run
 * as root), GPU, background traffic or first-run pages. `MOLF_TEST_CHROMIUM` names another binary.
 */
export const SYSTEM_CHROMIUM = {
  executablePath: process.env.MOLF_TEST_CHROMIUM ?? '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--no-first-run'],
} as const;
