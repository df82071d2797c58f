//! Stage 4, the aggregation: the engine runs the planned physical plan (rows → bounding
//! → `GROUP BY` of the exact partials) where a [`PlanRunner`] says — on this node
//! ([`LocalRunner`]) or on a cluster's executors (the `dpmech-ballista` crate) — and the
//! client reads the per-group exact integer partials — count, distinct units, one sum
//! per value column, sums of squares — into [`Partials`], and the histograms' non-empty
//! bins into [`Histograms`]: the only data the noise stage sees.

use std::collections::HashMap;
use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, Decimal128Array, RecordBatch, StringArray};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::execution::SessionState;
use datafusion::physical_plan::ExecutionPlan;

use crate::error::DpError;

/// A cell's key as text: the group key's text for one grouping column (`None`: the
/// NULL group), the [`encode_tuple`] of the keys for several, `""` for none.
pub(crate) type GroupKey = Option<String>;

/// The text of a tuple of keys (`None`: NULL), one-to-one: each part is `N;` for NULL
/// or `V<characters>:<text>`. The engine computes the same text per row (module
/// `plan`), so a cell's key is one text column whatever the number of columns.
pub(crate) fn encode_tuple<S: AsRef<str>>(parts: &[Option<S>]) -> String {
    let mut out = String::new();
    for part in parts {
        match part {
            None => out.push_str("N;"),
            Some(t) => {
                let t = t.as_ref();
                out.push_str(&format!("V{}:{t}", t.chars().count()));
            }
        }
    }
    out
}

/// The keys of an [`encode_tuple`] text, `None` if it is not one.
pub(crate) fn decode_tuple(mut text: &str) -> Option<Vec<Option<String>>> {
    let mut parts = Vec::new();
    while !text.is_empty() {
        if let Some(rest) = text.strip_prefix("N;") {
            parts.push(None);
            text = rest;
            continue;
        }
        let (length, rest) = text.strip_prefix('V')?.split_once(':')?;
        let length: usize = length.parse().ok()?;
        let end = rest.char_indices().nth(length).map_or(rest.len(), |(i, _)| i);
        if rest[..end].chars().count() != length {
            return None;
        }
        parts.push(Some(rest[..end].to_string()));
        text = &rest[end..];
    }
    Some(parts)
}

/// Per group, its exact scalar partials (module
/// [`columns::partial`](crate::columns::partial) gives their order).
pub(crate) type Partials = HashMap<GroupKey, Vec<i64>>;

/// Per group, the exact counts of its histograms' non-empty bins: `(bin, count)`, the
/// bin's index among the bins of all histograms, by bin.
pub(crate) type Histograms = HashMap<GroupKey, Vec<(u32, u64)>>;

/// The counts of bins `first..first + bins` of a cell's histograms, dense (empty bins 0).
pub(crate) fn dense_counts(cell: &[(u32, u64)], first: usize, bins: usize) -> Vec<u64> {
    let mut counts = vec![0u64; bins];
    let start = cell.partition_point(|&(b, _)| (b as usize) < first);
    for &(b, c) in &cell[start..] {
        match (b as usize).checked_sub(first) {
            Some(i) if i < bins => counts[i] = c,
            _ => break,
        }
    }
    counts
}

/// The bytes a cell's noise is keyed by (NULL differs from every string).
pub(crate) fn cell_bytes(key: &GroupKey) -> &[u8] {
    match key {
        Some(k) => k.as_bytes(),
        None => &[0xff, 0xfe],
    }
}

/// Where a release's physical plan runs. The plan is complete when the runner gets it:
/// planned at the client, after the charge, with the bounding operator and the derived
/// keys inside and **without** the release key, which stays at the client for the
/// noise. A runner only executes it and returns the batches of its final stage, the
/// exact per-group partials (a runner that changed the plan would change only what the
/// noise is added to, never the noise or the charge).
///
/// The runner is the deployment's choice, like the `SessionContext`: keep it on the
/// trusted side with the session.
#[async_trait::async_trait]
pub trait PlanRunner: Send + Sync + core::fmt::Debug {
    /// Runs `plan` to completion; `state` is the session it was planned in.
    ///
    /// # Errors
    ///
    /// The engine's errors (I/O, a lost cluster), never a record's value.
    async fn collect(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        state: &SessionState,
    ) -> datafusion::common::Result<Vec<RecordBatch>>;
}

/// Runs plans in this process, in the session's own runtime (the default).
#[derive(Debug, Default, Clone, Copy)]
pub struct LocalRunner;

