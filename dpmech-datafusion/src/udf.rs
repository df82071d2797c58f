//! The scalar functions the bounded plan uses: a keyed fingerprint of the privacy unit
//! and the record rule that puts values on an integer grid.

use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, Float64Array, Int32Array, Int64Array, LargeBinaryArray, StringArray, UInt64Array,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility};
use dpmech::sensitivity::Neighbouring;
use dpmech::statistics::{ApproxBounds, Bounds, BoundsHistogram, QuantileGrid};

use crate::key::{RankKey, ReleaseKey};

/// Whether every value of the type is an `i64` (signed integers, unsigned up to 32 bits).
pub(crate) fn fits_i64(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
    )
}

fn is_binary(data_type: &DataType) -> bool {
    matches!(
        data_type,
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView | DataType::FixedSizeBinary(_)
    )
}

/// Types whose every value has a text form that Arrow's cast computes without failing:
/// group keys that are not integers are read as this text, so a key can never cause an
/// error (a type outside this list, e.g. bytes that need not be UTF-8, is refused when
/// the release is planned, before anything is charged).
pub(crate) fn has_total_text_form(data_type: &DataType) -> bool {
    match data_type {
        t if fits_i64(t) => true,
        DataType::UInt64
        | DataType::Boolean
        | DataType::Float16
        | DataType::Float32
        | DataType::Float64
        | DataType::Utf8
        | DataType::LargeUtf8
        | DataType::Utf8View
        | DataType::Date32
        | DataType::Date64
        | DataType::Decimal128(..)
        | DataType::Decimal256(..) => true,
        DataType::Dictionary(_, values) => has_total_text_form(values),
        _ => false,
    }
}

/// Types a privacy unit may have: those [`UnitFingerprint`] reads without failing (the
/// text types above, and bytes, hashed as they are).
pub(crate) fn is_unit_type(data_type: &DataType) -> bool {
    has_total_text_form(data_type) || is_binary(data_type)
}

/// `name(unit) → UInt64`: the privacy unit's fingerprint, by which the plan
/// repartitions and bounds (module `bound`). Integers (and floats, by their bits) go
/// through a keyed bijection of 64-bit words, so distinct values never collide; every
/// other type is read as text and hashed with SipHash-2-4 under a key derived from the
/// release key. It depends only on the key and the value (values SQL calls equal —
/// `−0` and `0`, NaNs — get equal fingerprints), so the same release recomputes the
/// same fingerprints; distinct units that collide (text, probability ~n²/2⁶⁵) are
/// bounded together as one, which only tightens each one's contribution. NULL is one
/// unit of its own fingerprint.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct UnitFingerprint {
    name: String,
    key: RankKey,
    signature: Signature,
}

impl core::fmt::Debug for RankKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("RankKey(<secret>)")
    }
}

impl UnitFingerprint {
    pub(crate) fn new(name: String, key: &ReleaseKey) -> Self {
        Self::from_key(name, key.rank_key("units"))
    }

    /// With the derived key itself (the plan codec's decoding).
    pub(crate) fn from_key(name: String, key: RankKey) -> Self {
        UnitFingerprint {
            name,
            key,
            signature: Signature::any(1, Volatility::Immutable),
        }
    }

    pub(crate) fn key(&self) -> &RankKey {
        &self.key
    }

    fn text(&self, bytes: &[u8]) -> u64 {
        let mut h = self.key.hasher();
        h.part(bytes);
        h.finish()
    }
}

/// The part that stands for NULL (no encoded text has this one-byte form: `0xff` alone
/// is not UTF-8).
const NULL_PART: &[u8] = &[0xff];

impl ScalarUDFImpl for UnitFingerprint {
    fn name(&self) -> &str {
        &self.name
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::UInt64)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let array = args.args[0].to_array(args.number_rows)?;
        Ok(ColumnarValue::Array(Arc::new(self.fingerprints(&array)?)))
    }
}

