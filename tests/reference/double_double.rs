//! Double-double arithmetic (a value as an unevaluated sum `hi + lo` of two `f64`, about
//! 106 bits; Dekker 1971, with Knuth's TwoSum and an FMA TwoProd), enough for
//! **high-precision** references that share no code with the crate: the exact k-fold
//! privacy curve of the discrete Laplace mechanism (`tests/pld_closed_forms.rs`).
//!
//! Each operation below is accurate to a few units of 2⁻¹⁰⁴ relative; `exp` of
//! `x ∈ [−700, 0]` (argument halved 2¹² times, 30 Taylor terms, squared back) to about
//! 2¹²·2⁻¹⁰⁴ ≈ 10⁻²⁷ relative. A sum of a few thousand non-negative terms stays within
//! 10⁻²⁵ relative: far below the 10⁻⁹ margins the tests use.
#![allow(dead_code)]

/// `hi + lo`, `|lo| ≤ ulp(hi)/2`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Dd {
    pub hi: f64,
    pub lo: f64,
}

fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let v = s - a;
    (s, (a - (s - v)) + (b - v))
}

fn quick_two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    (s, b - (s - a))
}

impl Dd {
    pub const ZERO: Dd = Dd { hi: 0.0, lo: 0.0 };
    pub const ONE: Dd = Dd { hi: 1.0, lo: 0.0 };

    /// An `f64`, exactly.
    pub fn from(x: f64) -> Dd {
        Dd { hi: x, lo: 0.0 }
    }

    pub fn add(self, y: Dd) -> Dd {
        let (s, e) = two_sum(self.hi, y.hi);
        let (t, f) = two_sum(self.lo, y.lo);
        let (s, e) = quick_two_sum(s, e + t);
        let (hi, lo) = quick_two_sum(s, e + f);
        Dd { hi, lo }
    }

    pub fn neg(self) -> Dd {
        Dd {
            hi: -self.hi,
            lo: -self.lo,
        }
    }

    pub fn sub(self, y: Dd) -> Dd {
        self.add(y.neg())
    }

    pub fn mul(self, y: Dd) -> Dd {
        let p = self.hi * y.hi;
        let e = self.hi.mul_add(y.hi, -p) + (self.hi * y.lo + self.lo * y.hi);
        let (hi, lo) = quick_two_sum(p, e);
        Dd { hi, lo }
    }

    /// Multiplication by a power of two: exact.
    pub fn scale(self, power_of_two: f64) -> Dd {
        Dd {
            hi: self.hi * power_of_two,
            lo: self.lo * power_of_two,
        }
    }

    pub fn div(self, y: Dd) -> Dd {
        let q1 = self.hi / y.hi;
        let r = self.sub(y.mul(Dd::from(q1)));
        let q2 = r.hi / y.hi;
        let r = r.sub(y.mul(Dd::from(q2)));
        let q3 = r.hi / y.hi;
        let (hi, lo) = quick_two_sum(q1, q2);
        Dd { hi, lo }.add(Dd::from(q3))
    }

    /// `e^x` for `x ∈ [−700, 0]` (see the module docs).
    pub fn exp(self) -> Dd {
        assert!(self.hi <= 0.0 && self.hi >= -700.0, "exp's argument {}", self.hi);
        const HALVINGS: i32 = 12;
        let r = self.scale(2f64.powi(-HALVINGS)); // |r| ≤ 0.171
        let (mut sum, mut term) = (Dd::ONE, Dd::ONE);
        for n in 1..=30 {
            term = term.mul(r).div(Dd::from(f64::from(n)));
            sum = sum.add(term);
        }
        for _ in 0..HALVINGS {
            sum = sum.mul(sum);
        }
        sum
    }

    pub fn to_f64(self) -> f64 {
        self.hi + self.lo
    }
}
