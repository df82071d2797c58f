//! The scalar functions the bounded plan uses: a keyed rank (random, reproducible
//! choice of rows and groups) and the record rule that puts values on an integer grid.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::array::{
    Array, ArrayRef, Decimal128Array, Float64Array, Int64Array, StringArray, UInt64Array,
};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility};
use dpmech::statistics::Bounds;

use crate::key::{RankKey, ReleaseKey, SipHash24};

/// A UDF is identified by its (per-release, unique) name: equality and hashing by name.
macro_rules! identified_by_name {
    ($ty:ty) => {
        impl PartialEq for $ty {
            fn eq(&self, other: &Self) -> bool {
                self.name == other.name
            }
        }
        impl Eq for $ty {}
        impl Hash for $ty {
            fn hash<H: Hasher>(&self, state: &mut H) {
                self.name.hash(state);
            }
        }
    };
}

/// `name(col, …) → UInt64`: SipHash-2-4 of the columns' text under a key derived from
/// the release key and a label. Ordering by it is a uniformly random order that depends only on the
/// key and the values, so the same release recomputes the same choice.
#[derive(Debug)]
pub(crate) struct KeyedRank {
    name: String,
    key: RankKey,
    signature: Signature,
}

impl core::fmt::Debug for RankKey {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("RankKey(<secret>)")
    }
}

impl KeyedRank {
    pub(crate) fn new(name: String, label: &'static str, key: &ReleaseKey) -> Self {
        KeyedRank {
            name,
            key: key.rank_key(label),
            signature: Signature::variadic_any(Volatility::Immutable),
        }
    }
}

identified_by_name!(KeyedRank);

impl ScalarUDFImpl for KeyedRank {
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
        let n = args.number_rows;
        // Integers hash as 8 bytes, floats as their bits, everything else as text: no
        // per-row string conversion on the common key types.
        let columns: Vec<Column> = args
            .args
            .iter()
            .map(|c| Column::new(c.to_array(n)?))
            .collect::<Result<_>>()?;
        let ranks: UInt64Array = (0..n)
            .map(|row| {
                let mut h = self.key.hasher();
                for column in &columns {
                    column.hash_into(row, &mut h);
                }
                Some(h.finish())
            })
            .collect();
        Ok(ColumnarValue::Array(Arc::new(ranks)))
    }
}

/// One argument column of [`KeyedRank`], in the representation it is hashed in.
enum Column {
    Int(Int64Array),
    Float(Float64Array),
    Text(StringArray),
}

/// The part that stands for NULL (no encoded value has this one-byte form).
const NULL_PART: &[u8] = &[0xff];

impl Column {
    fn new(array: ArrayRef) -> Result<Self> {
        let as_int = |a: &ArrayRef| -> Result<Self> {
            let c = cast(a, &DataType::Int64)?;
            Ok(Column::Int(
                c.as_any().downcast_ref::<Int64Array>().expect("Int64").clone(),
            ))
        };
        Ok(match array.data_type() {
            DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64 => as_int(&array)?,
            DataType::UInt8 | DataType::UInt16 | DataType::UInt32 => as_int(&array)?,
            DataType::Float32 | DataType::Float64 => {
                let c = cast(&array, &DataType::Float64)?;
                Column::Float(
                    c.as_any()
                        .downcast_ref::<Float64Array>()
                        .expect("Float64")
                        .clone(),
                )
            }
            _ => {
                let c = cast(&array, &DataType::Utf8)?;
                Column::Text(c.as_any().downcast_ref::<StringArray>().expect("Utf8").clone())
            }
        })
    }

    /// Appends the row's value as one part (NULL as [`NULL_PART`]).
    fn hash_into(&self, row: usize, h: &mut SipHash24) {
        match self {
            Column::Int(a) if a.is_valid(row) => h.part(&a.value(row).to_le_bytes()),
            Column::Float(a) if a.is_valid(row) => h.part(&a.value(row).to_bits().to_le_bytes()),
            Column::Text(a) if a.is_valid(row) => h.part(a.value(row).as_bytes()),
            _ => h.part(NULL_PART),
        }
    }
}

/// `name(value DOUBLE) → BIGINT`: one record under the public rule, in grid units:
/// NULL and NaN become the bounds' NaN value (by default the midpoint), ±∞ and values
/// outside `[lower, upper]` are clamped, and the result is rounded to the nearest
/// multiple of `g = 2^grid_exp` (ties to even) and returned as an integer number of
/// `g`. Total: no record can cause an error.
#[derive(Debug)]
pub(crate) struct GridUnits {
    name: String,
    bounds: Bounds,
    grid_exp: i32,
    signature: Signature,
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

