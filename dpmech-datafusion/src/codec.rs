//! The plan codec: how a bounded plan travels to distributed executors.
//!
//! DataFusion serialises physical plans as protobuf (`datafusion-proto`); a distributed
//! runner such as Ballista ships each stage that way. The standard nodes (scans,
//! repartitions, aggregates) need nothing; this crate's own parts go through
//! [`DpmechCodec`]: the bounding operator (its bounds and its rank key) and the three
//! per-row functions (the unit fingerprint with its key, the grid-unit rule with its
//! bounds and grid, the text key of several grouping columns). Register it wherever the plan is decoded (for Ballista: the
//! scheduler's and executors' physical codec).
//!
//! The encoding is a tag byte and fixed-width little-endian fields. It carries the
//! release's **derived** keys (the bounding order's and the unit fingerprint's, each
//! HMAC-SHA256 of the release key and a label, truncated: module `key`) and never the
//! release key itself, from which the noise is derived at the client — executors see
//! the raw rows anyway, so they are trusted with the bounding order, but the bytes must
//! not be logged or kept beyond the release.
//!
//! A runner with extension nodes of its own (Ballista's shuffles) gives them to a
//! **fallback** codec ([`DpmechCodec::with_fallback`]): every node or function this
//! codec does not know is written as tag 0 and the fallback's bytes.

use std::sync::Arc;

use datafusion::common::{DataFusionError, Result};
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{AggregateUDF, ScalarUDF, WindowUDF};
use datafusion::physical_plan::ExecutionPlan;
use datafusion_proto::physical_plan::{PhysicalExtensionCodec, PhysicalProtoConverterExtension};
use dpmech::statistics::{Bounds, QuantileGrid};

use crate::bound::{BoundContributionsExec, BoundSpec};
use crate::key::RankKey;
use crate::query::ContributionBounds;
use crate::udf::{GridBin, GridUnits, GroupKeyText, MagnitudeBin, UnitFingerprint};

const FALLBACK: u8 = 0;
const BOUND_EXEC: u8 = 1;
const UNIT_FINGERPRINT: u8 = 2;
const GRID_UNITS: u8 = 3;
const GROUP_KEY_TEXT: u8 = 4;
const GRID_BIN: u8 = 5;
const MAGNITUDE_BIN: u8 = 6;

/// The physical extension codec of `dpmech-datafusion` plans (see the module docs).
///
/// ```
/// use std::sync::Arc;
/// use datafusion_proto::physical_plan::DefaultPhysicalExtensionCodec;
/// use dpmech_datafusion::DpmechCodec;
/// let alone = DpmechCodec::new(); // this crate's nodes and functions only
/// let chained = DpmechCodec::with_fallback(Arc::new(DefaultPhysicalExtensionCodec {}));
/// # let _ = (alone, chained);
/// ```
#[derive(Debug, Clone, Default)]
pub struct DpmechCodec {
    fallback: Option<Arc<dyn PhysicalExtensionCodec>>,
}

impl DpmechCodec {
    /// The codec of this crate's nodes and functions alone: any other extension node is
    /// refused, other functions are written by name.
    pub fn new() -> Self {
        DpmechCodec { fallback: None }
    }

    /// This crate's nodes and functions, and `fallback` for every other extension node
    /// and function (e.g. a distributed runner's own codec).
    pub fn with_fallback(fallback: Arc<dyn PhysicalExtensionCodec>) -> Self {
        DpmechCodec {
            fallback: Some(fallback),
        }
    }

    fn fallback(&self) -> Result<&dyn PhysicalExtensionCodec> {
        self.fallback
            .as_deref()
            .ok_or_else(|| DataFusionError::NotImplemented("DpmechCodec has no fallback codec".into()))
    }
}

