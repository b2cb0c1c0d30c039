//! Bulk GF(2^8) kernels.
