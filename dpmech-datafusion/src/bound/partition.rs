//! One partition's pass of the bounding (module docs of `bound`, steps 1–5): rows
//! appended to buckets by fingerprint, each unit's (unit, group) pairs aggregated
//! exactly, at most L0 kept by keyed rank, each counting as at most m rows of its own
//! mean, and the exact per-group partials of the groups a kept pair supports, with the
//! histograms' counts as rows of non-empty bins, each row check-tagged, then the task's
//! marker row.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, Decimal128Array, Int32Array, Int64Array, RecordBatch, StringArray, UInt32Array,
    UInt64Array,
};
use datafusion::arrow::compute::{cast, interleave, take};
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::common::{DataFusionError, Result};

use super::{BUCKET_BITS, BUCKETS, BoundSpec, group_type};
use crate::key::mix;

/// A fast non-cryptographic hasher for the partition's group dictionary (public
/// performance only: the keyed choices use SipHash-2-4).
#[derive(Default, Clone, Copy)]
struct FoldHasher(u64);

impl FoldHasher {
    fn add(&mut self, x: u64) {
        self.0 = (self.0.rotate_left(26) ^ x).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    }
}

impl Hasher for FoldHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let mut last = [0u8; 8];
        last[..chunks.remainder().len()].copy_from_slice(chunks.remainder());
        self.add(u64::from_le_bytes(last) ^ ((bytes.len() as u64) << 56));
    }
    fn write_u64(&mut self, x: u64) {
        self.add(x);
    }
    fn write_i64(&mut self, x: i64) {
        self.add(x as u64);
    }
    fn write_usize(&mut self, x: usize) {
        self.add(x as u64);
    }
    fn finish(&self) -> u64 {
        let x = self.0;
        (x ^ (x >> 29)).wrapping_mul(0xbf58_476d_1ce4_e5b9) ^ (x >> 32)
    }
}

type FastMap<K> = HashMap<K, u32, BuildHasherDefault<FoldHasher>>;

/// The partition's groups: a dense id per distinct key, its bytes (for ranks and ties)
/// and where its first occurrence is (to emit the key in its own type).
#[derive(Default)]
struct GroupDict {
    ints: FastMap<i64>,
    texts: FastMap<Box<[u8]>>,
    null: Option<u32>,
    bytes: Vec<Box<[u8]>>,
    sources: Vec<ArrayRef>,
    origin: Vec<(usize, usize)>,
}

/// A non-NULL group key in the operator's representation.
enum Key<'a> {
    Int(i64),
    Text(&'a [u8]),
}

/// The part that stands for a NULL group (no encoded key has this one-byte form:
/// integers have eight bytes, and `0xff` alone is not UTF-8).
const NULL_GROUP: &[u8] = &[0xff];

impl GroupDict {
    fn len(&self) -> usize {
        self.bytes.len()
    }

    /// Dense ids of the keys of `column` (already in the output type).
    fn ids(&mut self, column: &ArrayRef) -> Vec<u32> {
        let source = self.sources.len();
        let before = self.len();
        // Runs of one key (a release without GROUP BY has a single key; sorted or
        // clustered data has long runs) reuse the previous row's id without a lookup.
        let ids = if let Some(ints) = column.as_any().downcast_ref::<Int64Array>() {
            let mut previous: Option<(Option<i64>, u32)> = None;
            (0..ints.len())
                .map(|row| {
                    let value = (!ints.is_null(row)).then(|| ints.value(row));
                    match previous {
                        Some((v, id)) if v == value => id,
                        _ => {
                            let id = self.id(value.map(Key::Int), source, row);
                            previous = Some((value, id));
                            id
                        }
                    }
                })
                .collect()
        } else {
            let texts = column
                .as_any()
                .downcast_ref::<StringArray>()
                .expect("group keys are Int64 or Utf8");
            let mut previous: Option<(Option<&[u8]>, u32)> = None;
            (0..texts.len())
                .map(|row| {
                    let value = (!texts.is_null(row)).then(|| texts.value(row).as_bytes());
                    let same = match (previous, value) {
                        (Some((Some(p), _)), Some(v)) => p.len() == v.len() && (v.is_empty() || p == v),
                        (Some((None, _)), None) => true,
                        _ => false,
                    };
                    match previous {
                        Some((_, id)) if same => id,
                        _ => {
                            let id = self.id(value.map(Key::Text), source, row);
                            previous = Some((value, id));
                            id
                        }
                    }
                })
                .collect()
        };
        if self.len() > before {
            self.sources.push(column.clone());
        }
        ids
    }

