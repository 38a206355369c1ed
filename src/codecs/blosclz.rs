//! PLACEHOLDER: replaced by the BloscLZ implementation.
use super::{Codec, CodecCtx};
use crate::error::{Error, Result};
/// The BloscLZ codec.
#[derive(Debug, Default, Clone, Copy)]
pub struct Blosclz;
impl Codec for Blosclz {
    fn id(&self) -> u8 { 0 }
    fn name(&self) -> &str { "blosclz" }
    fn format_code(&self) -> u8 { 0 }
    fn compress(&self, _src: &[u8], _dst: &mut [u8], _ctx: &CodecCtx<'_>) -> Result<usize> { Ok(0) }
    fn decompress(&self, _src: &[u8], _dst: &mut [u8], _ctx: &CodecCtx<'_>) -> Result<usize> { Err(Error::Data("todo".into())) }
}
