//! Randomized response: binary (any ε), the coin-flip protocol (ln 3), and k-ary.

use crate::privacy::{PrivacyLoss, check_categories, check_epsilon, round};
use crate::sampling::{BitSource, KeepCoin, uniform_below_bits};
use crate::{CryptoRng, Error};

/// Largest ε used by the samplers; a larger requested ε is used as 64 (less
/// information is released than allowed, so the claim still holds).
const MAX_EPSILON: f64 = 64.0;

/// ε is rounded down to a multiple of `2^−DEN_SHIFT`.
const DEN_SHIFT: u32 = 62;

/// A dyadic rational `num/2⁶²`-or-coarser **at most** `x` (`0 ≤ x ≤ 64`): the ε actually
/// used by the exact samplers, never above the requested one.
pub(crate) fn dyadic_down(x: f64) -> (u128, u128) {
    let x = x.clamp(0.0, MAX_EPSILON);
    const DEN: u128 = 1 << DEN_SHIFT;
    // x·2^62 ≤ 2^68 is exact in f64 (a power-of-two scaling); floor rounds down.
    let num = (x * DEN as f64).floor() as u128;
    (num, DEN)
}

/// `e^(−num/den)` as an `f64` (for estimators and display only).
fn exp_neg(num: u128, den: u128) -> f64 {
    (-(num as f64 / den as f64)).exp()
}

/// Binary randomized response (Warner 1965): each respondent reports their true bit
/// with probability `p = e^ε/(1 + e^ε)` and the opposite bit otherwise.
///
/// * **Guarantee:** pure ε-DP in the local model: the neighbouring relation is a change
///   of the respondent's own bit; `Pr[report | b] / Pr[report | ¬b] ≤ p/(1 − p) = e^ε`.
///   Each respondent's report is a separate release ([`release_slice`](Self::release_slice)
///   applies the mechanism independently to each).
/// * **Exactness:** `p = 1/(1 + e^(−ε))` is irrational; one uniform 64-bit word is
///   compared with thresholds computed at construction from a certified enclosure of
///   `e^(−ε)`, and the rare undecided word (probability `≤ 66·2⁻⁶⁴`) is resolved
///   exactly with further words. ε is first rounded **down** to a dyadic rational
///   (`k/2⁶²`, at most 64), so the loss is at most the requested ε.
/// * **Estimator:** with a fraction `s` of reported ones among `n` reports, the true
///   fraction is estimated without bias by `(s − (1 − p))/(2p − 1)`
///   ([`estimate_fraction`](Self::estimate_fraction)).
/// * **Timing:** one word per report whatever the bit and the outcome (more only on the
///   fallback event above): the words drawn reveal nothing.
///
/// ```
/// use dpmech::RandomizedResponse;
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let rr = RandomizedResponse::new(1.0)?; // keep with p = e/(1 + e) ≈ 0.731
/// let report = rr.release(true, &mut ChaCha20Rng::seed_from_u64(1));
/// # let _ = report;
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RandomizedResponse {
    epsilon: f64,
    kind: Kind,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    /// Keep with probability `1/(1 + e^(−num/den))` (`coin` decides it).
    Binary { num: u128, den: u128, coin: KeepCoin },
    /// The two-coin protocol.
    CoinFlip,
}

impl RandomizedResponse {
    /// Binary randomized response at privacy level `epsilon`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidEpsilon`] unless ε is finite and positive.
    pub fn new(epsilon: f64) -> Result<Self, Error> {
        let epsilon = check_epsilon(epsilon)?;
        let (num, den) = dyadic_down(epsilon);
        Ok(Self {
            epsilon,
            kind: Kind::Binary {
                num,
                den,
                coin: KeepCoin::new(num, DEN_SHIFT, 1),
            },
        })
    }

    /// The coin-flip protocol (Dwork & Roth 2014, §3.2): flip a fair coin;
    /// on heads answer truthfully; on tails flip a second coin and answer "yes" on heads,
    /// "no" on tails. `Pr[yes | yes] = 3/4`, `Pr[yes | no] = 1/4`: **(ln 3)-DP**, and
    /// `p̂ = 2s − 1/2` estimates the true fraction without bias
    /// ([`estimate_fraction`](Self::estimate_fraction)).
    pub fn coin_flip() -> Self {
        Self {
            epsilon: round::ln_up(3.0),
            kind: Kind::CoinFlip,
        }
    }

