//! GDAL's private tags: `GDAL_METADATA` (XML items) and `GDAL_NODATA`.

use quick_xml::events::Event;
use serde_json::{Map, Value};

use crate::error::ScanError;
use crate::read::BlockReader;

/// What starts GDAL's structural metadata, right after the TIFF header.
const STRUCTURAL: &[u8] = b"GDAL_STRUCTURAL_METADATA_SIZE=";

/// GDAL's structural metadata (`LAYOUT=IFDS_BEFORE_DATA`, `BLOCK_ORDER`...,
/// which a COG carries after its header) as attributes, as tifffile reads
/// it; empty where the file has none.
pub(crate) async fn structural(reader: &mut BlockReader<'_>, big_tiff: bool) -> Result<Map<String, Value>, ScanError> {
    let at = if big_tiff { 16 } else { 8 };
    let size = reader.size();
    if size < at + 43 {
        return Ok(Map::new());
    }
    let head = reader.read(at..at + 43).await?;
    let Some(digits) = head.strip_prefix(STRUCTURAL) else { return Ok(Map::new()) };
    let Some(length) = std::str::from_utf8(&digits[..6]).ok().and_then(|d| d.parse::<u64>().ok()) else {
        return Ok(Map::new());
    };
    let end = (at + 43 + length).min(size);
    let lines = reader.read(at + 43..end).await?;
    Ok(String::from_utf8_lossy(&lines)
        .lines()
        .filter_map(|line| line.split_once('='))
        .map(|(key, value)| (key.trim().to_owned(), Value::String(value.trim().to_owned())))
        .collect())
}

/// One `<Item>` of `GDAL_METADATA`.
#[derive(Debug, PartialEq)]
pub(crate) struct Item {
    pub(crate) name: String,
    /// The band it belongs to (0 first), `None` for the dataset's.
    pub(crate) sample: Option<u64>,
    /// `offset`, `scale`, `description`...; `None` for a plain item.
    pub(crate) role: Option<String>,
    pub(crate) value: String,
}

/// The items of a `GDAL_METADATA` document, in order; what is not
/// well-formed XML ends the list where it starts (the tag is metadata: a
/// damaged one loses its attributes, not the scan).
pub(crate) fn items(xml: &str) -> Vec<Item> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut items = Vec::new();
    let mut open: Option<Item> = None;
    loop {
        match reader.read_event() {
            Ok(Event::Start(start)) if start.name().as_ref() == b"Item" => {
                let attribute = |key: &str| {
                    start.try_get_attribute(key).ok().flatten().and_then(|a| {
                        a.normalized_value(quick_xml::XmlVersion::Implicit1_0).ok().map(std::borrow::Cow::into_owned)
                    })
                };
                open = Some(Item {
                    name: attribute("name").unwrap_or_default(),
                    sample: attribute("sample").and_then(|s| s.parse().ok()),
                    role: attribute("role"),
                    value: String::new(),
                });
            }
            Ok(Event::Text(text)) => {
                if let (Some(item), Ok(text)) = (open.as_mut(), text.decode()) {
                    item.value.push_str(&text);
                }
            }
            Ok(Event::GeneralRef(reference)) => {
                if let Some(item) = open.as_mut() {
                    let named = reference.decode().ok().and_then(|n| quick_xml::escape::resolve_xml_entity(&n));
                    match (named, reference.resolve_char_ref()) {
                        (Some(text), _) => item.value.push_str(text),
                        (None, Ok(Some(c))) => item.value.push(c),
                        _ => {}
                    }
                }
            }
            Ok(Event::End(end)) if end.name().as_ref() == b"Item" => {
                // GDAL escapes a value before its XML writer escapes it again (`&amp;amp;`), and
                // unescapes it twice when it reads: so do we (kerchunk keeps `&amp;`).
                items.extend(open.take().map(|mut item| {
                    if let Ok(text) = quick_xml::escape::unescape(&item.value) {
                        item.value = text.into_owned();
                    }
                    item
                }));
            }
            Ok(Event::Eof) | Err(_) => return items,
            Ok(_) => {}
        }
    }
}