impl PhysicalExtensionCodec for DpmechCodec {
    fn try_decode(
        &self,
        buf: &[u8],
        inputs: &[Arc<dyn ExecutionPlan>],
        ctx: &TaskContext,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let mut r = Reader(buf);
        match r.u8()? {
            FALLBACK => return self.fallback()?.try_decode(r.0, inputs, ctx, proto_converter),
            BOUND_EXEC if inputs.len() == 1 => {}
            _ => return Err(malformed()),
        }
        // The bounds of a decoded plan are held to the API's rule (module `query`): a
        // plan that could not have been planned through the API is refused.
        let bounds = ContributionBounds {
            max_groups: r.u32()?,
            max_rows_per_group: r.u32()?,
        }
        .check()
        .map_err(|e| DataFusionError::Plan(format!("DpmechCodec: {e}")))?;
        // A plan without bounding decodes only in a test build (`unsafe-testing`).
        let spec = BoundSpec::new(
            bounds.max_groups,
            bounds.max_rows_per_group,
            RankKey::from_words(r.u64()?, r.u64()?),
            r.u8()? != 0,
        )?;
        let projection = match r.u8()? {
            0 => None,
            _ => Some(
                (0..r.u32()?)
                    .map(|_| Ok(r.u32()? as usize))
                    .collect::<Result<Vec<_>>>()?,
            ),
        };
        let histograms = (0..r.u32()?).map(|_| r.u32()).collect::<Result<Vec<_>>>()?;
        if histograms.contains(&0) {
            return Err(malformed());
        }
        let squares = (0..r.u32()?)
            .map(|_| Ok((r.u32()?, r.u32()?)))
            .collect::<Result<Vec<_>>>()?;
        let spec = spec.with_histograms(histograms).with_squares(squares);
        r.end()?;
        Ok(Arc::new(BoundContributionsExec::try_new(
            inputs[0].clone(),
            spec,
            projection,
        )?))
    }

    fn try_encode(
        &self,
        node: Arc<dyn ExecutionPlan>,
        buf: &mut Vec<u8>,
        proto_converter: &dyn PhysicalProtoConverterExtension,
    ) -> Result<()> {
        let Some(exec) = node.downcast_ref::<BoundContributionsExec>() else {
            let Some(fallback) = &self.fallback else {
                return Err(DataFusionError::NotImplemented(format!(
                    "DpmechCodec cannot encode {}",
                    node.name()
                )));
            };
            buf.push(FALLBACK);
            return fallback.try_encode(node, buf, proto_converter);
        };
        let (spec, projection) = (exec.spec(), exec.projection());
        buf.push(BOUND_EXEC);
        buf.extend(spec.max_groups.to_le_bytes());
        buf.extend(spec.max_rows.to_le_bytes());
        let (k0, k1) = spec.rank_key.words();
        buf.extend(k0.to_le_bytes());
        buf.extend(k1.to_le_bytes());
        buf.push(u8::from(spec.keeps_everything()));
        match projection {
            None => buf.push(0),
            Some(p) => {
                buf.push(1);
                buf.extend((p.len() as u32).to_le_bytes());
                for &i in p {
                    buf.extend((i as u32).to_le_bytes());
                }
            }
        }
        buf.extend((spec.histograms.len() as u32).to_le_bytes());
        for &bins in &spec.histograms {
            buf.extend(bins.to_le_bytes());
        }
        buf.extend((spec.squares.len() as u32).to_le_bytes());
        for &(column, shift) in &spec.squares {
            buf.extend(column.to_le_bytes());
            buf.extend(shift.to_le_bytes());
        }
        Ok(())
    }

    fn try_decode_udf(&self, name: &str, buf: &[u8]) -> Result<Arc<ScalarUDF>> {
        let mut r = Reader(buf);
        let udf = match r.u8()? {
            FALLBACK => return self.fallback()?.try_decode_udf(name, r.0),
            UNIT_FINGERPRINT => ScalarUDF::new_from_impl(UnitFingerprint::from_key(
                name.to_string(),
                RankKey::from_words(r.u64()?, r.u64()?),
            )),
            GRID_UNITS => {
                let (lower, upper, nan) = (r.f64()?, r.f64()?, r.f64()?);
                let bounds = Bounds::new(lower, upper)
                    .and_then(|b| b.impute_nan(nan))
                    .map_err(|e| DataFusionError::Internal(format!("DpmechCodec: {e}")))?;
                ScalarUDF::new_from_impl(GridUnits::new(name.to_string(), bounds, r.i32()?))
            }
            GROUP_KEY_TEXT => ScalarUDF::new_from_impl(GroupKeyText::new()),
            GRID_BIN => {
                let (lower, upper, nan, bins) = (r.f64()?, r.f64()?, r.f64()?, r.u32()?);
                let grid = QuantileGrid::new(lower, upper, bins as usize)
                    .and_then(|g| g.impute_nan(nan))
                    .map_err(|e| DataFusionError::Internal(format!("DpmechCodec: {e}")))?;
                ScalarUDF::new_from_impl(GridBin::new(name.to_string(), grid))
            }
            MAGNITUDE_BIN => ScalarUDF::new_from_impl(
                MagnitudeBin::new(name.to_string())
                    .map_err(|e| DataFusionError::Internal(format!("DpmechCodec: {e}")))?,
            ),
            _ => return Err(malformed()),
        };
        r.end()?;
        Ok(Arc::new(udf))
    }