    /// The randomized report of one respondent's bit.
    pub fn release<R: CryptoRng + ?Sized>(&self, value: bool, rng: &mut R) -> bool {
        self.release_bits(value, &mut BitSource::new(rng))
    }

    /// One report per respondent, independently.
    pub fn release_slice<R: CryptoRng + ?Sized>(&self, values: &[bool], rng: &mut R) -> Vec<bool> {
        let mut bits = BitSource::new(rng);
        values.iter().map(|&v| self.release_bits(v, &mut bits)).collect()
    }

    #[inline]
    fn release_bits<R: CryptoRng + ?Sized>(&self, value: bool, bits: &mut BitSource<'_, R>) -> bool {
        match self.kind {
            Kind::CoinFlip => {
                if bits.bit() {
                    value
                } else {
                    bits.bit()
                }
            }
            Kind::Binary { coin, .. } => {
                if coin.sample(bits) {
                    value
                } else {
                    !value
                }
            }
        }
    }

    /// The probability that the true bit is reported (`e^ε/(1 + e^ε)` with the ε
    /// actually used; 3/4 for the coin-flip protocol).
    pub fn keep_probability(&self) -> f64 {
        match self.kind {
            Kind::CoinFlip => 0.75,
            Kind::Binary { num, den, .. } => 1.0 / (1.0 + exp_neg(num, den)),
        }
    }

    /// The unbiased estimate `(s − (1 − p))/(2p − 1)` of the fraction of true ones,
    /// from `reported_ones` ones among `total` reports (`2s − 1/2` for the coin-flip
    /// protocol). Post-processing: no privacy cost. `total` must be positive.
    ///
    /// # Errors
    ///
    /// [`Error::EmptyInput`] for `total = 0`.
    pub fn estimate_fraction(&self, reported_ones: u64, total: u64) -> Result<f64, Error> {
        if total == 0 {
            return Err(Error::EmptyInput { what: "the reports" });
        }
        let s = reported_ones as f64 / total as f64;
        let p = self.keep_probability();
        Ok((s - (1.0 - p)) / (2.0 * p - 1.0))
    }

    /// `PrivacyLoss::Pure { epsilon }` (`ln 3`, rounded up, for the coin-flip protocol).
    pub fn privacy_loss(&self) -> PrivacyLoss {
        PrivacyLoss::Pure {
            epsilon: self.epsilon,
        }
    }
}

/// k-ary randomized response (generalised/direct encoding): a respondent holding
/// `v ∈ {0, …, k−1}` reports `v` with probability `p = e^ε/(e^ε + k − 1)` and each other
/// value with probability `q = 1/(e^ε + k − 1)`.
///
/// * **Guarantee:** pure ε-DP in the local model (neighbouring: a change of the
///   respondent's value); `p/q = e^ε`.
/// * **Exactness:** keep `v` with probability `1/(1 + (k − 1)e^(−ε)) = p` (one uniform
///   word against thresholds from a certified enclosure of `e^(−ε)`, an undecided word
///   resolved exactly), otherwise report `(v + 1 + u) mod k` with `u` uniform in
///   `{0, …, k−2}`: each other value has probability `(1 − p)/(k − 1) = q`. ε is
///   rounded down to a dyadic rational (at most 64).
/// * **Timing:** one word and one uniform draw per report (the uniform is drawn even
///   when `v` is kept; its rejection count does not depend on anything), so the words
///   drawn reveal nothing, except on the fallback event of probability at most
///   `(64(k − 1) + 2)·2⁻⁶⁴` (`≤ 2⁻⁴¹` for `k ≤ 2¹⁶`).
/// * **Estimator:** with `cⱼ` reports of `j` among `n`, `π̂ⱼ = (cⱼ/n − q)/(p − q)` is
///   unbiased ([`estimate_frequencies`](Self::estimate_frequencies)).
///
/// ```
/// use dpmech::KaryRandomizedResponse;
/// use rand_chacha::ChaCha20Rng;
/// use rand_core::SeedableRng;
/// let rr = KaryRandomizedResponse::new(4, 1.0)?;
/// let report = rr.release(2, &mut ChaCha20Rng::seed_from_u64(1))?;
/// assert!(report < 4);
/// # Ok::<(), dpmech::Error>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KaryRandomizedResponse {
    k: u64,
    epsilon: f64,
    num: u128,
    den: u128,
    coin: KeepCoin,
}

