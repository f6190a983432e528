// MCP Apps in a real browser: a host page built from the official
// AppBridge and TypeScript client, on its own origin, against the
// dashboard example over Streamable HTTP (CORS for real). It calls the
// tool, loads the view into a sandboxed iframe and hands it the result;
// the view's button calls the app-only tool through the host.
//
//   node --test apps.test.mjs     (DASHBOARD=path/to/dashboard binary)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { copyFileSync } from "node:fs";
import { build } from "esbuild";
import { freePort, serveFiles, startServer, launchChromium, results } from "./common.mjs";

const here = new URL(".", import.meta.url).pathname;
let files, server, browser, mcpPort, pagePort;

// The figures `dashboard::report` gives for weeks 1 and 2, largest first.
const WEEK_1 = [["East", "145", "€3,625"], ["North", "127", "€3,175"], ["South", "106", "€2,650"], ["West", "93", "€2,325"]];
const WEEK_2 = [["East", "150", "€3,750"], ["North", "134", "€3,350"], ["South", "117", "€2,925"], ["West", "106", "€2,650"]];

before(async () => {
  const bundle = await build({
    entryPoints: [`${here}host/host.js`],
    bundle: true,
    format: "iife",
    target: "es2022",
    write: false,
    logLevel: "warning",
  });
  files = await serveFiles({
    "/": ["text/html", await import("node:fs").then((fs) => fs.readFileSync(`${here}host/index.html`))],
    "/host.js": ["text/javascript", bundle.outputFiles[0].contents],
  });
  pagePort = files.port;
  mcpPort = await freePort();
  const binary = process.env.DASHBOARD ?? `${here}../../target/debug/dashboard`;
  server = await startServer("dashboard", binary, [
    "--http", `127.0.0.1:${mcpPort}`,
    "--allow-origin", `http://host.test:${pagePort}`,
  ], mcpPort);
  browser = await launchChromium(["host.test", "evil.test"]);
});

after(async () => {
  await browser?.close();
  await server?.stop();
  await files?.close();
});

async function rows(frame) {
  return frame.locator("#table tbody tr").evaluateAll((trs) =>
    trs.map((tr) => [...tr.querySelectorAll("td")].map((td) => td.textContent)));
}

test("the host renders the tool's result in the view, and the button calls the app-only tool", async () => {
  const page = await browser.newPage({ viewport: { width: 820, height: 760 } });
  page.on("console", (message) => console.log(`[page ${message.type()}] ${message.text()}`));
  await page.goto(`http://host.test:${pagePort}/?server=http://127.0.0.1:${mcpPort}/mcp`);
  await page.waitForFunction(() => window.hostState.viewReady || window.hostState.error, null, { timeout: 20000 });
  const state = await page.evaluate(() => window.hostState);
  assert.equal(state.error, null, `the host failed: ${state.error}`);
  // The model sees the linked tool, not the app-only one.
  assert.deepEqual(state.modelTools, ["sales_report"]);
  assert.deepEqual(state.appOnlyTools, ["load_week"]);
  assert.deepEqual(state.viewMeta, { prefersBorder: true });
  assert.match(state.result.content[0].text, /shown in the dashboard: €11775 in total/);

  const view = page.frameLocator("iframe");
  await view.locator("#title").filter({ hasText: "week 1" }).waitFor();
  assert.equal(await view.locator("#total").textContent(), "Total €11,775");
  assert.deepEqual(await rows(view.locator("body")), WEEK_1);
  assert.equal(await view.locator("#chart rect.bar").count(), 4);
  assert.doesNotMatch(server.log(), /tool="load_week"/, "nothing called load_week yet");

  await view.locator("#next").click();
  await view.locator("#title").filter({ hasText: "week 2" }).waitFor({ timeout: 10000 });
  assert.equal(await view.locator("#total").textContent(), "Total €12,675");
  assert.deepEqual(await rows(view.locator("body")), WEEK_2);
  assert.equal(await view.locator("#status").textContent(), "Loaded by load_week");
  // The server's log: the app-only tool ran, for week 2.
  assert.match(server.log(), /INFO [^\n]*the dashboard view loaded a week tool="load_week" week=2/);

  await page.screenshot({ path: `${results}dashboard.png` });
  if (process.env.UPDATE_SCREENSHOT) copyFileSync(`${results}dashboard.png`, `${here}../../examples/dashboard/screenshot.png`);
  await page.close();
});

test("a page from an origin that is not allowed is refused", async () => {
  const page = await browser.newPage();
  const console_ = [];
  page.on("console", (message) => console_.push(message.text()));
  await page.goto(`http://evil.test:${pagePort}/?server=http://127.0.0.1:${mcpPort}/mcp`);
  await page.waitForFunction(() => window.hostState.error || window.hostState.viewReady, null, { timeout: 20000 });
  const state = await page.evaluate(() => window.hostState);
  assert.equal(state.viewReady, false);
  assert.equal(state.modelTools, null, "nothing was listed");
  assert.match(state.error, /server\/discover/, state.error);
  // The browser refused to hand the page an answer (the preflight got a
  // 403), and the server logged the refusal.
  assert.ok(console_.some((text) => /blocked by CORS policy/.test(text)), console_.join("\n"));
  const refusal = `refused a request from an origin that is not allowed origin="http://evil.test:${pagePort}"`;
  // The server's log reaches its stderr through a background writer: the
  // line may arrive a moment after the browser saw the refusal.
  for (let waited = 0; waited < 5000 && !server.log().includes(refusal); waited += 100) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.ok(server.log().includes(refusal), server.log());
  await page.close();
});
