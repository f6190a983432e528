// The official MCP Inspector's web UI (npm @modelcontextprotocol/inspector,
// the v1 line: its web UI can connect directly from the browser; v2's goes
// through its own Node backend) against the quickstart over Streamable
// HTTP, connection type "direct": the page on http://localhost:PORT talks
// to the server itself, so CORS carries the legacy session (Mcp-Session-Id).
// It lists the tools and calls `add`, and the result appears on the page.
//
//   node --test inspector.test.mjs     (QUICKSTART=path/to/quickstart)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { freePort, startServer, launchChromium, results } from "./common.mjs";

const here = new URL(".", import.meta.url).pathname;
let server, inspector, browser, mcpPort, uiPort;

before(async () => {
  mcpPort = await freePort();
  uiPort = await freePort();
  const binary = process.env.QUICKSTART ?? `${here}../../target/release/quickstart`;
  server = await startServer("quickstart", binary, ["--http", `127.0.0.1:${mcpPort}`], mcpPort);
  // The Inspector's web UI alone: direct mode needs no proxy.
  const ui = `${here}node_modules/@modelcontextprotocol/inspector-client/bin/client.js`;
  inspector = spawn(process.execPath, [ui], {
    env: { ...process.env, CLIENT_PORT: String(uiPort), HOST: "127.0.0.1", MCP_AUTO_OPEN_ENABLED: "false" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const deadline = Date.now() + 20000;
  for (;;) {
    try {
      const response = await fetch(`http://127.0.0.1:${uiPort}/`, { signal: AbortSignal.timeout(500) });
      if (response.ok) break;
    } catch {}
    if (Date.now() > deadline) throw new Error("the Inspector's web UI did not start");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  inspector?.kill("SIGINT");
  await server?.stop();
});

test("the MCP Inspector connects directly, lists the tools and calls add", async () => {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  await page.addInitScript(() => localStorage.setItem("lastConnectionType", "direct"));
  const serverUrl = `http://127.0.0.1:${mcpPort}/mcp`;
  await page.goto(`http://localhost:${uiPort}/?transport=streamable-http&serverUrl=${encodeURIComponent(serverUrl)}`);
  try {
    await page.getByRole("button", { name: "Connect", exact: true }).click();
    await page.getByText("Connected").first().waitFor({ timeout: 15000 });
    await page.getByRole("tab", { name: "Tools" }).click();
    await page.getByRole("button", { name: "List Tools" }).click();
    // Every tool of the quickstart is listed.
    for (const name of ["add", "confirm_delete", "countdown", "divide", "echo"]) {
      await page.getByText(name, { exact: true }).first().waitFor({ timeout: 10000 });
    }
    await page.getByText("add", { exact: true }).first().click();
    await page.locator("#a").fill("2");
    await page.locator("#b").fill("40");
    await page.getByRole("button", { name: "Run Tool" }).click();
    await page.getByText("Tool Result: Success").waitFor({ timeout: 10000 });
    const result = await page.locator("body").innerText();
    assert.match(result, /Tool Result: Success\nStructured Content:\n\{\nsum:\n42\n\}/);
    assert.match(result, /Unstructured Content:\n"42"/);
  } finally {
    await page.screenshot({ path: `${results}inspector.png`, fullPage: true });
  }
  // The browser talked to the server itself: its requests carried the
  // Inspector's origin, and were answered.
  assert.doesNotMatch(server.log(), /refused a request from an origin/);
  await page.close();
});
