//! The scalar functions the bounded plan uses: a keyed rank (random, reproducible
//! choice of rows and groups) and the record rule that puts values on an integer grid.

use std::hash::{Hash, Hasher};
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, Float64Array, Int64Array, StringArray, UInt64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::Result;
use datafusion::logical_expr::{ColumnarValue, ScalarFunctionArgs, ScalarUDFImpl, Signature, Volatility};
use dpmech::statistics::Bounds;

use crate::key::{RankKey, ReleaseKey};

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

impl PartialEq for KeyedRank {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
impl Eq for KeyedRank {}
impl Hash for KeyedRank {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

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
        let columns: Vec<ArrayRef> = args
            .args
            .iter()
            .map(|c| c.to_array(n).and_then(|a| Ok(cast(&a, &DataType::Utf8)?)))
            .collect::<Result<_>>()?;
        let strings: Vec<&StringArray> = columns
            .iter()
            .map(|a| a.as_any().downcast_ref::<StringArray>().expect("cast to Utf8"))
            .collect();
        let mut parts: Vec<&[u8]> = Vec::with_capacity(strings.len());
        let ranks: UInt64Array = (0..n)
            .map(|row| {
                parts.clear();
                for s in &strings {
                    // NULL and the empty string differ: NULL is the one-byte part [0xff].
                    parts.push(if s.is_null(row) {
                        &[0xff]
                    } else {
                        s.value(row).as_bytes()
                    });
                }
                Some(self.key.rank(&parts))
            })
            .collect();
        Ok(ColumnarValue::Array(Arc::new(ranks)))
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

impl PartialEq for GridUnits {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}
impl Eq for GridUnits {}
impl Hash for GridUnits {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.name.hash(state);
    }
}

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
