//! PLACEHOLDER: SIMD kernels.
