//! Markdown tables (GitHub's pipe tables) and the rows the charts draw.

/// One pipe table: its header cells and its body rows, cells trimmed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Table {
    pub(crate) header: Vec<String>,
    pub(crate) rows: Vec<Vec<String>>,
}

impl Table {
    /// The index of the first header cell `matches` accepts.
    fn column(&self, matches: impl Fn(&str) -> bool) -> Option<usize> {
        self.header.iter().position(|cell| matches(cell))
    }
}

/// Every pipe table in `markdown`, in order: a `|` line followed by a
/// delimiter line (`| --- | ---: |`), then its rows, up to the first line
/// that does not start with `|`.
pub(crate) fn tables(markdown: &str) -> Vec<Table> {
    let lines: Vec<&str> = markdown.lines().map(str::trim).collect();
    let mut tables = Vec::new();
    let mut i = 0;
    while i + 1 < lines.len() {
        if !(lines[i].starts_with('|') && is_delimiter(lines[i + 1])) {
            i += 1;
            continue;
        }
        let header = cells(lines[i]);
        let mut rows = Vec::new();
        i += 2;
        while i < lines.len() && lines[i].starts_with('|') {
            rows.push(cells(lines[i]));
            i += 1;
        }
        tables.push(Table { header, rows });
    }
    tables
}

fn is_delimiter(line: &str) -> bool {
    let cells = cells(line);
    line.starts_with('|')
        && !cells.is_empty()
        && cells.iter().all(|cell| {
            let dashes = cell.trim_start_matches(':').trim_end_matches(':');
            !dashes.is_empty() && dashes.bytes().all(|b| b == b'-')
        })
}

/// A row's cells, split on the `|`s that are not escaped (`\|`).
fn cells(line: &str) -> Vec<String> {
    let inner = line.strip_prefix('|').unwrap_or(line);
    let inner = match inner.strip_suffix('|') {
        Some(rest) if !rest.ends_with('\\') => rest,
        _ => inner,
    };
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('|') => cell.push('|'),
                Some(other) => {
                    cell.push('\\');
                    cell.push(other);
                }
                None => cell.push('\\'),
            },
            '|' => cells.push(std::mem::take(&mut cell).trim().to_owned()),
            _ => cell.push(c),
        }
    }
    cells.push(cell.trim().to_owned());
    cells
}

/// A number as the tables write it: `106933`, `29,996`, `0.87x`, `1.29`.
pub(crate) fn number(cell: &str) -> Option<f64> {
    let cell = cell.trim();
    let cell = cell.strip_suffix('x').unwrap_or(cell);
    let digits: String = cell.chars().filter(|&c| c != ',').collect();
    let value: f64 = digits.trim().parse().ok()?;
    value.is_finite().then_some(value)
}

/// Two numbers written `p50 / p99`: `93 / 322`.
pub(crate) fn pair(cell: &str) -> Option<(f64, f64)> {
    let (first, second) = cell.split_once('/')?;
    Some((number(first)?, number(second)?))
}

/// A label for a chart: the cell without Markdown's backticks.
fn label(cell: &str) -> String {
    cell.replace('`', "")
}

/// A row of the load table (`| workload | load | ours req/s | floor req/s
/// | ratio | ours p50 / p99 (µs) | floor p50 / p99 (µs) | p50 ratio |`).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LoadRow {
    pub(crate) workload: String,
    pub(crate) load: String,
    pub(crate) ours_rate: f64,
    pub(crate) floor_rate: f64,
    /// The median of the per-round ratios, as the table gives it (not
    /// `ours_rate / floor_rate`).
    pub(crate) ratio: f64,
    pub(crate) ours_latency: (f64, f64),
    pub(crate) floor_latency: (f64, f64),
    pub(crate) p50_ratio: f64,
}

impl LoadRow {
    /// Whether the row is the stdio driver's (pipelined), not wrk's.
    pub(crate) fn is_stdio(&self) -> bool {
        self.workload.starts_with("stdio") || self.load.starts_with("depth")
    }
}

