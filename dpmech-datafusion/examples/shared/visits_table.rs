//! The visits table of the examples: 10⁷ page visits by 10⁶ users over 30 days, from 6
//! countries (one per user), written once as CSV (≈ 280 MB) by a fixed-seed generator. Shared by `dpmech-datafusion`'s
//! `visits` example and `dpmech-ballista`'s `visits_cluster` example.

use std::io::Write;
use std::time::Instant;

const ROWS: u64 = 10_000_000;
const USERS: u64 = 1_000_000;

/// The countries of the users, and each one's share in eighths (fr and de 2/8 each).
pub const COUNTRIES: [&str; 6] = ["fr", "de", "es", "it", "nl", "pl"];

/// The country of `user`: a fixed function of the id (it draws nothing from the
/// generator, so the other columns are those of the table without countries).
fn country(user: u64) -> &'static str {
    COUNTRIES[[0, 0, 1, 1, 2, 3, 4, 5][(user.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 61) as usize]]
}

/// xorshift64*: a fixed-seed generator for the synthetic data (not for noise).
struct Gen(u64);
impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn write_table(path: &std::path::Path) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::new(std::fs::File::create(path)?);
    writeln!(out, "user_id,day,country,page,duration")?;
    let mut g = Gen(0x9e37_79b9_7f4a_7c15);
    for _ in 0..ROWS {
        let user = g.next() % USERS;
        // Each user favours a few days; durations are log-normal-ish, some missing.
        let day = 1 + (user * 7 + g.next() % 5) % 30;
        let page = (1.0 / (1e-4 + g.unit() * 0.9999)).floor() as u64; // heavy-tailed ids
        let duration = (-(g.unit().max(1e-12)).ln() * 300.0).round();
        let country = country(user);
        if g.next().is_multiple_of(1000) {
            writeln!(out, "{user},{day},{country},{page},")?; // a missing duration (NULL)
        } else {
            writeln!(out, "{user},{day},{country},{page},{duration}")?;
        }
    }
    out.flush()
}

/// The path of the table (`target/visits-by-country.csv` at the repository root),
/// written first if it does not exist.
pub fn visits_csv() -> std::io::Result<std::path::PathBuf> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/visits-by-country.csv");
    if !path.exists() {
        let start = Instant::now();
        std::fs::create_dir_all(path.parent().expect("target/"))?;
        write_table(&path)?;
        println!(
            "wrote {} ({:.1} s)",
            path.display(),
            start.elapsed().as_secs_f64()
        );
    }
    Ok(path)
}
