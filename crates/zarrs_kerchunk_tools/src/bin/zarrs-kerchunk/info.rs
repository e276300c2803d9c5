//! `info`: the groups and arrays of a reference set, from their metadata.

use serde_json::{Map, Value, json};
use zarrs_kerchunk::ReferenceStore;
use zarrs_storage::ListableStorageTraits;

use crate::array::read_json;
use crate::cf;
use crate::outcome::{Outcome, Result};

/// A group or an array, as its metadata describes it.
struct Node {
    path: String,
    /// The `.zarray`, or `None` for a group.
    array: Option<Value>,
    attributes: Map<String, Value>,
}

pub(crate) fn run(store: &ReferenceStore, json: bool) -> Result {
    let nodes = nodes(store)?;
    if json {
        let nodes: Vec<Value> = nodes
            .iter()
            .map(|node| {
                let mut out =
                    json!({ "path": node.path, "kind": if node.array.is_some() { "array" } else { "group" } });
                if let Some(array) = &node.array {
                    for field in ["shape", "chunks", "dtype", "compressor", "filters", "fill_value", "order"] {
                        out[field] = array.get(field).cloned().unwrap_or(Value::Null);
                    }
                }
                out["attributes"] = Value::Object(node.attributes.clone());
                out
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&json!({ "nodes": nodes }))?);
        return Ok(Outcome::Done);
    }
    for node in &nodes {
        match &node.array {
            None => println!("{} (group)", node.path),
            Some(array) => {
                let field = |name: &str| array.get(name).map_or_else(|| "?".to_owned(), compact);
                println!(
                    "{}  {} {} chunks {} compressor {} filters {} fill {}",
                    node.path,
                    array.get("dtype").and_then(Value::as_str).unwrap_or("?"),
                    field("shape"),
                    field("chunks"),
                    codec_names(array.get("compressor")),
                    codec_names(array.get("filters")),
                    field("fill_value"),
                );
            }
        }
        for (name, value) in &node.attributes {
            println!("    {name} = {}", compact(value));
        }
        if let Some(range) = coordinate_range(store, node) {
            println!("    {range}");
        }
    }
    Ok(Outcome::Done)
}

/// For a coordinate variable (1-D, named as its dimension), its first and
/// last values decoded: dates for times, numbers in their units otherwise.
/// `None` for any other node, or one whose values cannot be read.
fn coordinate_range(store: &ReferenceStore, node: &Node) -> Option<String> {
    let dims = node.attributes.get("_ARRAY_DIMENSIONS")?.as_array()?;
    let name = node.path.rsplit('/').next()?;
    if node.array.is_none() || dims.len() != 1 || dims[0].as_str() != Some(name) {
        return None;
    }
    let variable = cf::open(store, &node.path).ok()?;
    let length = *variable.shape().first()?;
    if length == 0 {
        return None;
    }
    // The variable is its own coordinate: its values label themselves.
    let first = cf::labels(&variable, std::slice::from_ref(&(0..1))).ok()?.pop()?;
    let last = cf::labels(&variable, std::slice::from_ref(&(length - 1..length))).ok()?.pop()?;
    let what = match variable.time_units() {
        Some(units) => format!("{} calendar", units.calendar()),
        None => variable.units().unwrap_or("no units").to_owned(),
    };
    Some(format!("values: {first} .. {last} ({length}, {what})"))
}

/// Every group and array, by path, read through the store (metadata as zarrs sees it).
fn nodes(store: &ReferenceStore) -> Result<Vec<Node>> {
    let mut nodes = Vec::new();
    for key in store.list()? {
        let key = key.as_str();
        let (folder, kind) = key.rsplit_once('/').unwrap_or(("", key));
        let (array, attributes) = match kind {
            ".zarray" | ".zgroup" => {
                let attributes = read_json(store, &join(folder, ".zattrs"))?;
                (if kind == ".zarray" { read_json(store, key)? } else { None }, attributes)
            }
            // Zarr v3 (files of uneven length combined): one document a node.
            "zarr.json" => {
                let Some(node) = read_json(store, key)? else { continue };
                let array = (node["node_type"] == "array").then(|| crate::array::v2_summary(&node));
                (array, node.get("attributes").cloned())
            }
            _ => continue,
        };
        let attributes = match attributes {
            Some(Value::Object(attributes)) => attributes,
            _ => Map::new(),
        };
        nodes.push(Node { path: format!("/{folder}"), array, attributes });
    }
    nodes.sort_by(|a, b| a.path.cmp(&b.path));
    Ok(nodes)
}

fn join(folder: &str, name: &str) -> String {
    if folder.is_empty() { name.to_owned() } else { format!("{folder}/{name}") }
}

/// A codec (`{"id": "zlib", "level": 4}`) or a list of them, as `zlib(level=4)`.
fn codec_names(codecs: Option<&Value>) -> String {
    let one = |codec: &Value| {
        let id = codec.get("id").and_then(Value::as_str).unwrap_or("?");
        let parameters: Vec<String> = codec
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(name, _)| *name != "id")
            .map(|(name, value)| format!("{name}={}", compact(value)))
            .collect();
        format!("{id}({})", parameters.join(", "))
    };
    match codecs {
        None | Some(Value::Null) => "none".to_owned(),
        Some(Value::Array(list)) if list.is_empty() => "none".to_owned(),
        Some(Value::Array(list)) => list.iter().map(one).collect::<Vec<_>>().join(" "),
        Some(codec) => one(codec),
    }
}

fn compact(value: &Value) -> String {
    let text = value.to_string();
    if text.len() > 120 { format!("{}...", &text[..text.floor_char_boundary(117)]) } else { text }
}
