// A minimal MCP Apps host, built on the official pieces: the TypeScript
// client (@modelcontextprotocol/client, modern mode: protocol 2026-07-28
// pinned) talks to the server over Streamable HTTP from this page's own
// origin (so CORS is exercised for real), and AppBridge
// (@modelcontextprotocol/ext-apps/app-bridge) connects the view, loaded
// into a sandboxed iframe, to the server through it.
//
// ?server=URL names the MCP endpoint. What happens is reported in
// window.hostState for the test, and on the page.
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  AppBridge,
  PostMessageTransport,
  RESOURCE_MIME_TYPE,
  buildAllowAttribute,
  getToolUiResourceUri,
  isToolVisibilityAppOnly,
} from "@modelcontextprotocol/ext-apps/app-bridge";

const state = (window.hostState = { events: [], modelTools: null, appOnlyTools: null, error: null, viewReady: false });
const status = (text) => {
  state.events.push(text);
  document.getElementById("status").textContent = text;
};

// The host's CSP for the view, from its `_meta.ui.csp` (deny by default).
function policy(csp = {}) {
  const list = (domains, fallback) => (domains?.length ? domains.join(" ") : fallback);
  const resources = list(csp.resourceDomains, "");
  return [
    "default-src 'none'",
    `script-src 'unsafe-inline' ${resources}`.trim(),
    `style-src 'unsafe-inline' ${resources}`.trim(),
    `img-src data: ${resources}`.trim(),
    `font-src ${list(csp.resourceDomains, "'none'")}`,
    `connect-src ${list(csp.connectDomains, "'none'")}`,
    `frame-src ${list(csp.frameDomains, "'none'")}`,
    `base-uri ${list(csp.baseUriDomains, "'self'")}`,
  ].join("; ");
}

function withPolicy(html, csp) {
  const meta = `<meta http-equiv="Content-Security-Policy" content="${policy(csp)}">`;
  return html.replace(/<head[^>]*>/i, (head) => `${head}${meta}`);
}

async function main() {
  const server = new URL(new URLSearchParams(location.search).get("server"));
  const client = new Client(
    { name: "mcp-runtime-test-host", version: "1.0.0" },
    {
      capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [RESOURCE_MIME_TYPE] } } },
      versionNegotiation: { mode: { pin: "2026-07-28" } },
    },
  );
  status(`connecting to ${server}`);
  await client.connect(new StreamableHTTPClientTransport(server));
  const { tools } = await client.listTools();
  // What the model would see: app-only tools are hidden from it.
  state.modelTools = tools.filter((tool) => !isToolVisibilityAppOnly(tool)).map((tool) => tool.name);
  state.appOnlyTools = tools.filter((tool) => isToolVisibilityAppOnly(tool)).map((tool) => tool.name);
  document.getElementById("tools").textContent = `(model's tools: ${state.modelTools.join(", ")})`;

  const tool = tools.find((t) => t.name === "sales_report");
  const uri = getToolUiResourceUri(tool);
  const args = { week: 1 };
  const result = await client.callTool({ name: tool.name, arguments: args });
  state.result = result;
  document.getElementById("assistant").textContent = result.content?.[0]?.text ?? "";

  const { contents } = await client.readResource({ uri });
  const view = contents.find((c) => c.uri === uri);
  if (view?.mimeType !== RESOURCE_MIME_TYPE) throw new Error(`${uri} is not an app view: ${view?.mimeType}`);
  const ui = view._meta?.ui ?? {};
  state.viewMeta = ui;

  const iframe = document.createElement("iframe");
  iframe.setAttribute("sandbox", "allow-scripts");
  iframe.setAttribute("allow", buildAllowAttribute(ui.permissions));
  iframe.title = "sales_report view";
  iframe.style.border = ui.prefersBorder ? "1px solid #ccd" : "none";
  iframe.srcdoc = withPolicy(view.text, ui.csp);
  document.getElementById("app").append(iframe);

  const bridge = new AppBridge(
    client,
    { name: "mcp-runtime-test-host", version: "1.0.0" },
    { serverTools: {}, logging: {} },
    { hostContext: { theme: "light", displayMode: "inline", platform: "web" } },
  );
  // The view reports its size; the host fits the iframe to it.
  bridge.onsizechange = ({ height }) => {
    if (height) iframe.style.height = `${Math.min(Math.ceil(height), 900)}px`;
  };
  bridge.oninitialized = async () => {
    await bridge.sendToolInput({ arguments: args });
    await bridge.sendToolResult(result);
    state.viewReady = true;
    status("view ready");
  };
  await bridge.connect(new PostMessageTransport(iframe.contentWindow, iframe.contentWindow));
  status("view loading");
}

main().catch((error) => {
  state.error = String(error?.message ?? error);
  status(`failed: ${state.error}`);
});
