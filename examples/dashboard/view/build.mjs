// Builds dist/view.html: src/view.js with the official App class of
// @modelcontextprotocol/ext-apps bundled in by esbuild, inlined into
// src/view.html, so that the view is one self-contained page (hosts load
// it into a sandboxed iframe with no network by default).
//
//   npm ci && node build.mjs          (from examples/dashboard/view)
//   node build.mjs --check            (fails if dist/view.html is stale)
import { build } from "esbuild";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";

const here = new URL(".", import.meta.url);
const bundle = await build({
  entryPoints: [new URL("src/view.js", here).pathname],
  bundle: true,
  minify: true,
  format: "iife",
  target: "es2022",
  legalComments: "none",
  write: false,
  logLevel: "warning",
});
const script = bundle.outputFiles[0].text.replaceAll("</script", "<\\/script");
const template = readFileSync(new URL("src/view.html", here), "utf8");
const html = template.replace("<!--SCRIPT-->", () => `<script>${script}</script>`);
const out = new URL("dist/view.html", here);
if (process.argv.includes("--check")) {
  const committed = readFileSync(out, "utf8");
  if (committed !== html) {
    console.error("examples/dashboard/view/dist/view.html is stale: run `node build.mjs` in examples/dashboard/view and commit it");
    process.exit(1);
  }
  console.log("dist/view.html is up to date");
} else {
  mkdirSync(new URL("dist/", here), { recursive: true });
  writeFileSync(out, html);
  console.log(`wrote dist/view.html (${html.length} bytes)`);
}
