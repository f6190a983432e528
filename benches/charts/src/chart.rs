//! Horizontal grouped bar charts, ours against the floor, drawn as SVG.

use std::error::Error;
use std::path::Path;

use plotters::coord::Shift;
use plotters::coord::ranged1d::{Ranged, ValueFormatter};
use plotters::coord::types::RangedCoordf64;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

type Area<'a> = DrawingArea<SVGBackend<'a>, Shift>;
type Result<T = ()> = std::result::Result<T, Box<dyn Error>>;

const OURS: RGBColor = RGBColor(31, 119, 180);
const FLOOR: RGBColor = RGBColor(150, 150, 150);
const FONT: &str = "sans-serif";
const WIDTH: u32 = 1000;
/// Left of the plot: the rows' labels.
const LABELS: u32 = 300;
/// Right of the plot: the ratio column.
const NOTES: u32 = 70;
const ROW: u32 = 34;
/// A panel's height besides its rows: caption and legend, x axis.
const CHROME: u32 = 100;

/// One row: ours and the floor's bars, each with an optional whisker
/// further out (a p99 beyond a p50), and a note in the right column.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    /// Rows of one group are drawn together, a line between groups.
    pub(crate) group: String,
    pub(crate) label: String,
    pub(crate) ours: f64,
    pub(crate) floor: f64,
    pub(crate) whiskers: Option<(f64, f64)>,
    pub(crate) note: String,
}

/// One chart: the rows and how their axis reads.
#[derive(Debug, Clone)]
pub(crate) struct Panel {
    pub(crate) caption: String,
    pub(crate) x_desc: String,
    /// The right column's header.
    pub(crate) note_header: String,
    /// A logarithmic value axis (latencies, whose p99s are tens of p50s).
    pub(crate) log: bool,
    /// Each bar's value written at its end.
    pub(crate) values: bool,
    pub(crate) rows: Vec<Row>,
}

impl Panel {
    fn height(&self) -> u32 {
        CHROME + ROW * u32::try_from(self.rows.len()).unwrap_or(u32::MAX / ROW / 2)
    }
}

