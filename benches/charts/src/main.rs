//! Draws benches/RESULTS.md's tables as SVG charts for the book:
//!
//! - `throughput.svg`: the load table's `ours req/s` and `floor req/s` for
//!   each workload and load, HTTP (wrk) above and stdio (pipelined) below,
//!   with the `ratio` column (the median of the per-round ratios);
//! - `latency.svg`: the same rows' `p50 / p99` for ours and the floor (a bar
//!   to the p50, a whisker to the p99, on a logarithmic axis), with the
//!   `p50 ratio` column;
//! - `instructions.svg`: callgrind's instructions per request, ours and
//!   the floor's (the `| workload | ours | floor | ours / floor |` table).
//!
//! `cargo run -p mcp-bench-charts [RESULTS.md [OUT_DIR]]`, by default
//! benches/RESULTS.md into docs/src/charts/; benches/run.sh runs it after
//! writing RESULTS.md.

mod chart;
mod table;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use chart::{Panel, Row};
use table::{InstructionsRow, LoadRow};

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    // benches/charts/ in the workspace's root.
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest.parent().and_then(Path::parent).unwrap_or(manifest);
    let results = args
        .next()
        .map_or_else(|| root.join("benches/RESULTS.md"), PathBuf::from);
    let out = args
        .next()
        .map_or_else(|| root.join("docs/src/charts"), PathBuf::from);
    match run(&results, &out) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("charts: {}: {err}", results.display());
            ExitCode::FAILURE
        }
    }
}

fn run(results: &Path, out: &Path) -> Result<(), Box<dyn std::error::Error>> {
    let markdown = std::fs::read_to_string(results)?;
    let tables = table::tables(&markdown);
    let load = table::load_rows(&tables)?;
    std::fs::create_dir_all(out)?;

    let (stdio, http): (Vec<&LoadRow>, Vec<&LoadRow>) = load.iter().partition(|row| row.is_stdio());
    let throughput = |caption: &str, rows: &[&LoadRow]| Panel {
        caption: caption.to_owned(),
        x_desc: "requests per second (median of the rounds)".to_owned(),
        note_header: "ours / floor".to_owned(),
        log: false,
        values: true,
        rows: rows
            .iter()
            .map(|row| Row {
                group: row.workload.clone(),
                label: format!("{}, {}", row.workload, row.load),
                ours: row.ours_rate,
                floor: row.floor_rate,
                whiskers: None,
                note: format!("{:.2}x", row.ratio),
            })
            .collect(),
    };
    let mut panels = Vec::new();
    if !http.is_empty() {
        panels.push(throughput(
            "HTTP throughput (wrk), ours and the hyper floor",
            &http,
        ));
    }
    if !stdio.is_empty() {
        panels.push(throughput(
            "stdio throughput (pipelined), ours and the bare loop",
            &stdio,
        ));
    }
    write(out, "throughput.svg", &panels)?;

    let latency = Panel {
        caption: "Latency: p50 (bar) and p99 (whisker)".to_owned(),
        x_desc: "µs, logarithmic".to_owned(),
        note_header: "p50 ratio".to_owned(),
        log: true,
        values: false,
        rows: load
            .iter()
            .map(|row| Row {
                group: row.workload.clone(),
                label: format!("{}, {}", row.workload, row.load),
                ours: row.ours_latency.0,
                floor: row.floor_latency.0,
                whiskers: Some((row.ours_latency.1, row.floor_latency.1)),
                note: format!("{:.2}x", row.p50_ratio),
            })
            .collect(),
    };
    write(out, "latency.svg", &[latency])?;

    // The instructions table is in the notes, not the run's output: a
    // RESULTS.md without it still gets the two charts above.
    match table::instructions_rows(&tables) {
        Ok(rows) => write(out, "instructions.svg", &[instructions(&rows)])?,
        Err(err) => eprintln!(
            "charts: {}: {err}; instructions.svg not written",
            results.display()
        ),
    }
    Ok(())
}

fn instructions(rows: &[InstructionsRow]) -> Panel {
    Panel {
        caption: "Instructions per request (callgrind)".to_owned(),
        x_desc: "instructions per request".to_owned(),
        note_header: "ours / floor".to_owned(),
        log: false,
        values: true,
        rows: rows
            .iter()
            .map(|row| Row {
                group: row.workload.clone(),
                label: row.workload.clone(),
                ours: row.ours,
                floor: row.floor,
                whiskers: None,
                note: format!("{:.2}", row.ratio),
            })
            .collect(),
    }
}

fn write(out: &Path, name: &str, panels: &[Panel]) -> Result<(), Box<dyn std::error::Error>> {
    let path = out.join(name);
    chart::draw(&path, panels)?;
    eprintln!("charts: wrote {}", path.display());
    Ok(())
}