/// The dataset's items (no band, no role) as attributes, named as GDAL
/// names them (kerchunk's flattening, but for the bands' items, which it
/// lets overwrite one another).
pub(crate) fn dataset_attributes(items: &[Item]) -> Map<String, Value> {
    items
        .iter()
        .filter(|i| i.sample.is_none() && i.role.is_none())
        .map(|i| (i.name.clone(), Value::String(i.value.clone())))
        .collect()
}

/// The bands' items (those with a `sample`) as attributes of the data
/// array: one value where every band of `bands` has the same, else a list
/// with one per band (null where a band has none); kerchunk keeps only the
/// last band's. A scale and an offset the bands share are CF's
/// `scale_factor` and `add_offset` as well, as rioxarray writes them.
pub(crate) fn band_attributes(items: &[Item], bands: u64) -> Map<String, Value> {
    let bands = usize::try_from(bands).unwrap_or(usize::MAX);
    let mut by_name: Vec<(&str, Vec<Value>)> = Vec::new();
    for item in items {
        let Some(band) = item.sample.and_then(|s| usize::try_from(s).ok()).filter(|&b| b < bands) else { continue };
        let at = if let Some(at) = by_name.iter().position(|(name, _)| *name == item.name) {
            at
        } else {
            by_name.push((&item.name, vec![Value::Null; bands.min(1 << 16)]));
            by_name.len() - 1
        };
        if let Some(slot) = by_name[at].1.get_mut(band) {
            *slot = Value::String(item.value.clone());
        }
    }
    let mut attributes = Map::new();
    for (name, values) in by_name {
        let shared = values.iter().all(|v| *v == values[0]) && !values[0].is_null();
        let value = if shared { values[0].clone() } else { Value::Array(values) };
        let cf = match items.iter().find(|i| i.name == name).and_then(|i| i.role.as_deref()) {
            Some("scale") => Some("scale_factor"),
            Some("offset") => Some("add_offset"),
            _ => None,
        };
        if let (Some(cf), Value::String(text)) = (cf, &value)
            && let Ok(number) = text.trim().parse::<f64>()
        {
            attributes.insert(cf.into(), Value::from(number));
        }
        attributes.insert(name.to_owned(), value);
    }
    attributes
}

/// The nodata value of `GDAL_NODATA` (text, as GDAL writes it: `-9999`,
/// `nan`, `inf`), if it is a number.
pub(crate) fn nodata(text: &str) -> Option<f64> {
    let text = text.trim().trim_end_matches('\0');
    match text.to_ascii_lowercase().as_str() {
        "nan" | "-nan" => Some(f64::NAN),
        "inf" | "+inf" | "infinity" => Some(f64::INFINITY),
        "-inf" | "-infinity" => Some(f64::NEG_INFINITY),
        _ => text.parse().ok(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn items_with_their_band_role_and_escapes() {
        let xml = r#"<GDALMetadata>
  <Item name="AREA_OR_POINT">Area</Item>
  <Item name="DESCRIPTION" sample="0" role="description">a &amp;amp; b &#x41; &amp;lt;1&amp;gt;</Item>
  <Item name="SCALE" sample="1" role="scale">0.5</Item>
</GDALMetadata>"#;
        let read = items(xml);
        assert_eq!(read.len(), 3);
        assert_eq!(
            read[1],
            Item {
                name: "DESCRIPTION".into(),
                sample: Some(0),
                role: Some("description".into()),
                value: "a & b A <1>".into()
            }
        );
        assert_eq!(dataset_attributes(&read).get("AREA_OR_POINT"), Some(&Value::String("Area".into())));
        assert_eq!(dataset_attributes(&read).len(), 1);
        assert!(items("<GDALMetadata><Item name=").is_empty());
    }

    #[test]
    fn nodata_as_gdal_writes_it() {
        assert_eq!(nodata("-9999"), Some(-9999.0));
        assert!(nodata("nan").is_some_and(f64::is_nan));
        assert_eq!(nodata("-inf\0"), Some(f64::NEG_INFINITY));
        assert_eq!(nodata("none"), None);
    }
}
