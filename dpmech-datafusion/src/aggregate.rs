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

/// The columns after the scalar partials: the bin count, the check tag's sum and the
/// merged rows (module `columns`).
const TRAILING: usize = 3;

/// Whether the final aggregation's `batches` prove that each row of partials of each
/// bounding task was merged **exactly once**, by the check tags and marker rows the
/// bounding operator adds (module `columns`):
///
/// * each task's marker row is merged once (a task's output merged twice shows as a
///   marker merged twice);
/// * the rows merged into the other rows (`__reads`) are as many as the markers say
///   their tasks emitted — a row merged twice, or lost, changes the count;
/// * the check tags sum to 0 — each task's marker carries minus the sum of its rows'
///   tags, so a row merged twice (or lost) shows up even where the counts balance.
///
/// A task's output lost whole, marker and all, is not seen here (the engine fails a job
/// whose map output is missing); it could only drop whole units, never count one twice.
///
/// A [`PlanRunner`] that may run a task more than once (a cluster recovering from a lost
/// executor) calls it before accepting a run; the release calls it again on what the
/// runner returns.
///
/// # Errors
///
/// [`DpError::IncompletePartials`] saying which check failed; an internal error for
/// batches that are not a release plan's partials.
pub fn check_complete(batches: &[RecordBatch]) -> Result<(), DpError> {
    let incomplete = |what: String| Err(DpError::IncompletePartials(what));
    // Per task identity: (marker rows, merged markers, the task's rows).
    let mut markers: std::collections::BTreeMap<u64, (u64, i64, i64)> = Default::default();
    let (mut merged, mut tags) = (0i128, 0i128);
    for batch in batches {
        let n = batch.num_columns();
        if n < 4 + TRAILING {
            return Err(crate::error::internal(
                "partial rows have a group, a kind, a count, units and the check columns",
            ));
        }
        let kinds = saturating_i64(batch.column(1))?;
        let counts = saturating_i64(batch.column(2))?;
        let reads = saturating_i64(batch.column(n - 1))?;
        let tag = decimal(batch.column(n - 2))?;
        for row in 0..batch.num_rows() {
            tags += tag.value(row);
            match crate::columns::marker_id(kinds[row]) {
                Some(id) => {
                    let m = markers.entry(id).or_default();
                    *m = (m.0 + 1, reads[row], counts[row]);
                }
                None => merged += i128::from(reads[row]),
            }
        }
    }
    let mut expected = 0i128;
    for (id, &(rows, reads, count)) in &markers {
        if rows != 1 || reads != 1 {
            return incomplete(format!(
                "the marker of bounding task {id:x} is in {rows} rows, merged {reads} times"
            ));
        }
        expected += i128::from(count);
    }
    if merged != expected {
        return incomplete(format!(
            "{merged} bounding rows merged where the {} tasks emitted {expected}",
            markers.len()
        ));
    }
    if tags != 0 {
        return incomplete("the check tags do not cancel: a bounding row was merged twice or lost".into());
    }
    Ok(())
}

/// A DECIMAL(38, 0) column.
fn decimal(column: &ArrayRef) -> Result<Decimal128Array, DpError> {
    let wide = cast(column, &DataType::Decimal128(38, 0))?;
    wide.as_any()
        .downcast_ref::<Decimal128Array>()
        .cloned()
        .ok_or_else(|| crate::error::internal("partials must be integers"))
}

