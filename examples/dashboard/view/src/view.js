// The dashboard's view: renders a sales report (the tool's structured
// result) as a bar chart and a table, and loads the next week through the
// host with the app-only tool `load_week`.
import { App } from "@modelcontextprotocol/ext-apps";

const SVG = "http://www.w3.org/2000/svg";
const euros = new Intl.NumberFormat("en", { style: "currency", currency: "EUR", maximumFractionDigits: 0 });
const $ = (id) => document.getElementById(id);
let week = null;

function svg(name, attributes, text) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

function renderChart(regions) {
  const chart = $("chart");
  chart.replaceChildren();
  const max = Math.max(...regions.map((r) => r.revenue), 1);
  const width = 480, height = 180, left = 56, bottom = 24, gap = 16;
  const barWidth = (width - left - gap * (regions.length + 1)) / regions.length;
  regions.forEach((row, index) => {
    const barHeight = ((height - bottom - 20) * row.revenue) / max;
    const x = left + gap + index * (barWidth + gap);
    const y = height - bottom - barHeight;
    chart.append(svg("rect", { class: "bar", x, y, width: barWidth, height: barHeight, "data-region": row.region }));
    chart.append(svg("text", { class: "bar-label", x: x + barWidth / 2, y: y - 4, "text-anchor": "middle" }, euros.format(row.revenue)));
    chart.append(svg("text", { class: "axis", x: x + barWidth / 2, y: height - 6, "text-anchor": "middle" }, row.region));
  });
}

function renderTable(regions) {
  const rows = regions.map((row) => {
    const tr = document.createElement("tr");
    tr.dataset.region = row.region;
    for (const cell of [row.region, String(row.units), euros.format(row.revenue)]) {
      const td = document.createElement("td");
      td.textContent = cell;
      tr.append(td);
    }
    return tr;
  });
  $("table").tBodies[0].replaceChildren(...rows);
}

function render(result) {
  const report = result?.structuredContent;
  if (!report || !Array.isArray(report.regions)) {
    const text = result?.content?.find((c) => c.type === "text")?.text;
    $("status").textContent = text ?? "The tool returned no report.";
    return;
  }
  week = report.week;
  $("title").textContent = `Sales by region, week ${report.week}`;
  $("total").textContent = `Total ${euros.format(report.total_revenue)}`;
  renderChart(report.regions);
  renderTable(report.regions);
  $("next").disabled = report.week >= 52;
  document.body.dataset.week = String(report.week);
}

const app = new App({ name: "Sales dashboard", version: "1.0.0" });
app.ontoolresult = (result) => {
  render(result);
  $("status").textContent = "";
};

$("next").addEventListener("click", async () => {
  $("next").disabled = true;
  $("status").textContent = `Loading week ${week + 1}…`;
  try {
    const result = await app.callServerTool({ name: "load_week", arguments: { week: week + 1 } });
    if (result.isError) throw new Error(result.content?.[0]?.text ?? "load_week failed");
    render(result);
    $("status").textContent = `Loaded by load_week`;
  } catch (error) {
    $("status").textContent = `Could not load the week: ${error.message ?? error}`;
    $("next").disabled = false;
  }
});

app.connect();
