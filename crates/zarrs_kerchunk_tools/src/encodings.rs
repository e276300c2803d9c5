//! Does a combined set decode every target's chunks as the target itself says they decode?
//! Each target file's own metadata is read (a header scan, no chunk bytes) and the attributes
//! that change what a value decodes to ([`kerchunk_combine::decoding_attributes`]: packing, fill
//! values, valid ranges, signedness, units and calendars) of each array whose chunks the set
//! takes from it are compared with those the set gives that array. A set combined by kerchunk's
//! `MultiZarrToZarr` or `VirtualiZarr` from files packed each their own way keeps the first
//! file's `scale_factor`, and every other file's values decode wrong: this finds them.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

use futures::StreamExt;
use kerchunk::zarr::metadata::is_metadata_key;
use kerchunk::{Reference, ReferenceSet, ReferenceSetBuilder, ReferenceSource, Walk};
use kerchunk_combine::decoding_attributes;
use kerchunk_scan::ScanOptions;
use serde::Serialize;
use zarrs_kerchunk::{ReferenceStore, StoreRegistry};

use crate::make::MakeError;
use crate::output::Places;

/// What the audit found of one target.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "status", rename_all = "snake_case")]
#[non_exhaustive]
pub enum EncodingStatus {
    /// Every array whose chunks the set takes from it decodes them as the target says.
    Agrees,
    /// Some decode them otherwise: their values read wrong.
    Differs {
        /// Each attribute of each array that differs.
        differences: Vec<EncodingDifference>,
    },
    /// The target's own metadata could not be read (missing, unreachable, not a format scanned).
    Unchecked {
        /// Why.
        error: String,
    },
}

/// An attribute the set gives an array otherwise than the target whose chunks it holds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct EncodingDifference {
    /// The array's path.
    pub array: String,
    /// The attribute (`_FillValue` also standing for the `.zarray`'s fill value).
    pub attribute: String,
    /// Its value in the target, as JSON (`null` where the target has none).
    pub target: String,
    /// Its value in the set, as JSON (`null` where the set gives none).
    pub set: String,
}

/// One target, as the audit found it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct TargetEncodings {
    /// The target's URL, resolved (`file://` for local files).
    pub url: String,
    /// The arrays whose chunks the set takes from it.
    pub arrays: Vec<String>,
    /// The verdict.
    #[serde(flatten)]
    pub status: EncodingStatus,
}

/// The audit of every target of a set; see [`audit_encodings`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct EncodingsAudit {
    /// Every target: those that differ first, then those unchecked, then by URL.
    pub targets: Vec<TargetEncodings>,
}

impl EncodingsAudit {
    /// Whether no target's chunks decode otherwise than it says (targets that could not be
    /// checked are not counted against it, but [`Self::unchecked`] tells them).
    #[must_use]
    pub fn is_ok(&self) -> bool {
        !self.targets.iter().any(|t| matches!(t.status, EncodingStatus::Differs { .. }))
    }

    /// The targets whose metadata could not be read.
    pub fn unchecked(&self) -> impl Iterator<Item = &TargetEncodings> {
        self.targets.iter().filter(|t| matches!(t.status, EncodingStatus::Unchecked { .. }))
    }
}

/// Compare the decoding attributes `store`'s set gives each array with those of every target
/// file its chunks come from, each target's metadata read by a header scan (no chunk bytes)
/// through `registry`, `concurrency` targets at once. Targets are resolved as the store's reads
/// resolve them. Only the arrays the set takes chunks of from a target are compared, at the
/// same path in the target's own references.
///
/// # Errors
/// [`MakeError::Existing`] if the set cannot be walked; [`MakeError::Runtime`] if the runtime
/// for the scans cannot start. What a target's metadata says, or that it cannot be read, is in
/// the [`EncodingsAudit`].
pub fn audit_encodings(
    store: &ReferenceStore,
    location: &str,
    registry: &StoreRegistry,
    concurrency: usize,
) -> Result<EncodingsAudit, MakeError> {
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build().map_err(MakeError::Runtime)?;
    let (metadata, uses) = runtime.block_on(walk(store.source().as_ref(), location))?;
    // Two spellings of one file are one target.
    let mut targets: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut unresolved = Vec::new();
    for (written, arrays) in uses {
        match store.target(written.as_deref()) {
            Ok(target) => targets.entry(target.url().to_owned()).or_default().extend(arrays),
            Err(error) => unresolved.push(TargetEncodings {
                url: written.unwrap_or_else(|| "(null)".into()),
                arrays: arrays.into_iter().collect(),
                status: EncodingStatus::Unchecked { error: kerchunk::error_chain(&*error) },
            }),
        }
    }
    let mut places = Places::default();
    let located: Vec<_> = targets
        .into_iter()
        .map(|(url, arrays)| {
            let place = match url::Url::parse(&url) {
                Ok(parsed) if parsed.scheme() == "file" => {
                    parsed.to_file_path().map_or_else(|()| url.clone(), |p| p.to_string_lossy().into_owned())
                }
                _ => url.clone(),
            };
            let store = places.place(&place, registry, false).map_err(|e| e.to_string());
            (url, arrays, store)
        })
        .collect();
    let options = ScanOptions::default().with_inline_threshold(0);
    let mut audited: Vec<TargetEncodings> = runtime.block_on(
        futures::stream::iter(located)
            .map(|(url, arrays, place)| {
                let (options, metadata) = (&options, &metadata);
                async move {
                    let status = match place {
                        Ok((store, path)) => match kerchunk_scan::scan(&store, &path, &url, options).await {
                            Ok(scan) => compare(metadata, &scan.references, &arrays),
                            Err(error) => EncodingStatus::Unchecked { error: kerchunk::error_chain(&error) },
                        },
                        Err(error) => EncodingStatus::Unchecked { error },
                    };
                    TargetEncodings { url, arrays: arrays.into_iter().collect(), status }
                }
            })
            .buffer_unordered(concurrency.max(1))
            .collect(),
    );
    audited.extend(unresolved);
    let rank = |t: &TargetEncodings| match t.status {
        EncodingStatus::Differs { .. } => 0,
        EncodingStatus::Unchecked { .. } => 1,
        EncodingStatus::Agrees => 2,
    };
    audited.sort_by(|a, b| (rank(a), &a.url).cmp(&(rank(b), &b.url)));
    Ok(EncodingsAudit { targets: audited })
}