impl UnitFingerprint {
    /// The fingerprints of a column of units.
    fn fingerprints(&self, array: &ArrayRef) -> Result<UInt64Array> {
        let null = self.text(NULL_PART);
        let words = |words: &[u64], valid: &dyn Fn(usize) -> bool| -> UInt64Array {
            words
                .iter()
                .enumerate()
                .map(|(i, &w)| if valid(i) { self.key.permute(w) } else { null })
                .collect::<Vec<u64>>()
                .into()
        };
        let valid = |i: usize| array.is_valid(i);
        let fingerprints = match array.data_type() {
            t if fits_i64(t) || t == &DataType::UInt64 => {
                let wide = if array.data_type() == &DataType::UInt64 {
                    array.clone()
                } else {
                    cast(array, &DataType::Int64)?
                };
                let bits: Vec<u64> = match wide.as_any().downcast_ref::<Int64Array>() {
                    Some(a) => a.values().iter().map(|&v| v as u64).collect(),
                    None => wide
                        .as_any()
                        .downcast_ref::<UInt64Array>()
                        .expect("UInt64")
                        .values()
                        .to_vec(),
                };
                words(&bits, &valid)
            }
            DataType::Float32 | DataType::Float64 => {
                let c = cast(array, &DataType::Float64)?;
                let c = c.as_any().downcast_ref::<Float64Array>().expect("Float64");
                // Values SQL calls equal get one fingerprint: −0 as 0, every NaN as one NaN.
                let bits: Vec<u64> = c
                    .values()
                    .iter()
                    .map(|&v| {
                        let v = if v == 0.0 {
                            0.0
                        } else if v.is_nan() {
                            f64::NAN
                        } else {
                            v
                        };
                        v.to_bits()
                    })
                    .collect();
                words(&bits, &valid)
            }
            t if is_binary(t) => {
                // Bytes as they are: a cast to text would fail on bytes that are not UTF-8.
                let c = cast(array, &DataType::LargeBinary)?;
                let c = c
                    .as_any()
                    .downcast_ref::<LargeBinaryArray>()
                    .expect("LargeBinary");
                c.iter().map(|v| Some(v.map_or(null, |b| self.text(b)))).collect()
            }
            _ => {
                let c = cast(array, &DataType::Utf8)?;
                let c = c.as_any().downcast_ref::<StringArray>().expect("Utf8");
                c.iter()
                    .map(|v| Some(v.map_or(null, |t| self.text(t.as_bytes()))))
                    .collect()
            }
        };
        Ok(fingerprints)
    }
}

/// The key of a cell grouped by several columns: the one-to-one text
/// [`encode_tuple`](crate::aggregate::encode_tuple) of the columns' texts
/// (`CAST(value AS VARCHAR)`, NULL kept apart), so the bounding operator and the final
/// aggregation see one text key per row. Stateless and the same on every node.
#[derive(Debug, PartialEq, Eq, Hash)]
pub(crate) struct GroupKeyText {
    signature: Signature,
}

/// The name of [`GroupKeyText`].
pub(crate) const GROUP_KEY_TEXT: &str = "dpmech_group_key_text";

impl GroupKeyText {
    pub(crate) fn new() -> Self {
        GroupKeyText {
            signature: Signature::variadic_any(Volatility::Immutable),
        }
    }
}

impl ScalarUDFImpl for GroupKeyText {
    fn name(&self) -> &str {
        GROUP_KEY_TEXT
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Utf8)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let texts = args
            .args
            .iter()
            .map(|a| cast(&a.to_array(args.number_rows)?, &DataType::Utf8))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let texts: Vec<&StringArray> = texts
            .iter()
            .map(|t| t.as_any().downcast_ref::<StringArray>().expect("Utf8"))
            .collect();
        let keys: StringArray = (0..args.number_rows)
            .map(|row| {
                let parts: Vec<Option<&str>> = texts
                    .iter()
                    .map(|t| (!t.is_null(row)).then(|| t.value(row)))
                    .collect();
                Some(crate::aggregate::encode_tuple(&parts))
            })
            .collect();
        Ok(ColumnarValue::Array(Arc::new(keys)))
    }
}