    /// One record in units of `g`.
    pub(crate) fn units(bounds: &Bounds, grid_exp: i32, value: Option<f64>) -> i64 {
        let v = bounds.read(value.unwrap_or(f64::NAN));
        (v * f64::from(-grid_exp).exp2()).round_ties_even() as i64
    }
}

identified_by_name!(GridUnits);

impl ScalarUDFImpl for GridUnits {
    fn name(&self) -> &str {
        &self.name
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int64)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let n = args.number_rows;
        let array = args.args[0].to_array(n)?;
        let values = array
            .as_any()
            .downcast_ref::<Float64Array>()
            .expect("signature: Float64");
        let units: Int64Array = values
            .iter()
            .map(|v| Some(Self::units(&self.bounds, self.grid_exp, v)))
            .collect();
        Ok(ColumnarValue::Array(Arc::new(units)))
    }
}

/// `name(sum DECIMAL(38, 0), count BIGINT) → BIGINT`: the contribution of one (unit,
/// group) pair of `count` records summing to `sum` grid units, when at most `m` records
/// count: `⌊sum·min(count, m)/count⌋` toward zero — `min(count, m)` records of the
/// pair's own mean, so a sum and a count of the same pairs stay consistent. Exact in
/// `i128`, saturated to `i64`; its absolute value is at most `m` times the largest
/// record, whatever the data. Total: no record can cause an error.
#[derive(Debug)]
pub(crate) struct PairShare {
    name: String,
    max_rows: i64,
    signature: Signature,
}

impl PairShare {
    pub(crate) fn new(name: String, max_rows: u32) -> Self {
        PairShare {
            name,
            max_rows: i64::from(max_rows),
            signature: Signature::exact(
                vec![DataType::Decimal128(38, 0), DataType::Int64],
                Volatility::Immutable,
            ),
        }
    }

    /// One pair's share.
    pub(crate) fn share(sum: i128, count: i64, max_rows: i64) -> i64 {
        if count <= 0 {
            return 0;
        }
        let kept = i128::from(count.min(max_rows));
        let share = sum
            .checked_mul(kept)
            .map_or(if sum < 0 { i128::MIN } else { i128::MAX }, |scaled| {
                scaled / i128::from(count)
            });
        share.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }
}

identified_by_name!(PairShare);

impl ScalarUDFImpl for PairShare {
    fn name(&self) -> &str {
        &self.name
    }
    fn signature(&self) -> &Signature {
        &self.signature
    }
    fn return_type(&self, _: &[DataType]) -> Result<DataType> {
        Ok(DataType::Int64)
    }
    fn invoke_with_args(&self, args: ScalarFunctionArgs) -> Result<ColumnarValue> {
        let n = args.number_rows;
        let sums = args.args[0].to_array(n)?;
        let counts = args.args[1].to_array(n)?;
        let sums = sums
            .as_any()
            .downcast_ref::<Decimal128Array>()
            .expect("signature: Decimal128");
        let counts = counts
            .as_any()
            .downcast_ref::<Int64Array>()
            .expect("signature: Int64");
        let shares: Int64Array = (0..n)
            .map(|i| {
                let sum = if sums.is_null(i) { 0 } else { sums.value(i) };
                let count = if counts.is_null(i) { 0 } else { counts.value(i) };
                Some(Self::share(sum, count, self.max_rows))
            })
            .collect();
        Ok(ColumnarValue::Array(Arc::new(shares)))
    }
}

#[cfg(test)]
mod tests {
    use super::PairShare;

    #[test]
    fn a_pair_counts_as_at_most_m_records_of_its_own_mean() {
        // At most m records: unchanged.
        assert_eq!(PairShare::share(30, 2, 2), 30);
        assert_eq!(PairShare::share(-7, 1, 3), -7);
        // More: m records of the pair's mean, truncated toward zero.
        assert_eq!(PairShare::share(100 * 10, 100, 2), 20);
        assert_eq!(PairShare::share(1001, 100, 2), 20);
        assert_eq!(PairShare::share(-1001, 100, 2), -20);
        // Never beyond m times the largest record, whatever the records.
        for (sum, count) in [(i128::from(i64::MAX), 3i64), (37, 5), (-(1 << 21) * 9, 9)] {
            let largest = (sum.abs() + i128::from(count) - 1) / i128::from(count);
            assert!(i128::from(PairShare::share(sum, count, 2)).abs() <= 2 * largest);
        }
        // Absurd inputs saturate instead of failing.
        assert_eq!(PairShare::share(i128::MAX, 1, 4), i64::MAX);
        assert_eq!(PairShare::share(i128::MIN, 1, 4), i64::MIN);
        assert_eq!(PairShare::share(5, 0, 4), 0);
    }
}