#[async_trait::async_trait]
impl PlanRunner for LocalRunner {
    async fn collect(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        state: &SessionState,
    ) -> datafusion::common::Result<Vec<RecordBatch>> {
        datafusion::physical_plan::collect(plan, state.task_ctx()).await
    }
}

/// Runs `plan` with `runner` and reads its rows `(group, kind, count, units, sums…,
/// bin count)` into partials and histograms.
pub(crate) async fn exact_partials(
    plan: Arc<dyn ExecutionPlan>,
    state: &SessionState,
    runner: &dyn PlanRunner,
) -> Result<(Partials, Histograms), DpError> {
    let batches = runner.collect(plan, state).await?;
    read_partials(&batches)
}

/// The partials and histograms of the final aggregation's batches: a row of kind
/// [`SCALARS`](crate::columns::SCALARS) holds a group's scalar partials, any other a
/// bin's count (module `columns`).
pub(crate) fn read_partials(batches: &[RecordBatch]) -> Result<(Partials, Histograms), DpError> {
    let mut partials = HashMap::new();
    let mut histograms: Histograms = HashMap::new();
    for batch in batches {
        if batch.num_columns() < 3 {
            return Err(crate::error::internal(
                "partial rows have a group, a kind and a bin count",
            ));
        }
        let keys = cast(batch.column(0), &DataType::Utf8)?;
        let keys = keys
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| crate::error::internal("group keys must read as text"))?;
        let kinds = saturating_i64(batch.column(1))?;
        let last = batch.num_columns() - 1;
        let columns: Vec<Vec<i64>> = (2..last)
            .map(|c| saturating_i64(batch.column(c)))
            .collect::<Result<_, DpError>>()?;
        let bin_counts = saturating_i64(batch.column(last))?;
        for row in 0..batch.num_rows() {
            let k = (!keys.is_null(row)).then(|| keys.value(row).to_string());
            match u32::try_from(kinds[row]) {
                Ok(bin) => histograms
                    .entry(k)
                    .or_default()
                    .push((bin, bin_counts[row].max(0) as u64)),
                Err(_) => {
                    partials.insert(k, columns.iter().map(|c| c[row]).collect());
                }
            }
        }
    }
    for cell in histograms.values_mut() {
        cell.sort_unstable();
    }
    Ok((partials, histograms))
}

/// An integer column (Int64 counts, DECIMAL(38, 0) sums) as `i64`, nulls as 0 and
/// values beyond the `i64` range saturated: a 1-Lipschitz map of the exact value, so
/// the sensitivity is unchanged and no value can cause an error.
fn saturating_i64(column: &ArrayRef) -> Result<Vec<i64>, DpError> {
    let wide = cast(column, &DataType::Decimal128(38, 0))?;
    let wide = wide
        .as_any()
        .downcast_ref::<Decimal128Array>()
        .ok_or_else(|| crate::error::internal("partials must be integers"))?;
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
    fn tuples_of_keys_encode_one_to_one() {
        let cases: Vec<Vec<Option<&str>>> = vec![
            vec![],
            vec![None],
            vec![Some("")],
            vec![Some("a"), None, Some("")],
            vec![Some("V1:x"), Some("N;")],
            vec![Some("é:;"), Some("12")],
        ];
        let texts: Vec<String> = cases.iter().map(|c| encode_tuple(c)).collect();
        for (case, text) in cases.iter().zip(&texts) {
            let back = decode_tuple(text).unwrap();
            assert_eq!(back, case.iter().map(|p| p.map(String::from)).collect::<Vec<_>>());
        }
        let distinct: std::collections::HashSet<_> = texts.iter().collect();
        assert_eq!(distinct.len(), texts.len());
        for bad in ["x", "V2:a", "V:a", "N", "V1a"] {
            assert_eq!(decode_tuple(bad), None, "{bad}");
        }
    }

    #[test]
    fn dense_counts_read_one_histogram_out_of_the_sparse_bins() {
        let cell = [(0, 4), (3, 1), (5, 2), (6, 9), (9, 7)];
        assert_eq!(dense_counts(&cell, 3, 4), vec![1, 0, 2, 9]);
        assert_eq!(dense_counts(&cell, 7, 2), vec![0, 0]);
        assert_eq!(dense_counts(&cell, 0, 2), vec![4, 0]);
        assert_eq!(dense_counts(&[], 0, 3), vec![0, 0, 0]);
    }

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