impl KaryRandomizedResponse {
    /// k-ary randomized response over `k ≥ 2` values at privacy level `epsilon`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`k`) for `k < 2`, then [`Error::InvalidEpsilon`].
    pub fn new(k: u64, epsilon: f64) -> Result<Self, Error> {
        let k = check_categories(k)?;
        let epsilon = check_epsilon(epsilon)?;
        let (num, den) = dyadic_down(epsilon);
        Ok(Self {
            k,
            epsilon,
            num,
            den,
            coin: KeepCoin::new(num, DEN_SHIFT, k - 1),
        })
    }

    /// The randomized report of one value `v < k` ([`Error::InvalidParameter`] for
    /// `v ≥ k`, before any randomness is drawn).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`value`) for `value ≥ k`, before any randomness is drawn.
    pub fn release<R: CryptoRng + ?Sized>(&self, value: u64, rng: &mut R) -> Result<u64, Error> {
        self.check(value)?;
        Ok(self.release_bits(value, &mut BitSource::new(rng)))
    }

    /// One report per respondent, independently (all values checked first).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`value`) for the first value `≥ k`, before any
    /// randomness is drawn.
    pub fn release_slice<R: CryptoRng + ?Sized>(
        &self,
        values: &[u64],
        rng: &mut R,
    ) -> Result<Vec<u64>, Error> {
        for &v in values {
            self.check(v)?;
        }
        let mut bits = BitSource::new(rng);
        Ok(values.iter().map(|&v| self.release_bits(v, &mut bits)).collect())
    }

    fn check(&self, value: u64) -> Result<(), Error> {
        if value >= self.k {
            return Err(Error::InvalidParameter {
                name: "value",
                value: value as f64,
                reason: "the value must be below k",
            });
        }
        Ok(())
    }

    #[inline]
    fn release_bits<R: CryptoRng + ?Sized>(&self, value: u64, bits: &mut BitSource<'_, R>) -> u64 {
        let keep = self.coin.sample(bits);
        let other = uniform_below_bits(bits, self.k - 1);
        if keep {
            value
        } else {
            // v + 1 + u < 2k ≤ 2^65: in u128.
            ((value as u128 + 1 + other as u128) % self.k as u128) as u64
        }
    }

    /// `(p, q)`: the probabilities of reporting the true value and each other value
    /// (with the ε actually used).
    pub fn probabilities(&self) -> (f64, f64) {
        let w = exp_neg(self.num, self.den);
        let total = 1.0 + (self.k - 1) as f64 * w;
        (1.0 / total, w / total)
    }

    /// The unbiased frequency estimates `π̂ⱼ = (cⱼ/n − q)/(p − q)` from report counts
    /// (`counts.len()` must be `k`, with a positive total).
    ///
    /// # Errors
    ///
    /// [`Error::InvalidParameter`] (`counts.len()`) unless there are `k` counts, and
    /// [`Error::EmptyInput`] when they sum to 0.
    pub fn estimate_frequencies(&self, counts: &[u64]) -> Result<Vec<f64>, Error> {
        if counts.len() as u64 != self.k {
            return Err(Error::InvalidParameter {
                name: "counts.len()",
                value: counts.len() as f64,
                reason: "there must be one count per value",
            });
        }
        // Summed in u128: k ≤ 2⁶⁴ counts below 2⁶⁴ each cannot wrap around.
        let n: u128 = counts.iter().map(|&c| u128::from(c)).sum();
        if n == 0 {
            return Err(Error::EmptyInput { what: "the reports" });
        }
        let (p, q) = self.probabilities();
        Ok(counts
            .iter()
            .map(|&c| (c as f64 / n as f64 - q) / (p - q))
            .collect())
    }

    /// The number of values k.
    pub fn k(&self) -> u64 {
        self.k
    }

    /// `PrivacyLoss::Pure { epsilon }`.
    pub fn privacy_loss(&self) -> PrivacyLoss {
        PrivacyLoss::Pure {
            epsilon: self.epsilon,
        }
    }
}
