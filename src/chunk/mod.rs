//! Chunk pipeline.
