//! Accounting: what do k releases of the Laplace mechanism (ε₀ = 0.1 each) cost in
//! total, at δ = 1e-6, under each composition rule the crate offers? Prints a table
//! and draws ε against k as an SVG.
//!
//! ```text
//! cargo run --release --example accounting     # writes target/accounting.svg
//! ```
//!
//! * sequential: k·ε₀ (no δ; valid for anything);
//! * advanced (Dwork–Rothblum–Vadhan 2010), slack δ′ = δ;
//! * zCDP: each ε₀-DP release is ε₀²/2-zCDP, Σρ converted tightly (CKS20);
//! * optimal (Kairouz–Oh–Viswanath 2015): exact for k *arbitrary* ε₀-DP releases;
//! * PLD: the privacy loss distribution of the Laplace mechanism itself, composed
//!   numerically with a certified upper bound — the only rule that uses what the
//!   mechanism is, not just its ε₀.

use dpmech::composition::pld::{Grid, Pld};
use dpmech::composition::{advanced, optimal, zcdp};

const EPSILON_0: f64 = 0.1;
const DELTA: f64 = 1e-6;

fn main() -> Result<(), dpmech::Error> {
    let ks = [1u64, 2, 5, 10, 20, 50, 100, 200, 500, 1000];
    let names = ["sequential", "advanced", "zCDP", "optimal", "PLD"];
    println!("k Laplace releases of ε₀ = {EPSILON_0} each: the whole is (ε, δ = {DELTA:e})-DP with ε =");
    println!(
        "{:>6} | {:>10} | {:>10} | {:>10} | {:>10} | {:>10}",
        "k", names[0], names[1], names[2], names[3], names[4]
    );
    let one = Pld::laplace(EPSILON_0, Grid::default())?;
    let mut rows = Vec::new();
    for &k in &ks {
        let kf = k as f64;
        let row = [
            kf * EPSILON_0,
            advanced::epsilon(k, EPSILON_0, DELTA)?.min(kf * EPSILON_0),
            zcdp::epsilon_tight(kf * zcdp::pure_to_zcdp(EPSILON_0)?, DELTA)?,
            optimal::epsilon(k, EPSILON_0, DELTA)?,
            one.self_compose(k)?.epsilon_for_delta(DELTA)?,
        ];
        println!(
            "{k:>6} | {:>10.3} | {:>10.3} | {:>10.3} | {:>10.3} | {:>10.3}",
            row[0], row[1], row[2], row[3], row[4]
        );
        rows.push((kf, row));
    }
    println!("\nSmaller is better. Every number is an upper bound on the true cost.");
    println!(
        "For 1000 releases the PLD certifies ε = {:.2} where sequential composition says {:.0}.",
        rows[9].1[4], rows[9].1[0]
    );

    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("target/accounting.svg");
    std::fs::create_dir_all(path.parent().expect("target/ has a parent")).ok();
    match std::fs::write(&path, svg(&rows, &names)) {
        Ok(()) => println!("Plot of ε against k: {}", path.display()),
        Err(e) => println!("(could not write the plot: {e})"),
    }
    Ok(())
}

/// A log–log line chart of ε against k, one line per rule.
fn svg(rows: &[(f64, [f64; 5])], names: &[&str; 5]) -> String {
    let (w, h, margin) = (640.0, 400.0, 60.0);
    let (kmin, kmax) = (rows[0].0.log10(), rows[rows.len() - 1].0.log10());
    let (emin, emax) = (-2.0f64, 2.0f64); // ε from 0.01 to 100
    let x = |k: f64| margin + (k.log10() - kmin) / (kmax - kmin) * (w - 2.0 * margin);
    let y = |e: f64| h - margin - (e.log10().clamp(emin, emax) - emin) / (emax - emin) * (h - 2.0 * margin);
    let colours = ["#888888", "#e07b39", "#3a7dc9", "#7b52ab", "#2a9d55"];
    let mut out = format!(
        "<svg xmlns='http://www.w3.org/2000/svg' width='{w}' height='{h}' font-family='sans-serif' font-size='12'>\n\
         <rect width='100%' height='100%' fill='white'/>\n\
         <text x='{}' y='20' text-anchor='middle' font-size='14'>Total ε of k Laplace releases (ε₀ = {EPSILON_0}, δ = {DELTA:e})</text>\n",
        w / 2.0
    );
    for decade in -2..=2 {
        let e = 10f64.powi(decade);
        out += &format!(
            "<line x1='{margin}' x2='{}' y1='{y0}' y2='{y0}' stroke='#eeeeee'/><text x='{}' y='{}' text-anchor='end'>{e}</text>\n",
            w - margin,
            margin - 6.0,
            y(e) + 4.0,
            y0 = y(e)
        );
    }
    for &(k, _) in rows {
        out += &format!(
            "<text x='{}' y='{}' text-anchor='middle'>{k}</text>\n",
            x(k),
            h - margin + 18.0
        );
    }
    out += &format!(
        "<text x='{}' y='{}' text-anchor='middle'>k (releases)</text>\n",
        w / 2.0,
        h - 15.0
    );
    for (i, name) in names.iter().enumerate() {
        let points: Vec<String> = rows
            .iter()
            .map(|(k, r)| format!("{:.1},{:.1}", x(*k), y(r[i])))
            .collect();
        out += &format!(
            "<polyline fill='none' stroke='{}' stroke-width='2' points='{}'/>\n<text x='{}' y='{}' fill='{}'>{name}</text>\n",
            colours[i],
            points.join(" "),
            margin + 10.0,
            margin + 16.0 * i as f64,
            colours[i]
        );
    }
    out + "</svg>\n"
}
