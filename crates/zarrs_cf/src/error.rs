//! The errors of the CF view.

/// What went wrong opening, decoding, reading or selecting a variable.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum CfError {
    /// The array cannot be opened.
    #[error("cannot open {path}: {source}")]
    Open {
        /// The variable's path.
        path: String,
        /// What zarrs said.
        #[source]
        source: Box<zarrs::array::ArrayCreateError>,
    },
    /// Its values cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The variable's path.
        path: String,
        /// What zarrs said.
        #[source]
        source: Box<zarrs::array::ArrayError>,
    },
    /// An attribute cannot be decoded (time units of variable length, an unknown calendar).
    #[error("{path}: attribute {name:?}: {reason}")]
    Attribute {
        /// The variable's path.
        path: String,
        /// The attribute.
        name: String,
        /// Why.
        reason: String,
    },
    /// The values are not numbers (strings, compounds).
    #[error("{path}: its values are not numbers (dtype {dtype})")]
    NotNumbers {
        /// The variable's path.
        path: String,
        /// Its data type, as the metadata writes it.
        dtype: String,
    },
    /// Dates were asked of a variable without CF time units.
    #[error("{path}: it has no CF time units (`<unit> since <date>`)")]
    NotTime {
        /// The variable's path.
        path: String,
    },
    /// The values were asked for in a type that does not hold the decoded type exactly.
    #[error("{path}: its values decode to {decoded}, which {asked} does not hold exactly")]
    Type {
        /// The variable's path.
        path: String,
        /// The decoded type.
        decoded: String,
        /// The type asked for.
        asked: &'static str,
    },
    /// A selection that cannot be made.
    #[error("selection {selection:?}: {reason}")]
    Select {
        /// The selection, as written.
        selection: String,
        /// Why.
        reason: String,
    },
    /// The values read do not have the shape asked for.
    #[error("{path}: {reason}")]
    Shape {
        /// The variable's path.
        path: String,
        /// What zarrs returned.
        reason: String,
    },
}