    /// The id of one key (`None`: NULL), new ones pointing at `(source, row)`.
    fn id(&mut self, key: Option<Key<'_>>, source: usize, row: usize) -> u32 {
        let found = match key {
            None => self.null,
            Some(Key::Int(v)) => self.ints.get(&v).copied(),
            Some(Key::Text(t)) => self.texts.get(t).copied(),
        };
        if let Some(id) = found {
            return id;
        }
        let id = self.bytes.len() as u32;
        let bytes: Box<[u8]> = match key {
            None => {
                self.null = Some(id);
                NULL_GROUP.into()
            }
            Some(Key::Int(v)) => {
                self.ints.insert(v, id);
                v.to_le_bytes().into()
            }
            Some(Key::Text(t)) => {
                self.texts.insert(t.into(), id);
                t.into()
            }
        };
        self.bytes.push(bytes);
        self.origin.push((source, row));
        id
    }

    /// The keys in id order, as one array.
    fn keys(&self, data_type: &DataType) -> Result<ArrayRef> {
        if self.origin.is_empty() {
            return Ok(datafusion::arrow::array::new_empty_array(data_type));
        }
        let sources: Vec<&dyn Array> = self.sources.iter().map(|a| a.as_ref()).collect();
        Ok(interleave(&sources, &self.origin)?)
    }
}

/// One partition's rows, bucketed: each bucket is a list of fixed-size chunks of
/// packed rows `[fingerprint (2 words), group id, record₀, …, bin₀, …]` of 32-bit words,
/// so a row is one short sequential append and nothing is ever copied to grow.
pub(super) struct PartitionState {
    values: usize,
    /// The number of bins of each quantile grid (a bin column each, after the records).
    histograms: Vec<u32>,
    groups: GroupDict,
    group_type: Option<DataType>,
    buckets: Vec<Vec<Vec<u32>>>,
    /// Rows per chunk ([`CHUNK_ROWS`]; small in tests, to cross chunk boundaries).
    chunk_rows: usize,
}

/// Rows per chunk of a bucket.
const CHUNK_ROWS: usize = 4096;

/// Rows a bucket's first chunk has room for before it grows (by doubling, up to
/// [`CHUNK_ROWS`]).
const FIRST_CHUNK_ROWS: usize = 64;

/// Marks an empty slot or the end of a unit's list of rows.
const NONE: u32 = u32::MAX;

impl PartitionState {
    pub(super) fn new(values: usize, histograms: Vec<u32>) -> Self {
        PartitionState {
            values,
            histograms,
            groups: GroupDict::default(),
            group_type: None,
            buckets: vec![Vec::new(); BUCKETS],
            chunk_rows: CHUNK_ROWS,
        }
    }

    fn stride(&self) -> usize {
        3 + self.values + self.histograms.len()
    }

    pub(super) fn push(&mut self, batch: &RecordBatch) -> Result<()> {
        let fingerprints = batch
            .column(0)
            .as_any()
            .downcast_ref::<UInt64Array>()
            .ok_or_else(|| DataFusionError::Internal("__f must be UInt64".into()))?;
        let out_type = group_type(batch.column(1).data_type());
        let keys = cast(batch.column(1), &out_type)?;
        self.group_type = Some(out_type);
        let ids = self.groups.ids(&keys);
        // Records are `Int32` grid units (`GridUnits`: the plan's grid keeps them within
        // ±2²¹), stored as their 32-bit words.
        let records: Vec<&Int32Array> = (0..self.values)
            .map(|j| {
                batch
                    .column(2 + j)
                    .as_any()
                    .downcast_ref::<Int32Array>()
                    .ok_or_else(|| DataFusionError::Internal("records must be Int32 grid units".into()))
            })
            .collect::<Result<_>>()?;
        // Bins likewise, each below its grid's size (`GridBin`); one beyond would be
        // read as the last bin.
        let bins: Vec<&Int32Array> = (0..self.histograms.len())
            .map(|j| {
                batch
                    .column(2 + self.values + j)
                    .as_any()
                    .downcast_ref::<Int32Array>()
                    .ok_or_else(|| DataFusionError::Internal("bins must be Int32".into()))
            })
            .collect::<Result<_>>()?;
        // A NULL fingerprint, record or bin cannot occur (the functions are total); 0 if
        // it did.
        let fingerprints = without_nulls(fingerprints);
        let records: Vec<_> = records.iter().chain(&bins).map(|r| without_nulls(r)).collect();
        let stride = self.stride();
        let chunk_words = self.chunk_rows * stride;
        for (row, &group) in ids.iter().enumerate() {
            let f = fingerprints[row];
            let chunks = &mut self.buckets[(f >> (64 - BUCKET_BITS)) as usize];
            let chunk = match chunks.last_mut() {
                Some(c) if c.len() < chunk_words => c,
                _ => {
                    // A bucket's first chunk starts small and doubles up to a full one,
                    // so a small release touches a few pages, not 512 chunks' worth;
                    // later chunks are allocated full.
                    let capacity = if chunks.is_empty() {
                        chunk_words.min(FIRST_CHUNK_ROWS * stride)
                    } else {
                        chunk_words
                    };
                    chunks.push(Vec::with_capacity(capacity));
                    chunks.last_mut().expect("just pushed")
                }
            };
            chunk.push(f as u32);
            chunk.push((f >> 32) as u32);
            chunk.push(group);
            for r in &records {
                chunk.push(r[row] as u32);
            }
        }
        Ok(())
    }

