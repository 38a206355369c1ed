//! Byte layouts.
