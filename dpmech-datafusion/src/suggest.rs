//! Choosing contribution bounds from the data, privately: the L0 (groups per unit) and
//! L∞ (rows per unit and group) to register a table with, released as DP quantiles of
//! the per-unit numbers and charged to the session's budget
//! ([`dpmech::statistics::ContributionBoundsSuggester`], whose docs state the
//! bias–noise trade-off: larger bounds drop fewer rows and add more noise).
//!
//! ```text
//! charge ε  →  scan → (fingerprint(unit), fingerprint(key), COUNT(*)) per (unit, group)   (engine)
//!           →  L0: a DP quantile of the number of pairs per unit            (client, ε/2)
//!           →  L∞: a DP quantile of the rows of each unit's L0 pairs
//!              of smallest keyed rank                                       (client, ε/2)
//! ```
//!
//! The engine returns only keyed fingerprints and counts (never a unit or a key); the
//! client holds one entry per (unit, group) pair, so the helper's memory is linear in
//! the number of pairs (≈ 100 MB for 4·10⁶ pairs).

use datafusion::arrow::array::{Array, Int64Array, UInt64Array};
use datafusion::arrow::compute::cast;
use datafusion::arrow::datatypes::DataType;
use datafusion::common::{Column, TableReference};
use datafusion::datasource::provider_as_source;
use datafusion::functions_aggregate::expr_fn::count;
use datafusion::logical_expr::{Expr, LogicalPlanBuilder, ScalarUDF, lit};
use dpmech::statistics::{ContributionBoundsSuggester, SuggestedBounds};

use crate::PrivateSession;
use crate::error::DpError;
use crate::key::{ReleaseKey, mix};
use crate::udf::{GroupKeyText, UnitFingerprint};

impl PrivateSession {
    /// Suggests contribution bounds for releases of the private table `table` grouped
    /// by `group_by` (several columns, or none): `L0` as `suggester`'s quantile of the
    /// number of groups per privacy unit, then `L∞` as its quantile of the rows of each
    /// unit's at most `L0` (unit, group) pairs, chosen by a keyed pseudo-random rank as
    /// bounding chooses them. **ε-DP** (ε/2 each, the accountant's relation), charged
    /// before any row is read. Register the table again with the suggestion to use it.
    ///
    /// ```no_run
    /// # async fn demo(session: &dpmech_datafusion::PrivateSession) -> Result<(), dpmech_datafusion::DpError> {
    /// use dpmech::statistics::ContributionBoundsSuggester;
    /// let suggester = ContributionBoundsSuggester::new(30, 20)?.quantile(0.9)?;
    /// let bounds = session
    ///     .suggest_contribution_bounds("visits", &["day"], &suggester, 0.2)
    ///     .await?;
    /// println!("L0 = {}, L∞ = {}", bounds.l0, bounds.linf);
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// Before the charge: [`DpError::UnknownTable`], [`DpError::UnknownColumn`],
    /// [`DpError::Privacy`] for an ε the selections refuse; then the accountant's
    /// refusal ([`DpError::Privacy`] with `BudgetExceeded`: nothing is read); after the
    /// charge only [`DpError::DataFusion`] or [`DpError::Arrow`] if the engine fails.
    pub async fn suggest_contribution_bounds(
        &self,
        table: &str,
        group_by: &[&str],
        suggester: &ContributionBoundsSuggester,
        epsilon: f64,
    ) -> Result<SuggestedBounds, DpError> {
        let key = ReleaseKey::from_os()?;
        self.suggest_contribution_bounds_with_key(table, group_by, suggester, epsilon, key)
            .await
    }

