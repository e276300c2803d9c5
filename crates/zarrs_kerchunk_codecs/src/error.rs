//! Why a chunk did not decode.

/// Why a chunk did not decode. zarrs reports it as the codec's error, with
/// the codec's id in front.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The stream decodes to more bytes than the chunk holds: decoding
    /// stopped there, so a bomb costs one chunk's memory.
    #[error("the stream decodes to more than the chunk's {size} bytes")]
    TooLong {
        /// The chunk's decoded size.
        size: usize,
    },
    /// The stream is not valid; the decoder's own error is the source.
    #[error("the stream is corrupt: {0}")]
    Corrupt(#[source] Box<dyn std::error::Error + Send + Sync>),
    /// The stream ends before the chunk is full.
    #[error("the stream ends after {decoded} of the chunk's {size} bytes")]
    Truncated {
        /// The bytes decoded.
        decoded: usize,
        /// The chunk's decoded size.
        size: usize,
    },
    /// The bytes do not fit the shape and type the configuration gives.
    #[error("{0}")]
    Layout(String),
}

impl DecodeError {
    /// A decoder's error, as text after the format it was decoding (`JPEG 2000: ...`),
    /// for decoders whose errors say nothing of their format or cannot be kept as a
    /// source (jxl-oxide's are not `Send` without its thread pool).
    pub(crate) fn in_format(format: &str, error: impl std::fmt::Display) -> Self {
        Self::Layout(format!("{format}: {error}"))
    }

    /// A corrupt stream, with the decoder's error as the source.
    pub(crate) fn corrupt(error: impl std::error::Error + Send + Sync + 'static) -> Self {
        Self::Corrupt(Box::new(error))
    }
}