/// The load table's rows: the first table whose header has `workload`,
/// `load`, `ours req/s` and `floor req/s` columns.
pub(crate) fn load_rows(tables: &[Table]) -> Result<Vec<LoadRow>, String> {
    let found = tables.iter().find_map(|table| {
        let workload = table.column(|c| c == "workload")?;
        let load = table.column(|c| c == "load")?;
        let ours_rate = table.column(|c| c == "ours req/s")?;
        let floor_rate = table.column(|c| c == "floor req/s")?;
        let ratio = table.column(|c| c == "ratio")?;
        let ours_latency = table.column(|c| c.starts_with("ours p50 / p99"))?;
        let floor_latency = table.column(|c| c.starts_with("floor p50 / p99"))?;
        let p50_ratio = table.column(|c| c == "p50 ratio")?;
        Some((
            table,
            [
                workload,
                load,
                ours_rate,
                floor_rate,
                ratio,
                ours_latency,
                floor_latency,
                p50_ratio,
            ],
        ))
    });
    let Some((
        table,
        [
            workload,
            load,
            ours_rate,
            floor_rate,
            ratio,
            ours_latency,
            floor_latency,
            p50_ratio,
        ],
    )) = found
    else {
        return Err(
            "no table with the columns workload | load | ours req/s | floor req/s | ratio | \
             ours p50 / p99 | floor p50 / p99 | p50 ratio"
                .to_owned(),
        );
    };
    let rows: Vec<LoadRow> = table
        .rows
        .iter()
        .map(|row| {
            let cell = |i: usize| row.get(i).map_or("", String::as_str);
            let bad = |what: &str| format!("load table: {what} in the row {row:?}");
            Ok(LoadRow {
                workload: label(cell(workload)),
                load: label(cell(load)),
                ours_rate: number(cell(ours_rate)).ok_or_else(|| bad("ours req/s"))?,
                floor_rate: number(cell(floor_rate)).ok_or_else(|| bad("floor req/s"))?,
                ratio: number(cell(ratio)).ok_or_else(|| bad("ratio"))?,
                ours_latency: pair(cell(ours_latency)).ok_or_else(|| bad("ours p50 / p99"))?,
                floor_latency: pair(cell(floor_latency)).ok_or_else(|| bad("floor p50 / p99"))?,
                p50_ratio: number(cell(p50_ratio)).ok_or_else(|| bad("p50 ratio"))?,
            })
        })
        .collect::<Result<_, String>>()?;
    if rows.is_empty() {
        return Err("the load table has no rows".to_owned());
    }
    Ok(rows)
}

/// A row of the instructions table (`| workload | ours | floor (`--floor`)
/// | ours / floor |`, callgrind's instructions per request).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct InstructionsRow {
    pub(crate) workload: String,
    pub(crate) ours: f64,
    pub(crate) floor: f64,
    pub(crate) ratio: f64,
}