/// The partials and histograms of the final aggregation's batches, once
/// [`check_complete`] holds: a row of kind [`SCALARS`](crate::columns::SCALARS) holds a
/// group's scalar partials, a row of a bin's kind (≥ 0) that bin's count, and the
/// markers only the check's counts (module `columns`).
pub(crate) fn read_partials(batches: &[RecordBatch]) -> Result<(Partials, Histograms), DpError> {
    check_complete(batches)?;
    let mut partials = HashMap::new();
    let mut histograms: Histograms = HashMap::new();
    for batch in batches {
        let keys = cast(batch.column(0), &DataType::Utf8)?;
        let keys = keys
            .as_any()
            .downcast_ref::<StringArray>()
            .ok_or_else(|| crate::error::internal("group keys must read as text"))?;
        let kinds = saturating_i64(batch.column(1))?;
        let bin_count = batch.num_columns() - TRAILING;
        let columns: Vec<Vec<i64>> = (2..bin_count)
            .map(|c| saturating_i64(batch.column(c)))
            .collect::<Result<_, DpError>>()?;
        let bin_counts = saturating_i64(batch.column(bin_count))?;
        for row in 0..batch.num_rows() {
            let k = (!keys.is_null(row)).then(|| keys.value(row).to_string());
            if kinds[row] == crate::columns::SCALARS {
                partials.insert(k, columns.iter().map(|c| c[row]).collect());
            } else if let Ok(bin) = u32::try_from(kinds[row]) {
                histograms
                    .entry(k)
                    .or_default()
                    .push((bin, bin_counts[row].max(0) as u64));
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
    let wide = decimal(column)?;
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

    /// A final row `(group, kind, count, units, tag, reads)` (its bin count NULL).
    type FinalRow<'a> = (Option<&'a str>, i64, i64, i64, i128, i64);

    /// Final rows `(group, kind, count, units, bin count, tag, reads)`.
    fn final_rows(rows: &[FinalRow<'_>]) -> Vec<RecordBatch> {
        use datafusion::arrow::array::Int64Array;
        let int = |f: fn(&FinalRow<'_>) -> i64| -> ArrayRef {
            Arc::new(Int64Array::from_iter_values(rows.iter().map(f)))
        };
        let columns: Vec<ArrayRef> = vec![
            Arc::new(StringArray::from_iter(rows.iter().map(|r| r.0))),
            int(|r| r.1),
            int(|r| r.2),
            int(|r| r.3),
            Arc::new(Int64Array::from_iter(rows.iter().map(|_| None::<i64>))),
            Arc::new(
                Decimal128Array::from_iter_values(rows.iter().map(|r| r.4))
                    .with_precision_and_scale(38, 0)
                    .unwrap(),
            ),
            int(|r| r.5),
        ];
        vec![
            RecordBatch::try_from_iter(columns.into_iter().enumerate().map(|(i, c)| (format!("c{i}"), c)))
                .unwrap(),
        ]
    }

    #[test]
    fn partials_are_complete_only_when_every_check_balances() {
        use crate::columns::{SCALARS, marker};
        // Two tasks: task 40 emitted rows tagged 5 and 7 (a's and b's), task 80 one row
        // tagged 11 (a's): a merges two rows, b one.
        let ok = [
            (Some("a"), SCALARS, 3, 2, 5 + 11, 2),
            (Some("b"), SCALARS, 1, 1, 7, 1),
            (None, marker(40), 2, 2, -12, 1),
            (None, marker(80), 1, 1, -11, 1),
        ];
        assert!(check_complete(&final_rows(&ok)).is_ok());
        // Nothing at all (a release over no rows): complete.
        assert!(check_complete(&final_rows(&[])).is_ok());
        let refused = |rows: &[FinalRow<'_>], why: &str| match check_complete(&final_rows(rows)) {
            Err(DpError::IncompletePartials(m)) => assert!(m.contains(why), "{m}"),
            other => panic!("{other:?}"),
        };
        // b's row merged twice: the count of merged rows is off.
        let mut twice = ok;
        twice[1] = (Some("b"), SCALARS, 2, 2, 14, 2);
        refused(&twice, "4 bounding rows merged where the 2 tasks emitted 3");
        // a's row of task 80 lost and b's merged twice: the counts balance, the tags do
        // not.
        let mut swapped = ok;
        swapped[0] = (Some("a"), SCALARS, 2, 1, 5, 1);
        swapped[1] = (Some("b"), SCALARS, 2, 2, 14, 2);
        refused(&swapped, "tags do not cancel");
        // Task 80's whole output merged twice: its marker is merged twice.
        let mut whole = ok;
        whole[0] = (Some("a"), SCALARS, 4, 3, 5 + 22, 3);
        whole[3] = (None, marker(80), 2, 2, -22, 2);
        refused(&whole, "merged 2 times");
        // A task's marker reported in two rows (a final partition fetched twice).
        let mut again = ok.to_vec();
        again.push(ok[3]);
        refused(&again, "in 2 rows");
        // Rows without their task's marker.
        refused(&ok[..3], "3 bounding rows merged where the 1 tasks emitted 2");
    }

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
