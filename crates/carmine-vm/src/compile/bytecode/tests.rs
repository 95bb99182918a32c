//! Round trips and hostile input.