/// The instructions table's rows: the first table whose header is
/// `workload`, `ours`, `floor...` and `ours / floor`.
pub(crate) fn instructions_rows(tables: &[Table]) -> Result<Vec<InstructionsRow>, String> {
    let found = tables.iter().find_map(|table| {
        if table.header.len() != 4 || table.header[0] != "workload" {
            return None;
        }
        let ours = table.column(|c| c == "ours")?;
        let floor = table.column(|c| c == "floor" || c.starts_with("floor ("))?;
        let ratio = table.column(|c| c == "ours / floor")?;
        Some((table, ours, floor, ratio))
    });
    let Some((table, ours, floor, ratio)) = found else {
        return Err("no table with the columns workload | ours | floor | ours / floor".to_owned());
    };
    // Rows without a floor (a workload it does not serve) are left out.
    let rows: Vec<InstructionsRow> = table
        .rows
        .iter()
        .filter_map(|row| {
            let cell = |i: usize| row.get(i).map_or("", String::as_str);
            Some(InstructionsRow {
                workload: label(cell(0)),
                ours: number(cell(ours))?,
                floor: number(cell(floor))?,
                ratio: number(cell(ratio))?,
            })
        })
        .collect();
    if rows.is_empty() {
        return Err("the instructions table has no rows with numbers".to_owned());
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RESULTS: &str = "\
# Benchmark results

Some prose | with a pipe.

| workload | load | ours req/s | floor req/s | ratio | ours p50 / p99 (µs) | floor p50 / p99 (µs) | p50 ratio |
| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |
| tools/call echo | 16 conn | 106933 | 122908 | 0.87x | 141 / 731 | 124 / 419 | 1.15x |
| stdio tools/call echo | depth 64 | 248303 | 562875 | 0.44x | 183 / 473 | 64 / 255 | 2.95x |

| measure | ours | floor |
| --- | ---: | ---: |
| cold start | 5.0 ms | 3.2 ms |

Instructions per request:

| workload | ours | floor (`--floor`) | ours / floor |
| --- | ---: | ---: | ---: |
| `tools/call echo` | 29,996 | 23,241 | 1.29 |
| `tools/list` (50 tools) | 27,221 | | |
";

    #[test]
    fn finds_every_table_and_its_cells() {
        let tables = tables(RESULTS);
        assert_eq!(tables.len(), 3);
        assert_eq!(tables[1].header, ["measure", "ours", "floor"]);
        assert_eq!(tables[1].rows, [["cold start", "5.0 ms", "3.2 ms"]]);
        assert_eq!(
            tables[2].rows[1],
            ["`tools/list` (50 tools)", "27,221", "", ""]
        );
    }

    #[test]
    fn parses_the_load_table() {
        let rows = load_rows(&tables(RESULTS)).unwrap();
        assert_eq!(
            rows,
            [
                LoadRow {
                    workload: "tools/call echo".into(),
                    load: "16 conn".into(),
                    ours_rate: 106_933.0,
                    floor_rate: 122_908.0,
                    ratio: 0.87,
                    ours_latency: (141.0, 731.0),
                    floor_latency: (124.0, 419.0),
                    p50_ratio: 1.15,
                },
                LoadRow {
                    workload: "stdio tools/call echo".into(),
                    load: "depth 64".into(),
                    ours_rate: 248_303.0,
                    floor_rate: 562_875.0,
                    ratio: 0.44,
                    ours_latency: (183.0, 473.0),
                    floor_latency: (64.0, 255.0),
                    p50_ratio: 2.95,
                },
            ]
        );
        assert!(!rows[0].is_stdio());
        assert!(rows[1].is_stdio());
    }

    #[test]
    fn parses_the_instructions_table_and_skips_rows_without_a_floor() {
        let rows = instructions_rows(&tables(RESULTS)).unwrap();
        assert_eq!(
            rows,
            [InstructionsRow {
                workload: "tools/call echo".into(),
                ours: 29_996.0,
                floor: 23_241.0,
                ratio: 1.29,
            }]
        );
    }

    #[test]
    fn numbers_as_the_tables_write_them() {
        assert_eq!(number("29,996"), Some(29_996.0));
        assert_eq!(number(" 0.87x "), Some(0.87));
        assert_eq!(number("5.0 ms"), None);
        assert_eq!(number(""), None);
        assert_eq!(pair("93 / 322"), Some((93.0, 322.0)));
        assert_eq!(pair("93"), None);
    }

    #[test]
    fn escaped_pipes_stay_in_their_cell() {
        assert_eq!(cells(r"| a \| b | c |"), ["a | b", "c"]);
    }

    #[test]
    fn a_missing_table_is_an_error() {
        let err = load_rows(&tables("| a | b |\n| - | - |\n| 1 | 2 |\n")).unwrap_err();
        assert!(err.contains("ours req/s"), "{err}");
    }
}