    fn try_encode_udf(&self, node: &ScalarUDF, buf: &mut Vec<u8>) -> Result<()> {
        if let Some(f) = node.inner().downcast_ref::<UnitFingerprint>() {
            let (k0, k1) = f.key().words();
            buf.push(UNIT_FINGERPRINT);
            buf.extend(k0.to_le_bytes());
            buf.extend(k1.to_le_bytes());
        } else if let Some(g) = node.inner().downcast_ref::<GridUnits>() {
            let b = g.bounds();
            buf.push(GRID_UNITS);
            for v in [b.lower(), b.upper(), b.nan_value()] {
                buf.extend(v.to_le_bytes());
            }
            buf.extend(g.grid_exp().to_le_bytes());
        } else if node.inner().downcast_ref::<GroupKeyText>().is_some() {
            buf.push(GROUP_KEY_TEXT);
        } else if node.inner().downcast_ref::<MagnitudeBin>().is_some() {
            buf.push(MAGNITUDE_BIN);
        } else if let Some(b) = node.inner().downcast_ref::<GridBin>() {
            let grid = b.grid();
            buf.push(GRID_BIN);
            for v in [grid.lower(), grid.upper(), grid.bounds().nan_value()] {
                buf.extend(v.to_le_bytes());
            }
            buf.extend((grid.bins() as u32).to_le_bytes());
        } else if let Some(fallback) = &self.fallback {
            // The fallback's bytes, tagged; none if it has none (encoded by name).
            let mut theirs = Vec::new();
            fallback.try_encode_udf(node, &mut theirs)?;
            if !theirs.is_empty() {
                buf.push(FALLBACK);
                buf.extend(theirs);
            }
        }
        // Other functions without a fallback: nothing (DataFusion encodes them by name).
        Ok(())
    }

    fn try_decode_udaf(&self, name: &str, buf: &[u8]) -> Result<Arc<AggregateUDF>> {
        self.fallback()?.try_decode_udaf(name, buf)
    }

    fn try_encode_udaf(&self, node: &AggregateUDF, buf: &mut Vec<u8>) -> Result<()> {
        match &self.fallback {
            Some(fallback) => fallback.try_encode_udaf(node, buf),
            None => Ok(()),
        }
    }

    fn try_decode_udwf(&self, name: &str, buf: &[u8]) -> Result<Arc<WindowUDF>> {
        self.fallback()?.try_decode_udwf(name, buf)
    }

    fn try_encode_udwf(&self, node: &WindowUDF, buf: &mut Vec<u8>) -> Result<()> {
        match &self.fallback {
            Some(fallback) => fallback.try_encode_udwf(node, buf),
            None => Ok(()),
        }
    }
}

fn malformed() -> DataFusionError {
    DataFusionError::Internal("DpmechCodec: malformed encoding".into())
}

/// A cursor over the encoded bytes.
struct Reader<'a>(&'a [u8]);

