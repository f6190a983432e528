// What the browser tests share: free ports, a static file server, a
// server binary started with its log kept, and Debian's Chromium driven by
// playwright-core.
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { readFileSync, mkdirSync, createWriteStream } from "node:fs";
import { createServer as createNetServer } from "node:net";
import { chromium } from "playwright-core";

export const results = new URL("results/", import.meta.url).pathname;
mkdirSync(results, { recursive: true });

export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createNetServer();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Serves `files` ({path: [type, bytes]}) on 127.0.0.1; any Host is fine. */
export async function serveFiles(files) {
  const port = await freePort();
  const server = createServer((request, response) => {
    const path = new URL(request.url, "http://x").pathname;
    const file = files[path];
    if (!file) {
      response.writeHead(404).end();
      return;
    }
    response.writeHead(200, { "content-type": file[0], "cache-control": "no-store" }).end(file[1]);
  });
  await new Promise((resolve) => server.listen(port, "127.0.0.1", resolve));
  return { port, close: () => new Promise((resolve) => server.close(resolve)) };
}

/** Starts `binary args...` with its stderr in results/NAME.log, and waits
 * until `port` accepts connections. `log()` reads what it wrote so far. */
export async function startServer(name, binary, args, port, env = {}) {
  const logPath = `${results}${name}.log`;
  const log = createWriteStream(logPath);
  const child = spawn(binary, args, {
    env: { ...process.env, RUST_LOG: "info", NO_COLOR: "1", ...env },
    stdio: ["ignore", "ignore", "pipe"],
  });
  child.stderr.pipe(log);
  const deadline = Date.now() + 15000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${name} exited (${child.exitCode}); see ${logPath}`);
    try {
      await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(500) });
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`${name} did not start on ${port}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  return {
    log: () => readFileSync(logPath, "utf8"),
    stop: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", resolve);
        child.kill("SIGINT");
      }),
  };
}

/** Debian's Chromium, headless, with the flags this machine needs and
 * `hosts` resolved to 127.0.0.1 (distinct origins for pages). */
export function launchChromium(hosts = []) {
  const rules = hosts.map((host) => `MAP ${host} 127.0.0.1`).join(",");
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    chromiumSandbox: false,
    args: [
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      ...(rules ? [`--host-resolver-rules=${rules}`] : []),
    ],
  });
}
