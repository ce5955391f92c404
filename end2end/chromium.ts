// Debian's Chromium for every Playwright configuration (nothing is downloaded): the same
// binary and flags for the suite, the release checks and the benches.
export const chromium = {
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--no-first-run", "--disable-sync", "--disable-quic"],
};