/// Draws `panels`, one under the other, into the SVG file `path`.
pub(crate) fn draw(path: &Path, panels: &[Panel]) -> Result {
    let height = panels.iter().map(Panel::height).sum();
    let root = SVGBackend::new(path, (WIDTH, height)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut rest = root.clone();
    for panel in panels {
        let (area, below) = rest.split_vertically(panel.height());
        if panel.log {
            let (low, high) = log_bounds(panel);
            let x: LogCoord<f64> = (low..high).log_scale().into();
            draw_panel(&root, &area, panel, x, low)?;
        } else {
            let high = panel
                .rows
                .iter()
                .map(|row| {
                    row.ours
                        .max(row.floor)
                        .max(row.whiskers.map_or(0.0, |w| w.0.max(w.1)))
                })
                .fold(0.0, f64::max);
            // Room for the values written after the longest bar.
            let x: RangedCoordf64 = (0.0..high * 1.15).into();
            draw_panel(&root, &area, panel, x, 0.0)?;
        }
        rest = below;
    }
    root.present()?;
    Ok(())
}

/// Whole decades around every value of a logarithmic panel.
fn log_bounds(panel: &Panel) -> (f64, f64) {
    let values = panel.rows.iter().flat_map(|row| {
        let (a, b) = row.whiskers.unwrap_or((row.ours, row.floor));
        [row.ours, row.floor, a, b]
    });
    let (low, high) = values
        .filter(|v| *v > 0.0)
        .fold((f64::INFINITY, 0.0_f64), |(low, high), v| {
            (low.min(v), high.max(v))
        });
    if high == 0.0 {
        return (1.0, 10.0);
    }
    let low = 10_f64.powf(low.log10().floor());
    let high = 10_f64.powf(high.log10().ceil());
    (low, if high > low { high } else { low * 10.0 })
}

fn draw_panel<X>(root: &Area<'_>, area: &Area<'_>, panel: &Panel, x: X, base: f64) -> Result
where
    X: Ranged<ValueType = f64> + ValueFormatter<f64>,
{
    #[allow(clippy::cast_precision_loss, reason = "a few dozen rows")]
    let n = panel.rows.len() as f64;
    let mut chart = ChartBuilder::on(area)
        .margin_top(44)
        .margin_bottom(5)
        .margin_left(LABELS)
        .margin_right(NOTES)
        .x_label_area_size(40)
        .build_cartesian_2d(x, 0.0..n)?;
    let log = panel.log;
    chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(if log { 20 } else { 8 })
        .x_label_formatter(&|v| if log { decade_label(*v) } else { thousands(*v) })
        .x_desc(panel.x_desc.as_str())
        .axis_desc_style((FONT, 14))
        .label_style((FONT, 12))
        .light_line_style(WHITE.mix(0.0))
        .bold_line_style(BLACK.mix(0.12))
        .draw()?;

    let small = TextStyle::from((FONT, 12).into_font()).color(&RGBColor(70, 70, 70));
    let label_style =
        TextStyle::from((FONT, 14).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
    let note_style = TextStyle::from((FONT, 14).into_font().style(FontStyle::Bold))
        .pos(Pos::new(HPos::Center, VPos::Center));
    let (x_low, x_high) = {
        let range = chart.x_range();
        (range.start, range.end)
    };
    let right = chart.backend_coord(&(x_high, 0.0)).0;
    let note_x = right + i32::try_from(NOTES / 2).unwrap_or(0);

    // The caption at the left; the legend and the ratio column's header
    // above the plot, at its right.
    let (area_x, area_y) = area.get_base_pixel();
    root.draw(&Text::new(
        panel.caption.as_str(),
        (area_x + 12, area_y + 10),
        TextStyle::from((FONT, 20).into_font()).pos(Pos::new(HPos::Left, VPos::Top)),
    ))?;
    let legend_y = chart.backend_coord(&(x_low, n)).1 - 14;
    for (i, (name, color)) in [("ours", OURS), ("floor", FLOOR)].into_iter().enumerate() {
        let x = right - 150 + 80 * i32::try_from(i).unwrap_or(0);
        root.draw(&Rectangle::new(
            [(x, legend_y - 6), (x + 14, legend_y + 6)],
            color.filled(),
        ))?;
        root.draw(&Text::new(
            name,
            (x + 20, legend_y),
            label_style.pos(Pos::new(HPos::Left, VPos::Center)),
        ))?;
    }
    root.draw(&Text::new(
        panel.note_header.as_str(),
        (note_x, legend_y),
        small.pos(Pos::new(HPos::Center, VPos::Center)),
    ))?;

    let mut previous_group: Option<&str> = None;
    for (i, row) in panel.rows.iter().enumerate() {
        #[allow(clippy::cast_precision_loss, reason = "a few dozen rows")]
        let top = n - i as f64;
        if previous_group.is_some_and(|group| group != row.group) {
            chart.draw_series(std::iter::once(PathElement::new(
                [(x_low, top), (x_high, top)],
                BLACK.mix(0.25),
            )))?;
        }
        previous_group = Some(&row.group);
        let bars = [
            (
                row.ours,
                row.whiskers.map(|w| w.0),
                OURS,
                top - 0.12,
                top - 0.5,
            ),
            (
                row.floor,
                row.whiskers.map(|w| w.1),
                FLOOR,
                top - 0.5,
                top - 0.88,
            ),
        ];
        for (value, whisker, color, y0, y1) in bars {
            chart.draw_series(std::iter::once(Rectangle::new(
                [(base, y0), (value, y1)],
                color.filled(),
            )))?;
            let middle = (y0 + y1) / 2.0;
            if let Some(whisker) = whisker {
                let style = color.stroke_width(2);
                chart.draw_series([
                    PathElement::new([(value, middle), (whisker, middle)], style),
                    PathElement::new([(whisker, y0 - 0.06), (whisker, y1 + 0.06)], style),
                ])?;
            }
            if panel.values {
                let (px, py) = chart.backend_coord(&(value, middle));
                root.draw(&Text::new(
                    thousands(value),
                    (px + 4, py),
                    small.pos(Pos::new(HPos::Left, VPos::Center)),
                ))?;
            }
        }
        let (px, py) = chart.backend_coord(&(x_low, top - 0.5));
        root.draw(&Text::new(
            row.label.as_str(),
            (px - 8, py),
            label_style.clone(),
        ))?;
        root.draw(&Text::new(
            row.note.as_str(),
            (note_x, py),
            note_style.clone(),
        ))?;
    }
    Ok(())
}

/// `106933` as `106,933`; fractions only below 10.
pub(crate) fn thousands(value: f64) -> String {
    if value.abs() < 10.0 && value.fract() != 0.0 {
        return format!("{value:.1}");
    }
    let digits = format!("{:.0}", value.abs());
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(digit);
    }
    if value < 0.0 { format!("-{out}") } else { out }
}

/// A logarithmic axis' tick: 1, 2 and 5 of each decade, others blank.
fn decade_label(value: f64) -> String {
    let decade = 10_f64.powf(value.log10().floor());
    let leading = (value / decade).round();
    if [1.0, 2.0, 5.0].contains(&leading) && (value / decade - leading).abs() < 1e-6 {
        thousands(value)
    } else {
        String::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_separators() {
        assert_eq!(thousands(106_933.0), "106,933");
        assert_eq!(thousands(999.0), "999");
        assert_eq!(thousands(1_000.0), "1,000");
        assert_eq!(thousands(0.0), "0");
        assert_eq!(thousands(2.5), "2.5");
    }

    #[test]
    fn decades_hold_every_value() {
        let row = |ours, floor, whiskers| Row {
            group: String::new(),
            label: String::new(),
            ours,
            floor,
            whiskers,
            note: String::new(),
        };
        let panel = Panel {
            caption: String::new(),
            x_desc: String::new(),
            note_header: String::new(),
            log: true,
            values: false,
            rows: vec![row(65.0, 51.0, Some((155.0, 2490.0)))],
        };
        assert_eq!(log_bounds(&panel), (10.0, 10_000.0));
    }
}
