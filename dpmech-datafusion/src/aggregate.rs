//! Stage 4, the aggregation: the engine runs the planned physical plan (rows → bounding
//! → `GROUP BY` of the exact partials, on one node or on executors), and the client reads
//! the per-group exact integer partials — count, distinct units, one sum per value
//! column — into [`Partials`], the only data the noise stage sees.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, Decimal128Array, RecordBatch, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::execution::TaskContext;
use datafusion::physical_plan::ExecutionPlan;

use crate::DpError;

/// A group key as text (`None`: the NULL group).
pub(crate) type GroupKey = Option<String>;

/// Per group, its exact partials (module [`columns::partial`](crate::columns::partial)
/// gives their order).
pub(crate) type Partials = HashMap<GroupKey, Vec<i64>>;

/// The bytes a cell's noise is keyed by (NULL differs from every string).
pub(crate) fn cell_bytes(key: &GroupKey) -> &[u8] {
    match key {
        Some(k) => k.as_bytes(),
        None => &[0xff, 0xfe],
    }
}

/// Runs `plan` and reads its rows `(group, count, units, sums…)` into partials.
pub(crate) async fn exact_partials(
    plan: Arc<dyn ExecutionPlan>,
    task: Arc<TaskContext>,
) -> Result<Partials, DpError> {
    let batches = datafusion::physical_plan::collect(plan, task).await?;
    read_partials(&batches)
}

/// The partials of the final aggregation's batches.
pub(crate) fn read_partials(batches: &[RecordBatch]) -> Result<Partials, DpError> {
    let mut out = HashMap::new();
    for batch in batches {
        let keys = cast(batch.column(0), &DataType::Utf8)?;
        let keys = keys
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| DpError::Invalid("group keys must read as text".into()))?;
        let columns: Vec<Vec<i64>> = (1..batch.num_columns())
            .map(|c| saturating_i64(batch.column(c)))
            .collect::<Result<_, DpError>>()?;
        for row in 0..batch.num_rows() {
            let k = (!keys.is_null(row)).then(|| keys.value(row).to_string());
            out.insert(k, columns.iter().map(|c| c[row]).collect());
        }
    }
    Ok(out)
}

/// An integer column (Int64 counts, DECIMAL(38, 0) sums) as `i64`, nulls as 0 and
/// values beyond the `i64` range saturated: a 1-Lipschitz map of the exact value, so
/// the sensitivity is unchanged and no value can cause an error.
fn saturating_i64(column: &ArrayRef) -> Result<Vec<i64>, DpError> {
    let wide = cast(column, &DataType::Decimal128(38, 0))?;
    let wide = wide
        .as_any()
        .downcast_ref::<Decimal128Array>()
        .ok_or_else(|| DpError::Invalid("partials must be integers".into()))?;
    Ok((0..wide.len())
        .map(|i| {
            if wide.is_null(i) {
                0
            } else {
                wide.value(i).clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_sums_beyond_i64_saturate_instead_of_wrapping_or_failing() {
        use datafusion::arrow::array::Int64Array;
        let wide: ArrayRef = Arc::new(
            Decimal128Array::from(vec![
                Some(i128::from(i64::MAX) + 5),
                None,
                Some(-7),
                Some(i128::MIN / 2),
            ])
            .with_precision_and_scale(38, 0)
            .unwrap(),
        );
        assert_eq!(saturating_i64(&wide).unwrap(), vec![i64::MAX, 0, -7, i64::MIN]);
        let counts: ArrayRef = Arc::new(Int64Array::from(vec![Some(3), None]));
        assert_eq!(saturating_i64(&counts).unwrap(), vec![3, 0]);
    }
}
