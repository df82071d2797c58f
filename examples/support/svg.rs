//! A minimal SVG line plot for the examples (no plotting dependency needed).
#![allow(dead_code)]

use std::fmt::Write as _;
use std::path::PathBuf;

/// One named curve.
pub struct Series {
    pub name: String,
    pub points: Vec<(f64, f64)>,
}

const COLOURS: [&str; 6] = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf"];

/// Where plots go: `$CARGO_TARGET_DIR/plots` or `target/plots`.
pub fn plot_dir() -> PathBuf {
    let target = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
    PathBuf::from(target).join("plots")
}

/// Writes a line plot with log-scaled axes where asked into [`plot_dir`]; returns the
/// file's path.
pub fn line_plot(
    file: &str,
    title: &str,
    x_axis: (&str, bool),
    y_axis: (&str, bool),
    series: &[Series],
) -> std::io::Result<PathBuf> {
    line_plot_in(&plot_dir(), file, title, x_axis, y_axis, series)
}

/// Tick positions (in axis units: log10 of the value on a log axis) for `[lo, hi]`:
/// on a log axis spanning at least a decade, the values 1, 2, 5 × 10ᵏ (only 10ᵏ beyond
/// three decades) inside the range; otherwise multiples of a round step.
fn ticks(lo: f64, hi: f64, log: bool) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite()) {
        return vec![];
    }
    if log && hi - lo >= 0.99 {
        let steps: &[f64] = if hi - lo > 3.0 { &[1.0] } else { &[1.0, 2.0, 5.0] };
        let mut out = vec![];
        for k in (lo.floor() as i32)..=(hi.ceil() as i32) {
            for &m in steps {
                let t = (m * 10f64.powi(k)).log10();
                if t >= lo - 1e-9 && t <= hi + 1e-9 {
                    out.push(t);
                }
            }
        }
        out
    } else if hi > lo {
        // A round step (1, 2 or 5 × 10ᵏ) giving four to ten ticks inside the range.
        let raw = (hi - lo) / 5.0;
        let power = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 5.0, 10.0]
            .iter()
            .map(|m| m * power)
            .find(|&s| (hi - lo) / s <= 10.0)
            .unwrap_or(10.0 * power);
        let first = (lo / step).ceil() as i64;
        let last = (hi / step).floor() as i64;
        (first..=last).map(|i| i as f64 * step).collect()
    } else {
        vec![lo]
    }
}