    /// The partition's rows of partials, tagged, and its marker row if it saw a unit
    /// (module `columns`).
    pub(super) fn finish(self, spec: &BoundSpec, schema: SchemaRef) -> Result<RecordBatch> {
        let k = self.values;
        let unbounded = spec.keeps_everything();
        let stride = self.stride();
        let n_groups = self.groups.len();
        let m = i64::from(spec.max_rows);
        let l0 = spec.max_groups as usize;
        let mut counts = vec![0i64; n_groups];
        let mut units = vec![0i64; n_groups];
        let mut sums = vec![0i128; n_groups * k];
        // The sums of squares of the square columns (`y²` of record column `j`, in units
        // of `2^shift`), `nq` per group.
        let nq = spec.squares.len();
        let mut squares = vec![0i128; n_groups * nq];
        // The bounded records' counts per bin, `bins_total` per group: histogram `j`
        // from `first_bin[j]` on.
        let first_bin: Vec<usize> = self
            .histograms
            .iter()
            .scan(0usize, |at, &b| {
                let first = *at;
                *at += b as usize;
                Some(first)
            })
            .collect();
        let bins_total: usize = self.histograms.iter().map(|&b| b as usize).sum();
        let mut histogram = BinTally::new(n_groups, bins_total);
        // Scratch of the pairs with more than m rows: (kept pair, bin), per grid.
        let mut over: Vec<Vec<(u32, u32)>> = vec![Vec::new(); self.histograms.len()];
        // Each group's keyed hash: a pair's rank mixes it with the unit's fingerprint.
        let group_hashes: Vec<u64> = self
            .groups
            .bytes
            .iter()
            .map(|b| {
                let mut h = spec.rank_key.hasher();
                h.part(b);
                h.finish()
            })
            .collect();
        // Scratch, reused for every bucket and unit: an open-addressing table from
        // fingerprint to the unit's first row, and each row's next row of its unit.
        let (mut slot_fingerprint, mut slot_head, mut next) = (Vec::new(), Vec::new(), Vec::new());
        let mut pairs: Vec<Pair> = Vec::new();
        let mut pair_sums: Vec<i128> = Vec::new();
        let mut pair_squares: Vec<i128> = Vec::new();
        // The task's identity (a sum of its units' mixed fingerprints) and its units.
        let (mut identity, mut units_seen) = (0u64, 0i64);
        for chunks in &self.buckets {
            let chunk_rows = self.chunk_rows;
            let row_at = |row: u32| {
                let row = row as usize;
                &chunks[row / chunk_rows][(row % chunk_rows) * stride..][..stride]
            };
            let rows: usize = chunks.iter().map(|c| c.len() / stride).sum();
            let mask = (2 * rows).next_power_of_two().max(16) - 1;
            slot_fingerprint.clear();
            slot_fingerprint.resize(mask + 1, 0u64);
            slot_head.clear();
            slot_head.resize(mask + 1, NONE);
            next.clear();
            next.resize(rows, NONE);
            for row in 0..rows as u32 {
                let words = row_at(row);
                let f = u64::from(words[0]) | (u64::from(words[1]) << 32);
                let mut slot = f as usize & mask;
                loop {
                    if slot_head[slot] == NONE {
                        slot_fingerprint[slot] = f;
                        slot_head[slot] = row;
                        break;
                    }
                    if slot_fingerprint[slot] == f {
                        next[row as usize] = slot_head[slot];
                        slot_head[slot] = row;
                        break;
                    }
                    slot = (slot + 1) & mask;
                }
            }
            for (slot, &head) in slot_head.iter().enumerate() {
                if head == NONE {
                    continue;
                }
                let fingerprint = slot_fingerprint[slot];
                identity = identity.wrapping_add(mix(fingerprint ^ TAG_SALT));
                units_seen += 1;
                // The unit's (unit, group) pairs, exactly.
                pairs.clear();
                pair_sums.clear();
                pair_squares.clear();
                let mut row = head;
                while row != NONE {
                    let words = row_at(row);
                    let group = words[2];
                    let p = match pairs.iter().position(|p| p.group == group) {
                        Some(p) => p,
                        None => {
                            pairs.push(Pair {
                                group,
                                rows: 0,
                                rank: 0,
                                index: pairs.len(),
                            });
                            pair_sums.extend(std::iter::repeat_n(0, k));
                            pair_squares.extend(std::iter::repeat_n(0, nq));
                            pairs.len() - 1
                        }
                    };
                    pairs[p].rows += 1;
                    for j in 0..k {
                        pair_sums[p * k + j] += i128::from(words[3 + j] as i32);
                    }
                    for (i, &(j, shift)) in spec.squares.iter().enumerate() {
                        let y = i64::from(words[3 + j as usize] as i32);
                        // |y| < 2³¹, so y² < 2⁶² is exact; a shift of 64 keeps nothing.
                        let square = (y * y) as u64;
                        pair_squares[p * nq + i] += i128::from(square.checked_shr(shift).unwrap_or(0));
                    }
                    row = next[row as usize];
                }
                if !unbounded && pairs.len() > l0 {
                    // L0: the pairs with the smallest keyed ranks (ties: the group's bytes).
                    for p in pairs.iter_mut() {
                        p.rank = mix(fingerprint ^ group_hashes[p.group as usize]);
                    }
                    let bytes = &self.groups.bytes;
                    pairs.sort_unstable_by(|a, b| {
                        (a.rank, &bytes[a.group as usize]).cmp(&(b.rank, &bytes[b.group as usize]))
                    });
                    pairs.truncate(l0);
                }
                if bins_total > 0 {
                    // The histograms of the kept pairs: all records of a pair of at most
                    // m, else m of its records chosen by the key (`keyed_pick`).
                    over.iter_mut().for_each(Vec::clear);
                    let mut row = head;
                    while row != NONE {
                        let words = row_at(row);
                        if let Some(kept) = pairs.iter().position(|p| p.group == words[2]) {
                            let p = &pairs[kept];
                            let g = p.group as usize;
                            for (j, &bins) in self.histograms.iter().enumerate() {
                                let bin = (words[3 + k + j] as usize).min(bins as usize - 1);
                                if unbounded || p.rows <= m {
                                    histogram.add(g, first_bin[j] + bin);
                                } else {
                                    over[j].push((kept as u32, bin as u32));
                                }
                            }
                        }
                        row = next[row as usize];
                    }
                    for (j, pairs_bins) in over.iter_mut().enumerate() {
                        pairs_bins.sort_unstable();
                        for run in pairs_bins.chunk_by(|a, b| a.0 == b.0) {
                            let g = pairs[run[0].0 as usize].group as usize;
                            let seed = mix(fingerprint ^ group_hashes[g] ^ PICK);
                            for bin in keyed_pick(run.len(), m as usize, seed).map(|i| run[i].1 as usize) {
                                histogram.add(g, first_bin[j] + bin);
                            }
                        }
                    }
                }
                for p in &pairs {
                    let g = p.group as usize;
                    units[g] += 1;
                    let exact = &pair_sums[p.index * k..(p.index + 1) * k];
                    let exact_squares = &pair_squares[p.index * nq..(p.index + 1) * nq];
                    if unbounded {
                        counts[g] += p.rows;
                        for j in 0..k {
                            sums[g * k + j] += exact[j];
                        }
                        for i in 0..nq {
                            squares[g * nq + i] += exact_squares[i];
                        }
                    } else {
                        // L∞: min(c, m) rows of the pair's own mean (and mean square).
                        counts[g] += p.rows.min(m);
                        for j in 0..k {
                            sums[g * k + j] += i128::from(pair_share(exact[j], p.rows, m));
                        }
                        for i in 0..nq {
                            squares[g * nq + i] += i128::from(pair_share(exact_squares[i], p.rows, m));
                        }
                    }
                }
            }
        }
        let group_type = self
            .group_type
            .unwrap_or_else(|| schema.field(0).data_type().clone());
        // Only the groups that a kept pair supports: a group whose every pair bounding
        // cut must not reach partition selection (a unit holding many keys would get one
        // chance per key instead of at most L0). Their scalar rows, then the bin rows.
        let supported: Vec<u32> = (0..n_groups as u32).filter(|&g| units[g as usize] > 0).collect();
        let bin_rows = histogram.into_rows();
        // The rows of partials, then the marker row (a NULL group: a null index) if the
        // task saw a unit.
        let markers = usize::from(units_seen > 0);
        let group_of_row = UInt32Array::from_iter(
            supported
                .iter()
                .copied()
                .chain(bin_rows.iter().map(|r| r.0))
                .map(Some)
                .chain(std::iter::repeat_n(None, markers)),
        );
        let (scalar_rows, bin_count) = (supported.len(), bin_rows.len());
        let rows = scalar_rows + bin_count;
        let marker = |value: Option<i64>| std::iter::repeat_n(value, markers);
        let scalar = |value: &dyn Fn(usize) -> i64, on_marker: Option<i64>| -> ArrayRef {
            Arc::new(Int64Array::from_iter(
                supported
                    .iter()
                    .map(|&g| Some(value(g as usize)))
                    .chain(std::iter::repeat_n(None, bin_count))
                    .chain(marker(on_marker)),
            ))
        };
        let decimal = |values: &mut dyn Iterator<Item = Option<i128>>| -> Result<ArrayRef> {
            Ok(Arc::new(
                Decimal128Array::from_iter(values).with_precision_and_scale(38, 0)?,
            ))
        };
        let sum_column = |value: &dyn Fn(usize) -> i128| -> Result<ArrayRef> {
            decimal(
                &mut supported
                    .iter()
                    .map(|&g| Some(value(g as usize)))
                    .chain(std::iter::repeat_n(None, bin_count + markers)),
            )
        };
        let mut columns: Vec<ArrayRef> = vec![
            take(&self.groups.keys(&group_type)?, &group_of_row, None)?,
            Arc::new(Int64Array::from_iter_values(
                std::iter::repeat_n(crate::columns::SCALARS, scalar_rows)
                    .chain(bin_rows.iter().map(|r| i64::from(r.1)))
                    .chain(marker(Some(crate::columns::marker(identity))).flatten()),
            )),
            scalar(&|g| counts[g], Some(rows as i64)),
            scalar(&|g| units[g], Some(units_seen)),
        ];
        for j in 0..k {
            columns.push(sum_column(&|g| sums[g * k + j])?);
        }
        for i in 0..nq {
            columns.push(sum_column(&|g| squares[g * nq + i])?);
        }
        columns.push(Arc::new(Int64Array::from_iter(
            std::iter::repeat_n(None, scalar_rows)
                .chain(bin_rows.iter().map(|r| Some(r.2)))
                .chain(marker(None)),
        )));
        let tags: Vec<i128> = (0..rows).map(|i| check_tag(identity, i)).collect();
        let marker_tag = -tags.iter().sum::<i128>();
        columns.push(decimal(
            &mut tags
                .into_iter()
                .chain(marker(Some(0)).map(|_| marker_tag))
                .map(Some),
        )?);
        Ok(RecordBatch::try_new(schema, columns)?)
    }
}