/// The grid of one sum or mean: records are read in units of `g = 2^exp`, with
/// `exp = e(max(|lower|, |upper|)) − 20` (`e(x)` the exponent of `x`, read from its
/// bits, so every platform picks the same grid), so a record is an integer of at most
/// about 2²¹ units and sums stay far from the `i64` limits. Bounds whose larger end is
/// below `2⁻¹⁰⁰²` in magnitude are refused (their grid would fall below the smallest
/// normal `f64`), and so are bounds reaching `2⁹⁸⁰ ≈ 10²⁹⁵` (a released sum, up to
/// `2⁶³` units, would no longer be a finite `f64`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Grid {
    exp: i32,
    largest: u64,
}

impl Grid {
    /// `2⁻¹⁰⁰²`: the smallest magnitude of the larger bound (its grid is then `2⁻¹⁰²²`).
    pub(crate) const SMALLEST_BOUND: f64 = f64::from_bits(((1023 - 1002) as u64) << 52);

    /// The largest exponent of a grid: any `i64` number of units of `2⁹⁵⁹` is finite.
    const LARGEST_EXP: i32 = 959;

    /// The grid of records clamped to `bounds`.
    pub(crate) fn for_bounds(bounds: &Bounds) -> Result<Self, crate::error::DpError> {
        let big = bounds.lower().abs().max(bounds.upper().abs());
        let refuse = |what: &str| {
            Err(crate::error::DpError::Unrepresentable(format!(
                "bounds [{:e}, {:e}] are {what}: the larger end must lie in [2^-1002, 2^980) in \
                 magnitude",
                bounds.lower(),
                bounds.upper()
            )))
        };
        if big.is_nan() || big < Self::SMALLEST_BOUND {
            return refuse("too close to 0");
        }
        // A finite normal `big`: its unbiased exponent from the bits.
        let exponent = ((big.to_bits() >> 52) & 0x7ff) as i32 - 1023;
        if exponent - 20 > Self::LARGEST_EXP {
            return refuse("too large");
        }
        Ok(Self::with_exp(bounds, exponent - 20))
    }

    /// The grid `2^exp` for `bounds` (as decoded from a plan).
    pub(crate) fn with_exp(bounds: &Bounds, exp: i32) -> Self {
        let units = |v: f64| GridUnits::units(bounds, exp, Some(v)).unsigned_abs();
        Grid {
            exp,
            largest: units(bounds.lower()).max(units(bounds.upper())),
        }
    }

    /// The exponent of `g`.
    pub(crate) fn exp(&self) -> i32 {
        self.exp
    }

    /// `g = 2^exp`.
    pub(crate) fn step(&self) -> f64 {
        f64::from(self.exp).exp2()
    }

    /// The largest |record| in units of `g`.
    pub(crate) fn largest_record(&self) -> u64 {
        self.largest
    }
}

/// How a variance reads its records on a [`Grid`]: each record's units `u` centred on
/// `centre` (the midpoint of the bounds' units, rounded down), `y = u − centre` with
/// `|y| ≤ half`, and its square counted in units of `2^shift` units², `⌊y²/2^shift⌋ ≤
/// 2³²` (`shift` is the smallest that keeps it there, 0 for narrow grids), so a group's
/// sum of squares stays far within `i64` for up to 2³¹ records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Centring {
    pub(crate) centre: i32,
    pub(crate) half: u64,
    pub(crate) shift: u32,
}

impl Centring {
    /// The centring of records clamped to `bounds` on `grid`.
    pub(crate) fn new(bounds: &Bounds, grid: &Grid) -> Self {
        let units = |v: f64| GridUnits::units(bounds, grid.exp, Some(v));
        let (lower, upper) = (units(bounds.lower()), units(bounds.upper()));
        let centre = (lower + upper).div_euclid(2);
        let half = (upper - centre).max(centre - lower).unsigned_abs();
        let square = u128::from(half) * u128::from(half);
        let shift = (128 - square.leading_zeros()).saturating_sub(32);
        Centring {
            // The plan's grid keeps records within ±2²¹ units.
            centre: i32::try_from(centre).unwrap_or(if centre < 0 { i32::MIN } else { i32::MAX }),
            half,
            shift,
        }
    }

