//! The guide table of a [`Cdt`](super::Cdt) (Chen & Asau 1974): the count of
//! thresholds certainly above a word in a fixed amount of work, by buckets of words.

/// Bits of a linear [`Guide`]'s bucket index (the top bits of the word).
const GUIDE_BITS: u32 = 10;
/// Bits after the leading one that index a logarithmic [`Guide`]'s buckets.
pub(crate) const LOG_GUIDE_BITS: u32 = 8;
/// The most entries a [`Guide`] bucket may straddle: with 2⁸ logarithmic buckets per
/// octave (or 2¹⁰ linear ones) every discrete Laplace table straddles at most one per
/// bucket (tested at 15 scales from 2⁻⁶² to 2⁶⁴), so a look-up is one bucket read and
/// one comparison — measurably faster than three comparisons over coarser buckets.
const MAX_SPAN: usize = 1;

/// How a [`Guide`] groups words into buckets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Buckets {
    /// By the top `GUIDE_BITS` bits of the `width`-bit word (nearly uniform tables):
    /// the shift.
    Linear(u32),
    /// By the position of the leading one and the `LOG_GUIDE_BITS` bits after it
    /// (geometric tables, whose thresholds are evenly spaced on a log scale); words
    /// below `2^LOG_GUIDE_BITS` each have their own bucket.
    Log,
}

impl Buckets {
    #[inline]
    fn of(self, u: u64) -> usize {
        match self {
            Buckets::Linear(shift) => (u >> shift) as usize,
            Buckets::Log => {
                // With p the position of the leading one (at least LOG_GUIDE_BITS), the
                // top LOG_GUIDE_BITS + 1 bits `u >> (p − L)` lie in [2ᴸ, 2ᴸ⁺¹) and index
                // octave p's buckets after the (p − L)·2ᴸ of the octaves below; words
                // below 2ᴸ (p = L, no shift) are their own buckets 0 … 2ᴸ − 1.
                let top = 63 - (u | 1).leading_zeros();
                let shift = top.max(LOG_GUIDE_BITS) - LOG_GUIDE_BITS;
                ((u64::from(shift) << LOG_GUIDE_BITS) + (u >> shift)) as usize
            }
        }
    }

    /// The first and last word of every bucket, in bucket order.
    fn ranges(self, width: u32) -> Vec<(u64, u64)> {
        match self {
            Buckets::Linear(shift) => (0..1u64 << (width - shift))
                .map(|b| (b << shift, (b << shift) | ((1u64 << shift) - 1)))
                .collect(),
            Buckets::Log => {
                let mut out: Vec<(u64, u64)> = (0..1u64 << LOG_GUIDE_BITS).map(|u| (u, u)).collect();
                for p in LOG_GUIDE_BITS..width {
                    for digits in 0..1u64 << LOG_GUIDE_BITS {
                        let first = (1u64 << p) | (digits << (p - LOG_GUIDE_BITS));
                        out.push((first, first | ((1u64 << (p - LOG_GUIDE_BITS)) - 1)));
                    }
                }
                out
            }
        }
    }
}

/// A guide table for the certain count `#{c : u < lo[c]}` (Chen & Asau 1974, as in
/// CDT samplers): `base[b]` is the count at the top of bucket `b` (a range of words),
/// and at most `MAX_SPAN` further entries can change within a bucket, so the count is
/// `base[b]` plus `MAX_SPAN` comparisons — a fixed amount of work for every word, and the
/// same result as a binary search (checked in the tests). Nearly uniform tables use
/// linear buckets, geometric ones logarithmic buckets.
#[derive(Clone, Debug)]
pub(super) struct Guide {
    buckets: Buckets,
    base: Vec<u16>,
    /// `lo` followed by `MAX_SPAN` zeros (no word is below 0).
    padded: Vec<u64>,
    /// `hi[c] + 1` (the first word above entry `c`'s undecided words) followed by
    /// `MAX_SPAN + 1` copies of the verdict past the last entry: 0 for a complete table
    /// (every word is decided), `u64::MAX` for an open tail (no word is; words have at
    /// most 63 bits). A look-up reads the `MAX_SPAN + 1` candidates next to its base at
    /// once, so the decision waits for one dependent read fewer.
    decide: Vec<u64>,
}

