//! Byte layouts of the Blosc2 formats: pure bytes, no I/O, no threads, no codecs.

pub mod b2nd;
pub mod chunk;
pub mod frame;
pub mod ids;
pub(crate) mod msgpack;