/// Groups × bins up to which a partition counts its histograms in a dense table (8 MiB).
const DENSE_BINS: usize = 1 << 20;

/// The bounded records' counts per (group, bin) of one partition: a dense table when
/// groups × bins is at most [`DENSE_BINS`], else one packed `(group, bin)` word per
/// counted record, sorted and counted at the end — memory per record, whatever the
/// number of bins.
enum BinTally {
    Dense { bins: usize, counts: Vec<i64> },
    Sparse(Vec<u64>),
}

impl BinTally {
    fn new(groups: usize, bins: usize) -> Self {
        match groups.checked_mul(bins) {
            Some(cells) if cells <= DENSE_BINS => BinTally::Dense {
                bins,
                counts: vec![0; cells],
            },
            _ => BinTally::Sparse(Vec::new()),
        }
    }

    /// One record of group `group` in bin `bin` (`bin < 2³²`: the operator refuses
    /// specs with more bins).
    fn add(&mut self, group: usize, bin: usize) {
        match self {
            BinTally::Dense { bins, counts } => counts[group * *bins + bin] += 1,
            BinTally::Sparse(keys) => keys.push(((group as u64) << 32) | bin as u64),
        }
    }

    /// The non-empty `(group, bin, count)`, by group then bin.
    fn into_rows(self) -> Vec<(u32, u32, i64)> {
        match self {
            BinTally::Dense { bins, counts } => counts
                .iter()
                .enumerate()
                .filter(|&(_, &c)| c > 0)
                .map(|(i, &c)| ((i / bins) as u32, (i % bins) as u32, c))
                .collect(),
            BinTally::Sparse(mut keys) => {
                keys.sort_unstable();
                keys.chunk_by(|a, b| a == b)
                    .map(|run| ((run[0] >> 32) as u32, run[0] as u32, run.len() as i64))
                    .collect()
            }
        }
    }
}