    /// The largest square of a record, in units of `2^shift` units²: `⌊half²/2^shift⌋`.
    pub(crate) fn largest_square(&self) -> u64 {
        ((u128::from(self.half) * u128::from(self.half)) >> self.shift) as u64
    }
}

/// `name(value DOUBLE) → INT`: one record under the public rule, in grid units:
/// NULL and NaN become the bounds' NaN value (by default the midpoint), ±∞ and values
/// outside `[lower, upper]` are clamped, and the result is rounded to the nearest
/// multiple of `g = 2^grid_exp` (ties to even) and returned as an integer number of
/// `g`. The plan's grid ([`Grid::for_bounds`]) keeps every record within ±2²¹ units,
/// so 32 bits are exact (and a row crossing a cluster's shuffle is 4 bytes shorter);
/// any other grid saturates at the `i32` range. Total: no record can cause an error.
#[derive(Debug)]
pub(crate) struct GridUnits {
    name: String,
    bounds: Bounds,
    grid_exp: i32,
    signature: Signature,
}

/// Two functions are equal when they compute the same: same name and parameters (so
/// the optimiser never merges the records of two aggregates with different bounds).
impl PartialEq for GridUnits {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
            && self.grid_exp == other.grid_exp
            && bound_bits(&self.bounds) == bound_bits(&other.bounds)
    }
}

impl Eq for GridUnits {}

impl std::hash::Hash for GridUnits {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
        self.grid_exp.hash(state);
        bound_bits(&self.bounds).hash(state);
    }
}

fn bound_bits(b: &Bounds) -> [u64; 3] {
    [b.lower().to_bits(), b.upper().to_bits(), b.nan_value().to_bits()]
}

impl GridUnits {
    pub(crate) fn new(name: String, bounds: Bounds, grid_exp: i32) -> Self {
        GridUnits {
            name,
            bounds,
            grid_exp,
            signature: Signature::exact(vec![DataType::Float64], Volatility::Immutable),
        }
    }

    pub(crate) fn bounds(&self) -> &Bounds {
        &self.bounds
    }

    pub(crate) fn grid_exp(&self) -> i32 {
        self.grid_exp
    }

    /// One record in units of `g`.
    pub(crate) fn units(bounds: &Bounds, grid_exp: i32, value: Option<f64>) -> i64 {
        let v = bounds.read(value.unwrap_or(f64::NAN));
        (v * f64::from(-grid_exp).exp2()).round_ties_even() as i64
    }
}

/// The scalar UDF of a per-record rule `DOUBLE → INT` (a type with `name`, `signature`
/// and `column(&Float64Array) -> Int32Array`): the same plumbing for every rule.
macro_rules! per_record_udf {
    ($rule:ty) => {
        impl ScalarUDFImpl for $rule {
            fn name(&self) -> &str {
                &self.name
            }
            fn signature(&self) -> &Signature {
                &self.signature
            }
            fn return_type(&self, _: &[DataType]) -> Result<DataType> {
                Ok(DataType::Int32)
            }
            fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
                let array = args.args[0].to_array(args.number_rows)?;
                let values = array
                    .as_any()
                    .downcast_ref::<Float64Array>()
                    .expect("signature: Float64");
                Ok(ColumnarValue::Array(Arc::new(self.column(values))))
            }
        }
    };
}

per_record_udf!(GridUnits);
per_record_udf!(GridBin);

