//! The bottom layer: time, names, processes. Nothing here knows what a team is.

pub(crate) mod clock;
pub(crate) mod names;
pub(crate) mod process;
pub(crate) mod text;