    /// [`suggest_contribution_bounds`](Self::suggest_contribution_bounds) with a given
    /// key (fingerprints, pair ranks and the selections' randomness): the same key gives
    /// the same suggestion; every new suggestion must use a new key, and is charged
    /// again.
    ///
    /// # Errors
    ///
    /// As [`suggest_contribution_bounds`](Self::suggest_contribution_bounds).
    pub async fn suggest_contribution_bounds_with_key(
        &self,
        table: &str,
        group_by: &[&str],
        suggester: &ContributionBoundsSuggester,
        epsilon: f64,
        key: ReleaseKey,
    ) -> Result<SuggestedBounds, DpError> {
        let private = self
            .tables
            .get(table)
            .ok_or_else(|| DpError::UnknownTable(table.to_string()))?;
        let schema = private.provider.schema();
        for name in group_by.iter().copied().chain([private.unit.as_str()]) {
            schema
                .field_with_name(name)
                .map_err(|_| DpError::UnknownColumn(name.to_string()))?;
        }
        // Budget first: a refused charge reads nothing.
        let charged = suggester.charge(&self.accountant, epsilon)?;

        // Per (unit, group) pair: the keyed fingerprints of the unit and of the group's
        // text key, and its rows.
        let fingerprint =
            ScalarUDF::new_from_impl(UnitFingerprint::new("dpmech_unit_fingerprint".into(), &key));
        let column = |name: &str| Expr::Column(Column::new_unqualified(name));
        let group_key = match group_by {
            [] => lit(""),
            columns => ScalarUDF::new_from_impl(GroupKeyText::new())
                .call(columns.iter().map(|c| column(c)).collect()),
        };
        let pairs = LogicalPlanBuilder::scan(
            TableReference::bare(table),
            provider_as_source(private.provider.clone()),
            None,
        )?
        .project(vec![
            fingerprint.call(vec![column(&private.unit)]).alias("__f"),
            fingerprint.call(vec![group_key]).alias("__k"),
        ])?
        .aggregate(
            vec![column("__f"), column("__k")],
            vec![count(lit(1)).alias("__c")],
        )?
        .build()?;
        let state = self.ctx.state();
        let batches = self
            .runner
            .collect(state.create_physical_plan(&pairs).await?, &state)
            .await?;
        // (unit, rank of the pair within the unit, rows), sorted by unit then rank.
        let mut rows: Vec<(u64, (u64, u64), u64)> = Vec::new();
        for batch in &batches {
            let f = cast(batch.column(0), &DataType::UInt64)?;
            let k = cast(batch.column(1), &DataType::UInt64)?;
            let c = cast(batch.column(2), &DataType::Int64)?;
            let (f, k, c) = (
                f.as_any().downcast_ref::<UInt64Array>(),
                k.as_any().downcast_ref::<UInt64Array>(),
                c.as_any().downcast_ref::<Int64Array>(),
            );
            let (Some(f), Some(k), Some(c)) = (f, k, c) else {
                return Err(crate::error::internal(
                    "pair rows must be (UInt64, UInt64, Int64)",
                ));
            };
            for i in 0..batch.num_rows() {
                let (f, k) = (f.value(i), k.value(i));
                rows.push((f, (mix(f ^ k), k), c.value(i).max(0) as u64));
            }
        }
        rows.sort_unstable();
        let units = || rows.chunk_by(|a, b| a.0 == b.0);

        let mut rng = key.cell_rng("suggest", b"");
        let l0_grid = charged.l0_grid();
        let mut groups = vec![0u64; l0_grid.bins()];
        for unit in units() {
            groups[l0_grid.bin_of(unit.len() as f64)] += 1;
        }
        let l0 = charged.l0(&groups, &mut rng)?;
        let linf_grid = charged.linf_grid();
        let mut sizes = vec![0u64; linf_grid.bins()];
        for unit in units() {
            for &(_, _, c) in unit.iter().take(l0 as usize) {
                sizes[linf_grid.bin_of(c as f64)] += 1;
            }
        }
        let linf = charged.linf(&sizes, l0, &mut rng)?;
        Ok(SuggestedBounds { l0, linf })
    }
}