impl GridUnits {
    /// [`units`](Self::units) of every value, with the scale computed once.
    fn column(&self, values: &Float64Array) -> Int32Array {
        let scale = f64::from(-self.grid_exp).exp2();
        // `as i32` saturates (and would read a NaN as 0; `read` never returns one).
        let rule = |v: f64| (self.bounds.read(v) * scale).round_ties_even() as i32;
        let missing = rule(f64::NAN);
        let units: Vec<i32> = match values.nulls() {
            None => values.values().iter().map(|&v| rule(v)).collect(),
            Some(nulls) => values
                .values()
                .iter()
                .enumerate()
                .map(|(i, &v)| if nulls.is_valid(i) { rule(v) } else { missing })
                .collect(),
        };
        Int32Array::from(units)
    }
}

/// `name(value DOUBLE) → INT`: the bin of one record on a public quantile grid, by the
/// grid's rule ([`QuantileGrid::bin_of`]: NULL and NaN read as the grid's NaN value,
/// ±∞ and values outside the bounds clamped), always in `0..B`. Total: no record can
/// cause an error.
#[derive(Debug)]
pub(crate) struct GridBin {
    name: String,
    grid: QuantileGrid,
    signature: Signature,
}

/// Two functions are equal when they compute the same (name and grid).
impl PartialEq for GridBin {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && grid_bits(&self.grid) == grid_bits(&other.grid)
    }
}

impl Eq for GridBin {}

impl std::hash::Hash for GridBin {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
        grid_bits(&self.grid).hash(state);
    }
}

fn grid_bits(g: &QuantileGrid) -> ([u64; 3], usize) {
    (bound_bits(&g.bounds()), g.bins())
}

impl GridBin {
    pub(crate) fn new(name: String, grid: QuantileGrid) -> Self {
        GridBin {
            name,
            grid,
            signature: Signature::exact(vec![DataType::Float64], Volatility::Immutable),
        }
    }

    pub(crate) fn grid(&self) -> &QuantileGrid {
        &self.grid
    }
}

impl GridBin {
    /// The bin of every value (`NULL` read as NaN). Bins are below
    /// `MAX_QUANTILE_BINS` (2²⁰), so `as i32` is exact.
    fn column(&self, values: &Float64Array) -> Int32Array {
        let bin = |i: usize| {
            let v = if values.is_valid(i) {
                values.value(i)
            } else {
                f64::NAN
            };
            self.grid.bin_of(v) as i32
        };
        Int32Array::from_iter_values((0..values.len()).map(bin))
    }
}

/// `name(value DOUBLE) → INT`: the bin of one record on the signed powers of two of
/// [`ApproxBounds`]' default layout ([`BoundsHistogram::bin`], exponents
/// [−32, 64]: 194 bins, ±∞ in the outermost ones), and NULL or NaN — a record without a
/// magnitude — in one extra bin after them that no release counts. Total: no record can
/// cause an error.
#[derive(Debug)]
pub(crate) struct MagnitudeBin {
    name: String,
    layout: BoundsHistogram,
    signature: Signature,
}

impl PartialEq for MagnitudeBin {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for MagnitudeBin {}

impl std::hash::Hash for MagnitudeBin {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

impl MagnitudeBin {
    pub(crate) fn new(name: String) -> std::result::Result<Self, dpmech::Error> {
        Ok(MagnitudeBin {
            name,
            layout: ApproxBounds::new(1, Neighbouring::AddRemove, 1.0)?.state(),
            signature: Signature::exact(vec![DataType::Float64], Volatility::Immutable),
        })
    }

    /// The bins of the layout, plus the one of records without a magnitude.
    pub(crate) fn bins() -> usize {
        use dpmech::statistics::bounds::{DEFAULT_MAX_EXPONENT, DEFAULT_MIN_EXPONENT};
        2 * (DEFAULT_MAX_EXPONENT - DEFAULT_MIN_EXPONENT + 1) as usize + 1
    }

