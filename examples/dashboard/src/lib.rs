//! A sales dashboard as an MCP App (`io.modelcontextprotocol/ui`).
//!
//! `sales_report` answers with the week's sales by region as structured
//! content; hosts with MCP Apps render it in the view (`ui://dashboard/view.html`),
//! a chart and a table, and the others get a text table. The view's "Next
//! week" button calls `load_week`, a tool only views call (hosts hide it
//! from the model), through the host.
//!
//! The view is plain HTML with the official `App` class of
//! `@modelcontextprotocol/ext-apps` bundled in by esbuild (`view/build.mjs`);
//! the built page is committed, so building this crate needs no Node.

use mcp_runtime::apps::UiCapability;
use mcp_runtime::{Structured, resource, tool};

/// The dashboard's view: a chart and a table of the week's sales.
#[resource(
    "ui://dashboard/view.html",
    title = "Sales dashboard",
    app(prefers_border = true)
)]
pub fn dashboard_view() -> &'static str {
    include_str!("../view/dist/view.html")
}

/// One region's sales in a week.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct RegionSales {
    /// The region.
    pub region: String,
    /// Units sold.
    pub units: u32,
    /// Revenue, in whole euros.
    pub revenue: u32,
}

/// The sales of one week, by region.
#[derive(Clone, Debug, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct SalesReport {
    /// The week (1 to 52).
    pub week: u32,
    /// Sales by region, largest revenue first.
    pub regions: Vec<RegionSales>,
    /// Total revenue, in whole euros.
    pub total_revenue: u32,
}

const REGIONS: [(&str, u32, u32); 4] = [
    ("North", 120, 7),
    ("South", 95, 11),
    ("East", 140, 5),
    ("West", 80, 13),
];

/// The report for `week` (figures made up, but the same for the same week).
pub fn report(week: u32) -> SalesReport {
    let mut regions: Vec<RegionSales> = REGIONS
        .iter()
        .map(|&(region, base, step)| {
            let units = base + (week * step) % 60;
            RegionSales {
                region: region.to_owned(),
                units,
                revenue: units * 25,
            }
        })
        .collect();
    regions.sort_by(|a, b| b.revenue.cmp(&a.revenue).then(a.region.cmp(&b.region)));
    let total_revenue = regions.iter().map(|r| r.revenue).sum();
    SalesReport {
        week,
        regions,
        total_revenue,
    }
}

/// The report as a text table, for hosts without MCP Apps.
pub fn text_table(report: &SalesReport) -> String {
    let mut text = format!(
        "Sales, week {}\n\nregion | units | revenue\n--- | ---: | ---:\n",
        report.week
    );
    for row in &report.regions {
        text.push_str(&format!(
            "{} | {} | €{}\n",
            row.region, row.units, row.revenue
        ));
    }
    text.push_str(&format!("total | | €{}", report.total_revenue));
    text
}

fn checked_week(week: Option<u32>) -> Result<u32, String> {
    match week.unwrap_or(1) {
        week @ 1..=52 => Ok(week),
        other => Err(format!(
            "week {other} does not exist: give a week from 1 to 52"
        )),
    }
}

/// Shows the week's sales by region: a chart and a table in hosts with MCP
/// Apps, a text table elsewhere.
#[tool(
    ui = "ui://dashboard/view.html",
    annotations(read_only, open_world = false)
)]
pub fn sales_report(
    /// The week, 1 to 52 (default 1).
    week: Option<u32>,
    #[ctx] ui: UiCapability<'_>,
) -> Result<Structured<SalesReport>, String> {
    let report = report(checked_week(week)?);
    let text = match ui.supports_apps() {
        true => format!(
            "Sales for week {} are shown in the dashboard: €{} in total.",
            report.week, report.total_revenue
        ),
        false => text_table(&report),
    };
    Ok(Structured::new(report).with_text(text))
}

/// Loads another week into the dashboard. Called by the view's buttons
/// only: hosts keep it from the model.
#[tool(visibility = ["app"], annotations(read_only, open_world = false))]
pub fn load_week(
    /// The week to load, 1 to 52.
    week: u32,
) -> Result<Structured<SalesReport>, String> {
    let report = report(checked_week(Some(week))?);
    tracing::info!(tool = "load_week", week, "the dashboard view loaded a week");
    let text = format!("Week {}: €{} in total.", report.week, report.total_revenue);
    Ok(Structured::new(report).with_text(text))
}
