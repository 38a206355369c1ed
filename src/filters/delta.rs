//! PLACEHOLDER: replaced by the real filter.
use super::{Filter, FilterCtx};
use crate::error::Result;
/// Placeholder.
#[derive(Debug, Default, Clone, Copy)]
pub struct Delta;
impl Filter for Delta {
    fn id(&self) -> u8 { 3 }
    fn name(&self) -> &str { "delta" }
    fn forward(&self, src: &[u8], dst: &mut [u8], _ctx: &FilterCtx<'_>) -> Result<()> { dst.copy_from_slice(src); Ok(()) }
    fn backward(&self, src: &[u8], dst: &mut [u8], _ctx: &FilterCtx<'_>) -> Result<()> { dst.copy_from_slice(src); Ok(()) }
}
