//! What a scan may read and make.

/// How files are scanned.
#[derive(Clone, Debug)]
pub struct ScanOptions {
    pub(crate) inline_threshold: Option<u64>,
    pub(crate) max_header_bytes: u64,
    pub(crate) max_references: u64,
    pub(crate) block_bytes: u64,
    pub(crate) first_read_bytes: u64,
    pub(crate) read_ahead_bytes: u64,
    pub(crate) inline_variables: Vec<String>,
    pub(crate) unsupported: UnsupportedArrays,
    pub(crate) grib_inventory: bool,
    pub(crate) grib_levels_from_inventory: bool,
    pub(crate) dmrpp: DmrppSidecars,
    pub(crate) fill_value_attribute: bool,
    pub(crate) parser_thread: ParserThread,
}

/// Whether [`scan`](crate::scan) reads a file's DMR++ sidecar (`FILE.dmrpp` beside it, OPeNDAP
/// Hyrax's) in place of the file's own header.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum DmrppSidecars {
    /// Read the file itself (the library's default: a scan reads what it is pointed at, and asks
    /// for nothing else).
    #[default]
    Never,
    /// The sidecar where there is one, else the file (the command line's and Python's default):
    /// one more request for a file without one.
    Auto,
    /// The sidecar, and an error for a file without one.
    Only,
}

/// Where a scan runs a parser that reads synchronously (HDF5's), blocking the thread it runs on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum ParserThread {
    /// A thread of the runtime's blocking pool (`spawn_blocking`), handed the parse and waited
    /// for: right wherever the scan is polled.
    #[default]
    BlockingPool,
    /// The thread that polls the scan, through Tokio's `block_in_place`: two thread switches a
    /// file fewer, a tenth of a small local file's scan on a busy machine. Only for a scan polled
    /// by a multi-thread runtime, on a worker or in its `block_on`, and never inside a
    /// `LocalSet`, where `block_in_place` panics; on a current-thread runtime the pool is used.
    CallingThread,
}

/// What a scan does with an array references cannot express: an HDF5
/// dataset compressed by a filter zarr has no codec for (szip,
/// scale-offset, n-bit, fletcher32, lzf), of a type zarr v2 lacks
/// (compounds, references, variable-length sequences), or whose chunks
/// were stored with different filters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnsupportedArrays {
    /// Leave the array out and say so in [`Scan::skipped`](crate::Scan::skipped),
    /// as kerchunk does (with a warning).
    #[default]
    Skip,
    /// Fail the scan, naming the array and the reason.
    Fail,
}

/// An array (or an attribute of one) a scan left out, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Skipped {
    /// The array's (or group's) path in the references.
    pub path: String,
    /// Why: what references cannot express.
    pub reason: String,
}

impl ScanOptions {
    /// `count` more references for `variable` of `url`, `made` so far: counted where they stay
    /// within [`ScanOptions::with_max_references`].
    ///
    /// # Errors
    /// [`ScanError::Variable`] naming the variable and the limit.
    pub(crate) fn count_references(
        &self,
        made: &mut u64,
        count: u64,
        url: &str,
        variable: &str,
    ) -> Result<(), crate::ScanError> {
        if count > self.max_references.saturating_sub(*made) {
            return Err(crate::ScanError::Variable {
                url: url.to_owned(),
                variable: variable.to_owned(),
                reason: format!("more than {} references (ScanOptions::with_max_references)", self.max_references),
            });
        }
        *made += count;
        Ok(())
    }
}

impl Default for ScanOptions {
    /// kerchunk's inline thresholds (100 bytes for NetCDF-3, 500 for
    /// HDF5), metadata of at most 64 MiB, at most 10^7 references a file,
    /// a first read of 256 KiB, then reads in blocks of 64 KiB with a
    /// read-ahead of up to 4 MiB, unsupported arrays skipped.
    fn default() -> Self {
        Self {
            inline_threshold: None,
            max_header_bytes: 64 << 20,
            max_references: 10_000_000,
            block_bytes: 64 << 10,
            first_read_bytes: 256 << 10,
            read_ahead_bytes: 4 << 20,
            inline_variables: Vec::new(),
            unsupported: UnsupportedArrays::Skip,
            grib_inventory: true,
            grib_levels_from_inventory: true,
            dmrpp: DmrppSidecars::Never,
            fill_value_attribute: false,
            parser_thread: ParserThread::BlockingPool,
        }
    }
}