    /// The bin of every value (`NULL` and NaN in the last).
    fn column(&self, values: &Float64Array) -> Int32Array {
        let none = self.layout.counts().len() as i32;
        let bin = |i: usize| {
            if values.is_valid(i) {
                self.layout.bin(values.value(i)).map_or(none, |b| b as i32)
            } else {
                none
            }
        };
        Int32Array::from_iter_values((0..values.len()).map(bin))
    }
}

per_record_udf!(MagnitudeBin);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magnitude_bins_follow_the_bounds_layout_and_records_without_magnitude_go_last() {
        let f = MagnitudeBin::new("m".into()).unwrap();
        let bins = f.column(&Float64Array::from(vec![
            Some(0.0),
            Some(3.0),
            Some(-3.0),
            Some(f64::INFINITY),
            Some(f64::NEG_INFINITY),
            Some(f64::NAN),
            None,
        ]));
        let layout = &f.layout;
        let expected: Vec<i32> = [0.0, 3.0, -3.0, f64::INFINITY, f64::NEG_INFINITY]
            .iter()
            .map(|&v| layout.bin(v).unwrap() as i32)
            .chain([194, 194])
            .collect();
        assert_eq!(bins.values().to_vec(), expected);
        assert_eq!(MagnitudeBin::bins(), 195);
        assert_eq!(expected[3], 193);
        assert_eq!(expected[4], 0);
    }

    fn fingerprints(f: &UnitFingerprint, array: ArrayRef) -> Vec<u64> {
        f.fingerprints(&array).unwrap().values().to_vec()
    }

    #[test]
    fn fingerprints_are_equal_exactly_for_values_sql_calls_equal() {
        let f = UnitFingerprint::new("f".into(), &ReleaseKey::from_bytes_insecure([9; 32]));
        // Integers: a bijection, whatever the width; NULL has its own fingerprint.
        let ints = fingerprints(
            &f,
            Arc::new(Int64Array::from(vec![Some(1), Some(2), None, Some(1)])),
        );
        let narrow = fingerprints(
            &f,
            Arc::new(Int32Array::from(vec![Some(1), Some(2), None, Some(1)])),
        );
        assert_eq!(ints, narrow);
        assert_eq!(ints[0], ints[3]);
        assert_ne!(ints[0], ints[1]);
        assert_ne!(ints[2], ints[0]);
        assert_ne!(ints[2], ints[1]);
        // Floats: −0 = 0 and every NaN alike, as SQL groups them.
        let floats = fingerprints(
            &f,
            Arc::new(Float64Array::from(vec![0.0, -0.0, f64::NAN, -f64::NAN, 1.5])),
        );
        assert_eq!(floats[0], floats[1]);
        assert_eq!(floats[2], floats[3]);
        assert_ne!(floats[0], floats[4]);
        // Text, keyed: another release key gives other fingerprints.
        let texts = fingerprints(
            &f,
            Arc::new(StringArray::from(vec![Some("u1"), Some("u1"), Some("u2"), None])),
        );
        assert_eq!(texts[0], texts[1]);
        assert_ne!(texts[0], texts[2]);
        assert_eq!(texts[3], ints[2]);
        let other = UnitFingerprint::new("f".into(), &ReleaseKey::from_bytes_insecure([8; 32]));
        assert_ne!(
            fingerprints(&other, Arc::new(StringArray::from(vec!["u1"])))[0],
            texts[0]
        );
    }

    #[test]
    fn grid_units_follow_the_record_rule_for_every_value() {
        let bounds = Bounds::new(0.0, 10.0).unwrap();
        let e = -4;
        let values = [
            Some(1.03),
            None,
            Some(f64::NAN),
            Some(f64::INFINITY),
            Some(-3.0),
            Some(20.0),
        ];
        let expected: Vec<i64> = values.iter().map(|&v| GridUnits::units(&bounds, e, v)).collect();
        // Midpoint 5 for NULL and NaN, clamped ends, 1.03 rounded to the nearest 1/16.
        assert_eq!(expected, vec![16, 80, 80, 160, 0, 160]);
        assert_eq!(
            GridUnits::units(&bounds, e, Some(1.03)),
            (1.03f64 * 16.0).round_ties_even() as i64
        );
    }
}
