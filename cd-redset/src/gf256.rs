//! GF(2^8) arithmetic (polynomial 0x11D).
