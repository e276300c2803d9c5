//! What a scan may read and make.

/// How files are scanned.
#[derive(Clone, Debug)]
pub struct ScanOptions {
    pub(crate) inline_threshold: u64,
    pub(crate) max_header_bytes: u64,
    pub(crate) max_references: u64,
    pub(crate) block_bytes: u64,
    pub(crate) inline_variables: Vec<String>,
}

impl Default for ScanOptions {
    /// Arrays under 100 bytes inlined (kerchunk's default for NetCDF-3),
    /// headers of at most 64 MiB, at most 10^7 references a file, reads in
    /// blocks of 64 KiB.
    fn default() -> Self {
        Self {
            inline_threshold: 100,
            max_header_bytes: 64 << 20,
            max_references: 10_000_000,
            block_bytes: 64 << 10,
            inline_variables: Vec::new(),
        }
    }
}

impl ScanOptions {
    /// Hold every array of fewer than `bytes` bytes in the references (one
    /// chunk, the whole array), as kerchunk's `inline_threshold`; 0 inlines
    /// nothing.
    #[must_use]
    pub fn with_inline_threshold(mut self, bytes: u64) -> Self {
        self.inline_threshold = bytes;
        self
    }

    /// The longest header read; a file whose header is longer is refused.
    #[must_use]
    pub fn with_max_header_bytes(mut self, bytes: u64) -> Self {
        self.max_header_bytes = bytes;
        self
    }

    /// The most chunk references one file may make; a file whose header
    /// describes more (a record count no real file has) is refused.
    #[must_use]
    pub fn with_max_references(mut self, references: u64) -> Self {
        self.max_references = references;
        self
    }

    /// The size of the blocks the file is read in (one request reads one or
    /// more whole blocks, and each block is read once).
    #[must_use]
    pub fn with_block_bytes(mut self, bytes: u64) -> Self {
        self.block_bytes = bytes;
        self
    }

    /// Hold these variables in the references whatever their size (one
    /// chunk, the whole array): the coordinate files are combined along
    /// ([`combine`](crate::combine) reads its values from there).
    #[must_use]
    pub fn with_inlined_variables<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.inline_variables = names.into_iter().map(Into::into).collect();
        self
    }
}