/// The values of a primitive column with NULL read as 0 (borrowed when it has none).
fn without_nulls<T>(a: &datafusion::arrow::array::PrimitiveArray<T>) -> std::borrow::Cow<'_, [T::Native]>
where
    T: datafusion::arrow::datatypes::ArrowPrimitiveType,
{
    if a.null_count() == 0 {
        std::borrow::Cow::Borrowed(a.values().as_ref())
    } else {
        (0..a.len())
            .map(|i| {
                if a.is_null(i) {
                    T::Native::default()
                } else {
                    a.value(i)
                }
            })
            .collect()
    }
}

/// Separates the seeds of the records a pair keeps from its rank (`mix(f ⊕ h)`).
const PICK: u64 = 0x5175_616e_7469_6c65;

/// The check tag of row `row` of the rows of partials of the task of identity
/// `identity`: a pseudo-random integer in `[1, 2⁶²)` (module `columns`). Rows merged twice or lost
/// change the sum of all tags, which is 0 when every row is merged once, unless the
/// extra and the missing tags happen to sum to the same value (about one chance in
/// 2⁶² per such coincidence); their counts (the markers' `__count` against the merged
/// rows' `__reads`) catch the other cases exactly.
fn check_tag(identity: u64, row: usize) -> i128 {
    let word = mix(identity ^ mix(row as u64));
    i128::from((word >> 2) | 1)
}

/// The constant mixed into each check tag.
const TAG_SALT: u64 = 0x6368_6563_6b5f_7461;