/// The set's metadata (every metadata key, inline) and, for each URL its references name as
/// written, the arrays whose chunks they take from it.
async fn walk(
    source: &dyn ReferenceSource,
    location: &str,
) -> Result<(ReferenceSet, HashMap<Option<String>, BTreeSet<String>>), MakeError> {
    let mut metadata = ReferenceSetBuilder::new();
    let mut uses: HashMap<Option<String>, BTreeSet<String>> = HashMap::new();
    let mut entries = source.walk(Walk::All);
    while let Some(entry) = entries.next().await {
        let (key, reference) =
            entry.map_err(|e| MakeError::Existing { location: location.to_owned(), reason: e.to_string() })?;
        if is_metadata_key(&key) {
            metadata.insert_reference(&key, reference.as_reference());
            continue;
        }
        let url = match reference.as_reference() {
            Reference::Range { url, .. } | Reference::Whole { url } => url.map(str::to_owned),
            _ => continue,
        };
        let array = key.rsplit_once('/').map_or("", |(array, _)| array);
        let arrays = uses.entry(url).or_default();
        if !arrays.contains(array) {
            arrays.insert(array.to_owned());
        }
    }
    Ok((metadata.build(), uses))
}

/// Each of `arrays` as the set's `metadata` and the target's own references describe it.
fn compare(metadata: &ReferenceSet, target: &ReferenceSet, arrays: &BTreeSet<String>) -> EncodingStatus {
    let (mut differences, mut absent) = (Vec::new(), Vec::new());
    for array in arrays {
        if target.get(&format!("{array}/.zarray")).is_none() {
            absent.push(array.as_str());
            continue;
        }
        let ours = decoding_attributes(metadata, array);
        let theirs = decoding_attributes(target, array);
        let names: BTreeSet<&String> = ours.keys().chain(theirs.keys()).collect();
        for name in names {
            let (set, target) = (ours.get(name), theirs.get(name));
            if set != target {
                let text = |value: Option<&serde_json::Value>| value.map_or_else(|| "null".into(), ToString::to_string);
                differences.push(EncodingDifference {
                    array: array.clone(),
                    attribute: name.clone(),
                    target: text(target),
                    set: text(set),
                });
            }
        }
    }
    match (differences.is_empty(), absent.is_empty()) {
        (false, _) => EncodingStatus::Differs { differences },
        (true, true) => EncodingStatus::Agrees,
        // Another layout of the file's arrays (a GRIB tree, say): nothing to compare with.
        (true, false) => EncodingStatus::Unchecked {
            error: format!("its own references have no array {}, which the set takes chunks of", absent.join(", ")),
        },
    }
}

impl fmt::Display for EncodingsAudit {
    /// One line per difference and per target unchecked, then the counts.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (mut differ, mut unchecked) = (0, 0);
        for target in &self.targets {
            match &target.status {
                EncodingStatus::Differs { differences } => {
                    differ += 1;
                    for d in differences {
                        writeln!(
                            f,
                            "differs: {}: {:?}: {} {} there, {} in the set",
                            target.url, d.array, d.attribute, d.target, d.set
                        )?;
                    }
                }
                EncodingStatus::Unchecked { error } => {
                    unchecked += 1;
                    writeln!(f, "unchecked: {}: {error}", target.url)?;
                }
                EncodingStatus::Agrees => {}
            }
        }
        let agree = self.targets.len() - differ - unchecked;
        writeln!(
            f,
            "{} targets: {differ} decoded otherwise than they say, {agree} as they say, {unchecked} unchecked",
            self.targets.len()
        )
    }
}
