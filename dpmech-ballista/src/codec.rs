//! The codecs a cluster uses to ship a private release's plan: dpmech's nodes and
//! functions ([`DpmechCodec`]) in front of Ballista's own (shuffle readers and writers).
//! The scheduler, every executor and the client must use the same one — the stock
//! Ballista binaries do not know dpmech's operator, hence this crate's binaries.

use std::sync::Arc;

use ballista_core::serde::{BallistaCodec, BallistaLogicalExtensionCodec, BallistaPhysicalExtensionCodec};
use datafusion_proto::physical_plan::PhysicalExtensionCodec;
use dpmech_datafusion::DpmechCodec;

/// The physical codec of a dpmech cluster: [`DpmechCodec`] with Ballista's physical
/// codec as its fallback.
pub fn physical_codec() -> Arc<dyn PhysicalExtensionCodec> {
    Arc::new(DpmechCodec::with_fallback(Arc::new(
        BallistaPhysicalExtensionCodec::default(),
    )))
}

/// The codec pair the scheduler and executors are built with: Ballista's logical codec
/// (private releases submit physical plans only) and [`physical_codec`].
pub fn ballista_codec() -> BallistaCodec {
    BallistaCodec::new(
        Arc::new(BallistaLogicalExtensionCodec::default()),
        physical_codec(),
    )
}