impl ScanOptions {
    /// Hold small data in the references, as kerchunk's `inline_threshold`:
    /// in NetCDF-3 files every array of fewer than `bytes` bytes (one
    /// chunk, the whole array), in HDF5 files every chunk stored in fewer
    /// than `bytes` bytes, in TIFF files every tile or strip stored in fewer
    /// than `bytes` bytes; 0 inlines nothing. Without it, kerchunk's
    /// defaults: 100 bytes for NetCDF-3, 500 for HDF5, none for TIFF.
    #[must_use]
    pub fn with_inline_threshold(mut self, bytes: u64) -> Self {
        self.inline_threshold = Some(bytes);
        self
    }

    /// What to do with an array references cannot express (HDF5 only):
    /// skip it (the default) or fail the scan.
    #[must_use]
    pub fn with_unsupported_arrays(mut self, unsupported: UnsupportedArrays) -> Self {
        self.unsupported = unsupported;
        self
    }

    /// The most metadata read: the longest NetCDF-3 header, or the bytes of
    /// an HDF5 file's object headers, indexes and heaps (and of the chunks
    /// inlined) in all; a file that needs more is refused.
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

    /// How much of a file's start the first request reads (rounded up to
    /// whole blocks), which also tells the file's size: most headers and
    /// HDF5 metadata lie there, so that a file costs one request.
    #[must_use]
    pub fn with_first_read_bytes(mut self, bytes: u64) -> Self {
        self.first_read_bytes = bytes;
        self
    }

    /// How far an HDF5 file is read ahead when its metadata is read in file
    /// order (B-tree nodes written between the chunks they index): each
    /// read that starts where the last one ended reads twice as far, up to
    /// `bytes`; 0 reads only the blocks the parser asks for. Over a network
    /// this turns hundreds of requests into tens, at the cost of reading
    /// chunk bytes between the nodes.
    #[must_use]
    pub fn with_read_ahead_bytes(mut self, bytes: u64) -> Self {
        self.read_ahead_bytes = bytes;
        self
    }

    /// Hold these variables in the references whatever their size (one
    /// chunk, the whole array): the coordinate files are combined along
    /// (`kerchunk_combine::combine` reads its values from there).
    #[must_use]
    pub fn with_inlined_variables<I: IntoIterator<Item = S>, S: Into<String>>(mut self, names: I) -> Self {
        self.inline_variables = names.into_iter().map(Into::into).collect();
        self
    }

    /// Keep a numeric `_FillValue` attribute in the array's attributes as well as making it the
    /// fill value. kerchunk drops it (Zarr 2 readers take CF's `_FillValue` from the fill value);
    /// Zarr 3 readers such as xarray's take it from the attributes only, so manifests for
    /// VirtualiZarr keep it, as its HDF parser does. Off by default.
    #[must_use]
    pub fn with_fill_value_attribute(mut self, keep: bool) -> Self {
        self.fill_value_attribute = keep;
        self
    }

    /// Where HDF5's parser, which reads synchronously, runs: [`ParserThread::BlockingPool`] by
    /// default.
    #[must_use]
    pub fn with_parser_thread(mut self, thread: ParserThread) -> Self {
        self.parser_thread = thread;
        self
    }

    /// Whether [`scan`](crate::scan) reads a file's DMR++ sidecar (`FILE.dmrpp` beside it) in
    /// place of the file's header: [`DmrppSidecars::Never`] by default.
    #[must_use]
    pub fn with_dmrpp_sidecars(mut self, sidecars: DmrppSidecars) -> Self {
        self.dmrpp = sidecars;
        self
    }

    /// Whether a GRIB file's inventory beside it (NOAA's `FILE.idx`, or
    /// ECMWF's `.index` in place of the file's extension) says where its
    /// messages are (the default), rather than their own lengths, read one
    /// after the other. The inventory saves that walk: every message's header
    /// is then read at once, several at a time. An inventory that disagrees
    /// with the file (a message not where it says) is an error.
    #[must_use]
    pub fn with_grib_inventory(mut self, read: bool) -> Self {
        self.grib_inventory = read;
        self
    }

    /// Whether, with a NOAA inventory, messages whose lines differ only in
    /// their level's numbers (`TMP:500 mb`, `TMP:850 mb`) take their level
    /// from their line (the default), the rest of their header from the
    /// first such message's, read: one header read per distinct variable
    /// rather than one per message. Their levels are then the inventory's
    /// word, unread in the file; `false` reads every message's header. A
    /// line whose numbers do not give its message's fixed surfaces (as the
    /// first one's line and header show), or that repeats another's, has its
    /// header read either way.
    #[must_use]
    pub fn with_grib_levels_from_inventory(mut self, taken: bool) -> Self {
        self.grib_levels_from_inventory = taken;
        self
    }
}