impl Reader<'_> {
    fn take<const N: usize>(&mut self) -> Result<[u8; N]> {
        let (head, rest) = self.0.split_first_chunk::<N>().ok_or_else(malformed)?;
        self.0 = rest;
        Ok(*head)
    }
    fn u8(&mut self) -> Result<u8> {
        Ok(self.take::<1>()?[0])
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take()?))
    }
    fn i32(&mut self) -> Result<i32> {
        Ok(i32::from_le_bytes(self.take()?))
    }
    fn u64(&mut self) -> Result<u64> {
        Ok(u64::from_le_bytes(self.take()?))
    }
    fn f64(&mut self) -> Result<f64> {
        Ok(f64::from_le_bytes(self.take()?))
    }
    fn end(&self) -> Result<()> {
        if self.0.is_empty() {
            Ok(())
        } else {
            Err(malformed())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_round_trip_and_malformed_bytes_are_errors_not_panics() {
        let key = crate::ReleaseKey::from_bytes_insecure([4; 32]);
        let bounds = Bounds::new(-2.0, 6.0).unwrap().impute_nan(1.5).unwrap();
        for udf in [
            ScalarUDF::new_from_impl(UnitFingerprint::new("fp".into(), &key)),
            ScalarUDF::new_from_impl(GridUnits::new("grid".into(), bounds, -7)),
            ScalarUDF::new_from_impl(GroupKeyText::new()),
            ScalarUDF::new_from_impl(GridBin::new(
                "bins".into(),
                QuantileGrid::new(-2.0, 6.0, 300)
                    .unwrap()
                    .impute_nan(1.5)
                    .unwrap(),
            )),
        ] {
            let mut buf = Vec::new();
            DpmechCodec::new().try_encode_udf(&udf, &mut buf).unwrap();
            let back = DpmechCodec::new().try_decode_udf(udf.name(), &buf).unwrap();
            let mut again = Vec::new();
            DpmechCodec::new().try_encode_udf(&back, &mut again).unwrap();
            assert_eq!(again, buf, "{}", udf.name());
            // Every truncation and a trailing byte are refused.
            for cut in 0..buf.len() {
                assert!(DpmechCodec::new().try_decode_udf("x", &buf[..cut]).is_err());
            }
            buf.push(0);
            assert!(DpmechCodec::new().try_decode_udf("x", &buf).is_err());
        }
        let decoded = DpmechCodec::new()
            .try_decode_udf("grid", &{
                let mut buf = Vec::new();
                DpmechCodec::new()
                    .try_encode_udf(
                        &ScalarUDF::new_from_impl(GridUnits::new("grid".into(), bounds, -7)),
                        &mut buf,
                    )
                    .unwrap();
                buf
            })
            .unwrap();
        let g = decoded.inner().downcast_ref::<GridUnits>().unwrap();
        assert_eq!(
            (
                g.bounds().lower(),
                g.bounds().upper(),
                g.bounds().nan_value(),
                g.grid_exp()
            ),
            (-2.0, 6.0, 1.5, -7)
        );
        assert!(DpmechCodec::new().try_decode_udf("x", &[9]).is_err());
    }

    /// The bounding operator's bytes with the bounds `l0`, `linf` (the rest as an
    /// honest plan writes it: a rank key, bounded, no projection, no grids, no squares).
    fn bound_exec_bytes(l0: u32, linf: u32) -> Vec<u8> {
        let mut buf = vec![BOUND_EXEC];
        buf.extend(l0.to_le_bytes());
        buf.extend(linf.to_le_bytes());
        buf.extend(7u64.to_le_bytes());
        buf.extend(9u64.to_le_bytes());
        buf.extend([0, 0]);
        buf.extend(0u32.to_le_bytes());
        buf.extend(0u32.to_le_bytes());
        buf
    }

    #[test]
    fn decoded_plans_with_contribution_bounds_the_api_refuses_are_refused() {
        use datafusion::arrow::datatypes::{DataType, Field, Schema};
        use datafusion::physical_plan::empty::EmptyExec;
        use datafusion_proto::physical_plan::DefaultPhysicalProtoConverter;
        let input: Arc<dyn ExecutionPlan> = Arc::new(EmptyExec::new(Arc::new(Schema::new(vec![
            Field::new(crate::columns::FINGERPRINT, DataType::UInt64, false),
            Field::new(crate::columns::GROUP, DataType::Int64, true),
            Field::new("__v0", DataType::Int32, false),
        ]))));
        let decode = |bytes: &[u8]| {
            DpmechCodec::new().try_decode(
                bytes,
                std::slice::from_ref(&input),
                &TaskContext::default(),
                &DefaultPhysicalProtoConverter {},
            )
        };
        // Positive control: bounds the API accepts decode, and encode back to the same
        // bytes.
        for (l0, linf) in [(1, 1), (3, 2), (u32::MAX, u32::MAX)] {
            let plan = decode(&bound_exec_bytes(l0, linf)).unwrap();
            let mut again = Vec::new();
            DpmechCodec::new()
                .try_encode(plan, &mut again, &DefaultPhysicalProtoConverter {})
                .unwrap();
            assert_eq!(again, bound_exec_bytes(l0, linf));
        }
        // L0 = 0 or L∞ = 0, which `register_private` refuses, are refused here too.
        for (l0, linf) in [(0, 2), (3, 0), (0, 0), (0, u32::MAX), (u32::MAX, 0)] {
            let refused = decode(&bound_exec_bytes(l0, linf)).unwrap_err().to_string();
            assert!(
                refused.contains("contribution bounds must be at least 1"),
                "{refused}"
            );
            let api = ContributionBounds {
                max_groups: l0,
                max_rows_per_group: linf,
            }
            .check();
            assert!(matches!(
                api,
                Err(crate::DpError::InvalidContributionBounds { .. })
            ));
        }
    }
}