/// [`line_plot`] into the directory `dir` (created if missing).
pub fn line_plot_in(
    dir: &std::path::Path,
    file: &str,
    title: &str,
    (x_label, log_x): (&str, bool),
    (y_label, log_y): (&str, bool),
    series: &[Series],
) -> std::io::Result<PathBuf> {
    // The legend sits right of the plot: make room for its longest label.
    let longest = series.iter().map(|s| s.name.chars().count()).max().unwrap_or(0) as f64;
    let right = (7.0 * longest + 60.0).max(190.0);
    let (height, left, top, bottom) = (480.0, 80.0, 50.0, 60.0);
    let width = 570.0 + right;
    let tx = |v: f64| if log_x { v.log10() } else { v };
    let ty = |v: f64| if log_y { v.log10() } else { v };
    let all = series.iter().flat_map(|s| s.points.iter());
    let (mut x0, mut x1, mut y0, mut y1) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
    // A point a log axis cannot show (a value ≤ 0) is left out of the plot.
    let shown = |&(x, y): &(f64, f64)| tx(x).is_finite() && ty(y).is_finite();
    for &(x, y) in all.filter(|p| shown(p)) {
        x0 = x0.min(tx(x));
        x1 = x1.max(tx(x));
        y0 = y0.min(ty(y));
        y1 = y1.max(ty(y));
    }
    if log_y {
        (y0, y1) = (y0.floor(), y1.ceil());
    } else {
        y0 = y0.min(0.0);
    }
    let px = |x: f64| left + (tx(x) - x0) / (x1 - x0).max(1e-300) * (width - left - right);
    let py = |y: f64| height - bottom - (ty(y) - y0) / (y1 - y0).max(1e-300) * (height - top - bottom);
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" font-family="sans-serif" font-size="12">"#
    );
    let _ = writeln!(svg, r#"<rect width="100%" height="100%" fill="white"/>"#);
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="28" font-size="16" text-anchor="middle">{title}</text>"#,
        width / 2.0
    );
    let (ax0, ax1, ay0, ay1) = (left, width - right, height - bottom, top);
    let _ = writeln!(
        svg,
        r#"<path d="M{ax0},{ay1} L{ax0},{ay0} L{ax1},{ay0}" stroke="black" fill="none"/>"#
    );
    for vx in ticks(x0, x1, log_x) {
        let lx = if log_x { 10f64.powf(vx) } else { vx };
        let gx = ax0 + (vx - x0) / (x1 - x0).max(1e-300) * (ax1 - ax0);
        let _ = writeln!(
            svg,
            r##"<line x1="{gx}" y1="{ay0}" x2="{gx}" y2="{ay1}" stroke="#ddd"/><text x="{gx}" y="{}" text-anchor="middle">{}</text>"##,
            ay0 + 16.0,
            label(lx)
        );
    }
    for vy in ticks(y0, y1, log_y) {
        let ly = if log_y { 10f64.powf(vy) } else { vy };
        let gy = ay0 - (vy - y0) / (y1 - y0).max(1e-300) * (ay0 - ay1);
        let _ = writeln!(
            svg,
            r##"<line x1="{ax0}" y1="{gy}" x2="{ax1}" y2="{gy}" stroke="#ddd"/><text x="{}" y="{}" text-anchor="end">{}</text>"##,
            ax0 - 6.0,
            gy + 4.0,
            label(ly)
        );
    }
    let _ = writeln!(
        svg,
        r#"<text x="{}" y="{}" text-anchor="middle">{x_label}</text>"#,
        (ax0 + ax1) / 2.0,
        height - 18.0
    );
    let _ = writeln!(
        svg,
        r#"<text x="20" y="{}" text-anchor="middle" transform="rotate(-90 20 {})">{y_label}</text>"#,
        (ay0 + ay1) / 2.0,
        (ay0 + ay1) / 2.0
    );
    for (i, s) in series.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let path: Vec<String> = s
            .points
            .iter()
            .filter(|p| shown(p))
            .map(|&(x, y)| format!("{:.2},{:.2}", px(x), py(y)))
            .collect();
        let _ = writeln!(
            svg,
            r#"<polyline points="{}" stroke="{colour}" stroke-width="2" fill="none"/>"#,
            path.join(" ")
        );
        for &(x, y) in s.points.iter().filter(|p| shown(p)) {
            let _ = writeln!(
                svg,
                r#"<circle cx="{:.2}" cy="{:.2}" r="3" fill="{colour}"/>"#,
                px(x),
                py(y)
            );
        }
        let ly = top + 20.0 + 22.0 * i as f64;
        let _ = writeln!(
            svg,
            r#"<line x1="{}" y1="{ly}" x2="{}" y2="{ly}" stroke="{colour}" stroke-width="3"/><text x="{}" y="{}">{}</text>"#,
            ax1 + 12.0,
            ax1 + 36.0,
            ax1 + 42.0,
            ly + 4.0,
            s.name
        );
    }
    svg.push_str("</svg>\n");
    std::fs::create_dir_all(dir)?;
    let path = dir.join(file);
    std::fs::write(&path, svg)?;
    Ok(path)
}

fn label(v: f64) -> String {
    if v != 0.0 && (v.abs() < 0.01 || v.abs() >= 1e4) {
        format!("{v:.0e}")
    } else {
        format!("{}", (v * 1000.0).round() / 1000.0)
    }
}