/// The positions of the `m` records a pair of `c` records keeps of its records sorted by
/// bin (all of them if `c ≤ m`): the `m` positions of smallest `mix(seed + p)`, a keyed
/// uniform-looking `m`-subset, so in expectation each bin keeps `m/c` of the pair's
/// records — an unbiased sample of the pair's distribution, as a sum keeps `m` records
/// of the pair's mean. (Positions evenly spread over the ranks would be biased: of 4
/// records, 2 kept at ranks 2 and 4 favour the top.) A function of the pair's records
/// and the seed alone: the same on any partitioning.
fn keyed_pick(c: usize, m: usize, seed: u64) -> impl Iterator<Item = usize> {
    let mut positions: Vec<usize> = (0..c).collect();
    if c > m {
        positions.select_nth_unstable_by_key(m, |&p| mix(seed.wrapping_add(p as u64)));
        positions.truncate(m);
    }
    positions.into_iter()
}

/// One (unit, group) pair of the unit at hand.
struct Pair {
    group: u32,
    rows: i64,
    rank: u64,
    /// Where its exact sums are in the scratch.
    index: usize,
}

/// The contribution of one (unit, group) pair of `count` records summing to `sum` grid
/// units, when at most `m` records count: `⌊sum·min(count, m)/count⌋` toward zero —
/// `min(count, m)` records of the pair's own mean, so a sum and a count of the same
/// pairs stay consistent. Exact in `i128`, saturated to `i64`; its absolute value is at
/// most `m` times the largest record, whatever the data. Total: no record can cause an
/// error.
pub(crate) fn pair_share(sum: i128, count: i64, max_rows: i64) -> i64 {
    if count <= 0 {
        return 0;
    }
    if count <= max_rows {
        // All records count: the exact sum (the general formula's value, without an
        // i128 division).
        return sum.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
    }
    let kept = i128::from(count.min(max_rows));
    let share = sum
        .checked_mul(kept)
        .map_or(if sum < 0 { i128::MIN } else { i128::MAX }, |scaled| {
            scaled / i128::from(count)
        });
    share.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use datafusion::arrow::datatypes::{Field, Schema};

    use super::*;
    use crate::bound::output_schema;
    use crate::key::RankKey;
    use crate::key::ReleaseKey;

    /// A straightforward reference of the bounding: per unit, its pairs in a map; the L0
    /// pairs of smallest `(rank, key bytes)`; `min(c, m)` rows and the pair's share.
    fn reference(
        rows: &[(u64, Option<i64>, i32)],
        spec: &BoundSpec,
    ) -> BTreeMap<Option<i64>, (i64, i64, i128)> {
        let bytes = |g: Option<i64>| g.map_or(NULL_GROUP.to_vec(), |v| v.to_le_bytes().to_vec());
        let group_hash = |g: Option<i64>| {
            let mut h = spec.rank_key.hasher();
            h.part(&bytes(g));
            h.finish()
        };
        let mut units: BTreeMap<u64, BTreeMap<Option<i64>, (i64, i128)>> = BTreeMap::new();
        for &(f, g, v) in rows {
            let pair = units.entry(f).or_default().entry(g).or_default();
            pair.0 += 1;
            pair.1 += i128::from(v);
        }
        let mut out: BTreeMap<Option<i64>, (i64, i64, i128)> = BTreeMap::new();
        for (f, pairs) in units {
            let mut pairs: Vec<_> = pairs.into_iter().collect();
            pairs.sort_by_key(|(g, _)| (mix(f ^ group_hash(*g)), bytes(*g)));
            pairs.truncate(spec.max_groups as usize);
            for (g, (c, sum)) in pairs {
                let m = i64::from(spec.max_rows);
                let cell = out.entry(g).or_default();
                cell.0 += c.min(m);
                cell.1 += 1;
                cell.2 += i128::from(pair_share(sum, c, m));
            }
        }
        out
    }

    #[test]
    fn the_bucketed_pass_equals_a_plain_per_unit_reference() {
        // 400 units whose fingerprints share low and high bits in places (same bucket,
        // colliding slots), 9 groups with NULL, records of both signs; batches of 37
        // rows and chunks of 3 rows so that rows of a unit cross batches and chunks.
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let fingerprints: Vec<u64> = (0..400u64)
            .map(|u| if u % 3 == 0 { (u << 40) | 5 } else { mix(u) })
            .collect();
        let rows: Vec<(u64, Option<i64>, i32)> = (0..6000)
            .map(|_| {
                let f = fingerprints[(next() % 400) as usize];
                let g = next() % 10;
                let g = (g < 9).then_some(g as i64 * 1000 - 3000);
                let v = (next() % (1 << 22)) as i32 - (1 << 21);
                (f, g, v)
            })
            .collect();
        for (max_groups, max_rows) in [(2, 1), (3, 2), (20, 50)] {
            let spec = BoundSpec::new(
                max_groups,
                max_rows,
                ReleaseKey::from_bytes_insecure([3; 32]).rank_key("groups"),
                false,
            )
            .unwrap();
            let schema = Arc::new(Schema::new(vec![
                Field::new("__f", DataType::UInt64, false),
                Field::new("__g", DataType::Int64, true),
                Field::new("__v0", DataType::Int32, false),
            ]));
            let mut partition = PartitionState::new(1, Vec::new());
            partition.chunk_rows = 3;
            for batch in rows.chunks(37) {
                let batch = RecordBatch::try_new(
                    schema.clone(),
                    vec![
                        Arc::new(UInt64Array::from_iter_values(batch.iter().map(|r| r.0))),
                        Arc::new(Int64Array::from_iter(batch.iter().map(|r| r.1))),
                        Arc::new(Int32Array::from_iter_values(batch.iter().map(|r| r.2))),
                    ],
                )
                .unwrap();
                partition.push(&batch).unwrap();
            }
            let out = partition.finish(&spec, output_schema(&schema, &spec)).unwrap();
            let out = out.slice(0, out.num_rows() - 1); // the marker row, tested apart
            let keys = out.column(0).as_any().downcast_ref::<Int64Array>().unwrap();
            let column = |c: usize| {
                out.column(c)
                    .as_any()
                    .downcast_ref::<Int64Array>()
                    .unwrap()
                    .clone()
            };
            let (counts, units) = (column(2), column(3));
            let sums = out.column(4).as_any().downcast_ref::<Decimal128Array>().unwrap();
            let got: BTreeMap<Option<i64>, (i64, i64, i128)> = (0..out.num_rows())
                .map(|i| {
                    let key = (!keys.is_null(i)).then(|| keys.value(i));
                    (key, (counts.value(i), units.value(i), sums.value(i)))
                })
                .collect();
            assert_eq!(got, reference(&rows, &spec), "L0 = {max_groups}, m = {max_rows}");
        }
    }

    #[test]
    fn groups_whose_every_pair_was_cut_are_not_emitted() {
        // One unit in 50 groups, L0 = 2: exactly 2 groups come out, each with one unit.
        let schema = Arc::new(Schema::new(vec![
            Field::new("__f", DataType::UInt64, false),
            Field::new("__g", DataType::Utf8, true),
        ]));
        let batch = RecordBatch::try_new(
            schema.clone(),
            vec![
                Arc::new(UInt64Array::from_iter_values(std::iter::repeat_n(77, 50))),
                Arc::new(StringArray::from_iter_values((0..50).map(|g| format!("k{g}")))),
            ],
        )
        .unwrap();
        for unbounded in [false, true] {
            #[cfg(not(feature = "unsafe-testing"))]
            if unbounded {
                assert!(BoundSpec::new(2, 1, RankKey::from_words(1, 2), true).is_err());
                continue;
            }
            let spec = BoundSpec::new(2, 1, RankKey::from_words(1, 2), unbounded).unwrap();
            let mut partition = PartitionState::new(0, Vec::new());
            partition.push(&batch).unwrap();
            let out = partition.finish(&spec, output_schema(&schema, &spec)).unwrap();
            let units = out.column(3).as_any().downcast_ref::<Int64Array>().unwrap();
            let groups = out.num_rows() - 1; // and the marker row
            assert_eq!(groups, if unbounded { 50 } else { 2 });
            assert!(units.values()[..groups].iter().all(|&u| u == 1));
        }
    }

    #[test]
    fn each_task_ends_with_a_marker_whose_tag_cancels_its_rows_tags() {
        // 40 units over 6 groups with a histogram of 8 bins: scalar rows, bin rows and
        // the marker — the NULL group, the kind of the task's identity (the same for the
        // same units in any order), the number of other rows and of units, and minus
        // the sum of the other rows' tags (each in [1, 2⁶²)). A task without units
        // emits nothing, not even a marker.
        let schema = Arc::new(Schema::new(vec![
            Field::new("__f", DataType::UInt64, false),
            Field::new("__g", DataType::Int64, true),
            Field::new("__v0", DataType::Int32, false),
            Field::new("__b0", DataType::Int32, false),
        ]));
        let spec = BoundSpec::new(1, 1, RankKey::from_words(3, 4), false)
            .unwrap()
            .with_histograms(vec![8]);
        let run = |units: &[u64]| {
            let batch = RecordBatch::try_new(
                schema.clone(),
                vec![
                    Arc::new(UInt64Array::from_iter_values(units.iter().map(|&u| mix(u + 1)))),
                    Arc::new(Int64Array::from_iter_values(
                        units.iter().map(|&u| (u % 6) as i64),
                    )),
                    Arc::new(Int32Array::from_iter_values(units.iter().map(|&u| u as i32))),
                    Arc::new(Int32Array::from_iter_values(
                        units.iter().map(|&u| (u % 8) as i32),
                    )),
                ],
            )
            .unwrap();
            let mut partition = PartitionState::new(1, vec![8]);
            partition.push(&batch).unwrap();
            partition.finish(&spec, output_schema(&schema, &spec)).unwrap()
        };
        let units: Vec<u64> = (0..40).collect();
        let out = run(&units);
        let int = |c: usize| {
            out.column(c)
                .as_any()
                .downcast_ref::<Int64Array>()
                .unwrap()
                .clone()
        };
        let (kinds, counts, unit_counts) = (int(1), int(2), int(3));
        let tags = out
            .column(out.num_columns() - 1)
            .as_any()
            .downcast_ref::<Decimal128Array>()
            .unwrap();
        let last = out.num_rows() - 1;
        // 6 scalar rows, and one bin row per non-empty (group, bin): u % 6 and u % 8
        // take 24 distinct pairs over 40 units.
        assert_eq!(last, 6 + 24);
        assert!(out.column(0).is_null(last));
        assert!(crate::columns::marker_id(kinds.value(last)).is_some());
        assert!((0..last).all(|i| crate::columns::marker_id(kinds.value(i)).is_none()));
        assert_eq!((counts.value(last), unit_counts.value(last)), (last as i64, 40));
        let row_tags: Vec<i128> = (0..last).map(|i| tags.value(i)).collect();
        assert!(row_tags.iter().all(|&t| (1..1i128 << 62).contains(&t)));
        let distinct: std::collections::BTreeSet<_> = row_tags.iter().collect();
        assert_eq!(distinct.len(), last);
        assert_eq!(tags.value(last), -row_tags.iter().sum::<i128>());
        // The same units in another order: the same identity; other units: another.
        let kind_of = |out: &RecordBatch| {
            let kinds = out.column(1).as_any().downcast_ref::<Int64Array>().unwrap();
            kinds.value(out.num_rows() - 1)
        };
        let reversed: Vec<u64> = units.iter().rev().copied().collect();
        assert_eq!(kind_of(&run(&reversed)), kinds.value(last));
        assert_ne!(kind_of(&run(&units[1..])), kinds.value(last));
        assert_eq!(run(&[]).num_rows(), 0);
    }

    #[test]
    fn dense_and_sparse_tallies_give_the_same_non_empty_bins() {
        // 5 groups × 3 000 bins: dense; the same records in a sparse tally (as for
        // grids too large for a table) give the same rows, by group then bin.
        let mut dense = BinTally::new(5, 3000);
        assert!(matches!(dense, BinTally::Dense { .. }));
        let mut sparse = BinTally::Sparse(Vec::new());
        assert!(matches!(BinTally::new(16, 1 << 17), BinTally::Sparse(_)));
        let mut x = 12345u64;
        for _ in 0..10_000 {
            x = mix(x);
            let (g, bin) = ((x % 5) as usize, ((x >> 20) % 3000) as usize);
            dense.add(g, bin);
            sparse.add(g, bin);
        }
        let (d, s) = (dense.into_rows(), sparse.into_rows());
        assert_eq!(d, s);
        assert_eq!(d.iter().map(|r| r.2).sum::<i64>(), 10_000);
        assert!(d.windows(2).all(|w| (w[0].0, w[0].1) < (w[1].0, w[1].1)));
    }

    #[test]
    fn a_pair_counts_as_at_most_m_records_of_its_own_mean() {
        // At most m records: unchanged.
        assert_eq!(pair_share(30, 2, 2), 30);
        assert_eq!(pair_share(-7, 1, 3), -7);
        // More: m records of the pair's mean, truncated toward zero.
        assert_eq!(pair_share(100 * 10, 100, 2), 20);
        assert_eq!(pair_share(1001, 100, 2), 20);
        assert_eq!(pair_share(-1001, 100, 2), -20);
        // Never beyond m times the largest record, whatever the records.
        for (sum, count) in [(i128::from(i64::MAX), 3i64), (37, 5), (-(1 << 21) * 9, 9)] {
            let largest = (sum.abs() + i128::from(count) - 1) / i128::from(count);
            assert!(i128::from(pair_share(sum, count, 2)).abs() <= 2 * largest);
        }
        // Absurd inputs saturate instead of failing.
        assert_eq!(pair_share(i128::MAX, 1, 4), i64::MAX);
        assert_eq!(pair_share(i128::MIN, 1, 4), i64::MIN);
        assert_eq!(pair_share(5, 0, 4), 0);
    }

    #[test]
    fn a_pair_over_m_keeps_a_keyed_uniform_m_subset_of_its_records() {
        assert_eq!(keyed_pick(3, 5, 1).collect::<Vec<_>>(), [0, 1, 2]);
        for c in 1..40 {
            for m in 1..45 {
                let mut picked: Vec<usize> = keyed_pick(c, m, (c * 100 + m) as u64).collect();
                picked.sort_unstable();
                picked.dedup();
                assert_eq!(picked.len(), m.min(c), "c {c} m {m}");
                assert!(picked.iter().all(|&i| i < c));
            }
        }
        // Each of c = 4 positions is kept with probability m/c = 1/2 over seeds: over
        // 20 000 seeds a position's count is Binomial(20 000, 1/2), within ±5σ = ±354.
        let mut kept = [0u32; 4];
        for seed in 0..20_000u64 {
            for p in keyed_pick(4, 2, mix(seed)) {
                kept[p] += 1;
            }
        }
        assert!(kept.iter().all(|&k| k.abs_diff(10_000) <= 354), "{kept:?}");
    }
}