impl Guide {
    /// The bytes of its arrays (the tests' memory bound).
    #[cfg(test)]
    pub(super) fn heap_bytes(&self) -> usize {
        2 * self.base.len() + 8 * (self.padded.len() + self.decide.len())
    }

    /// The guide of a table, if every bucket of one of the two kinds straddles at most
    /// `MAX_SPAN` entries.
    pub(super) fn new(lo: &[u64], hi: &[u64], complete: bool, width: u32) -> Option<Self> {
        if lo.len() >= usize::from(u16::MAX) || !(GUIDE_BITS..=63).contains(&width) {
            return None;
        }
        // hi < 2^width ≤ 2⁶³, so hi + 1 does not overflow.
        let past_the_end = if complete { 0 } else { u64::MAX };
        let decide: Vec<u64> = hi
            .iter()
            .map(|&h| h + 1)
            .chain(std::iter::repeat_n(past_the_end, MAX_SPAN + 1))
            .collect();
        [Buckets::Linear(width - GUIDE_BITS), Buckets::Log]
            .into_iter()
            .find_map(|buckets| Self::with(lo, width, buckets))
            .map(|(buckets, base, padded)| Guide {
                buckets,
                base,
                padded,
                decide,
            })
    }

    /// The buckets, their bases and the padded `lo`, if every bucket straddles at most
    /// `MAX_SPAN` entries.
    fn with(lo: &[u64], width: u32, buckets: Buckets) -> Option<(Buckets, Vec<u16>, Vec<u64>)> {
        // `count(u) = #{c : u < lo[c]}` falls as `u` grows (`lo` is non-increasing), and
        // the buckets come in increasing word order: one merge instead of two binary
        // searches per bucket.
        let mut count = lo.len();
        let mut count_at = |u: u64| {
            while count > 0 && u >= lo[count - 1] {
                count -= 1;
            }
            count
        };
        let mut base = Vec::new();
        let mut span = 0;
        for (first, last) in buckets.ranges(width) {
            let at_first = count_at(first);
            let at_last = count_at(last);
            span = span.max(at_first - at_last);
            base.push(at_last as u16);
        }
        if span > MAX_SPAN {
            return None;
        }
        let mut padded = lo.to_vec();
        padded.resize(lo.len() + MAX_SPAN, 0);
        Some((buckets, base, padded))
    }

    /// The certain count and whether `u` decides the table ([`Cdt::fast`](super::Cdt::fast)). Always
    /// `MAX_SPAN` comparisons: entries past the bucket's own span are at most the
    /// bucket's first word, so they never count.
    #[inline(always)]
    pub(super) fn locate(&self, u: u64) -> (usize, bool) {
        self.view().locate(u)
    }

    /// The guide's arrays, borrowed.
    #[inline(always)]
    pub(super) fn view(&self) -> GuideView<'_> {
        GuideView {
            buckets: self.buckets,
            base: &self.base,
            padded: &self.padded,
            decide: &self.decide,
        }
    }
}

/// A [`Guide`]'s arrays borrowed once, so that a batch of look-ups
/// ([`Cdt::guide_view`](super::Cdt::guide_view)) reads them from registers instead of through the table.
#[derive(Clone, Copy)]
pub(crate) struct GuideView<'a> {
    buckets: Buckets,
    base: &'a [u16],
    padded: &'a [u64],
    decide: &'a [u64],
}

impl GuideView<'_> {
    /// The certain count and whether `u` decides the table (as [`Cdt::fast`](super::Cdt::fast)).
    #[inline(always)]
    pub(crate) fn locate(&self, u: u64) -> (usize, bool) {
        let base = usize::from(self.base[self.buckets.of(u)]);
        let lower: &[u64; MAX_SPAN] = self.padded[base..base + MAX_SPAN]
            .try_into()
            .expect("padded by MAX_SPAN");
        let bounds: &[u64; MAX_SPAN + 1] = self.decide[base..base + MAX_SPAN + 1]
            .try_into()
            .expect("padded by MAX_SPAN + 1");
        let above = lower.iter().map(|&l| usize::from(u < l)).sum::<usize>();
        (base + above, u >= bounds[above.min(MAX_SPAN)])
    }
}
