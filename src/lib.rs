#![doc = include_str!("../README.md")]

mod error;
mod model;
mod parse;

pub use error::ReferenceError;
pub use model::{Reference, ReferenceSet, ReferenceSetBuilder, UrlId};
pub use parse::ParseOptions;
