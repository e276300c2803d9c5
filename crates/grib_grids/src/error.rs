//! Why a grid's coordinates could not be computed.

/// Why a grid's coordinates could not be computed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GridError {
    /// The section is cut short, or holds a grid these iterators do not
    /// compute (a template, an earth, a scanning mode), named.
    #[error("{0}")]
    Layout(String),
    /// The grid has more points (or more along one side) than the limit given.
    #[error("a grid of more than {limit} points")]
    TooLarge {
        /// The most points asked for.
        limit: usize,
    },
}
