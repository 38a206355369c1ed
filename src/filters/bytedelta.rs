//! PLACEHOLDER: replaced by the real filter.
use super::{Filter, FilterCtx};
use crate::error::Result;
/// Placeholder.
#[derive(Debug, Default, Clone, Copy)]
pub struct Bytedelta;
/// Placeholder.
#[derive(Debug, Default, Clone, Copy)]
pub struct BytedeltaBuggy;
impl Filter for Bytedelta {
    fn id(&self) -> u8 { 35 }
    fn name(&self) -> &str { "bytedelta" }
    fn forward(&self, src: &[u8], dst: &mut [u8], _ctx: &FilterCtx<'_>) -> Result<()> { dst.copy_from_slice(src); Ok(()) }
    fn backward(&self, src: &[u8], dst: &mut [u8], _ctx: &FilterCtx<'_>) -> Result<()> { dst.copy_from_slice(src); Ok(()) }
}
impl Filter for BytedeltaBuggy {
    fn id(&self) -> u8 { 34 }
    fn name(&self) -> &str { "bytedelta_buggy" }
    fn forward(&self, src: &[u8], dst: &mut [u8], _ctx: &FilterCtx<'_>) -> Result<()> { dst.copy_from_slice(src); Ok(()) }
    fn backward(&self, src: &[u8], dst: &mut [u8], _ctx: &FilterCtx<'_>) -> Result<()> { dst.copy_from_slice(src); Ok(()) }
}
