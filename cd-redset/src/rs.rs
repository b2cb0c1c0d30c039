//! Reed-Solomon encoding matrix and decoding.
