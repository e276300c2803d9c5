//! A variable's API on `tests/data/cf_conventions` (see `tests/data/make_cf_cases.py`):
//! coordinates by dimension and by the `coordinates` attribute, attributes as
//! xarray shows them, typed reads and selections on a latitude stored north first.

use std::sync::Arc;

use zarrs_cf::{CfError, DateTime, Selection, Variable};
use zarrs_kerchunk::ReferenceStore;

fn store() -> Arc<ReferenceStore> {
    let refs = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/data/cf_conventions/refs.json");
    Arc::new(ReferenceStore::open(refs).unwrap())
}

fn select(variable: &Variable<ReferenceStore>, text: &str) -> Result<Vec<std::ops::Range<u64>>, CfError> {
    variable.select(&[text.parse::<Selection>()?])
}

#[test]
fn coordinates_and_attributes() {
    let tas = Variable::open(store(), "/tas").unwrap();
    assert_eq!(tas.dims(), ["time", "lat", "lon"]);
    assert_eq!(tas.coordinate(1).unwrap().path(), "/lat");
    assert_eq!(tas.coordinate_names(), ["height"]);
    let height = tas.auxiliary_coordinates();
    assert_eq!(height.len(), 1);
    assert_eq!(height[0].read(&[]).unwrap().into_raw_vec_and_offset().0, [2.0]);
    assert_eq!(height[0].units(), Some("m"));
    // What xarray moves to `encoding` is not among the decoded attributes.
    let decoded = tas.decoded_attributes();
    assert_eq!(decoded.keys().collect::<Vec<_>>(), ["units"], "{decoded:?}");
    assert!(tas.attributes().contains_key("scale_factor"));
    let time = tas.coordinate(0).unwrap();
    assert!(time.decoded_attributes().is_empty(), "{:?}", time.decoded_attributes());
    // A dimension without a variable of its name has no coordinate.
    let t360 = Variable::open(store(), "/t_day360").unwrap();
    assert!(t360.coordinate(0).is_none());
    let err = select(&t360, "n_day360=0").unwrap_err().to_string();
    assert!(err.contains("no coordinate variable"), "{err}");
}

#[test]
fn typed_reads() {
    let ranged = Variable::open(store(), "/ranged").unwrap();
    let single = ranged.read_f32(&[0..4, 0..5]).unwrap();
    let double = ranged.read(&[0..4, 0..5]).unwrap();
    assert!(
        single.iter().zip(&double).all(|(s, d)| f64::from(*s).to_bits() == d.to_bits() || s.is_nan() && d.is_nan())
    );
    let tas = Variable::open(store(), "/tas").unwrap();
    let err = tas.read_f32(&[0..1, 0..1, 0..1]).unwrap_err();
    assert!(matches!(&err, CfError::Type { decoded, .. } if decoded == "float64"), "{err}");
    let ubyte = Variable::open(store(), "/ubyte").unwrap();
    assert!(ubyte.read_f32(&[0..4, 0..5]).is_ok(), "bytes with a fill value decode to float32");
}

/// The latitude runs 60, 50, 40, 30: ranges are given either way round, and
/// the nearest value and exact values are found whatever the order.
#[test]
fn selections_on_a_descending_coordinate() {
    let tas = Variable::open(store(), "/tas").unwrap();
    assert_eq!(select(&tas, "lat=40:60").unwrap()[1], 0..3);
    assert_eq!(select(&tas, "lat=60:40").unwrap()[1], 0..3);
    assert_eq!(select(&tas, "lat=:45").unwrap()[1], 2..4);
    assert_eq!(select(&tas, "lat~44").unwrap()[1], 2..3);
    assert_eq!(select(&tas, "lat=30").unwrap()[1], 3..4);
    assert_eq!(select(&tas, "time=2012-01-01T06").unwrap()[0], 1..2);
    assert_eq!(select(&tas, "time=2012").unwrap()[0], 0..3);
    // A range of dates either way round: each end's whole period.
    assert_eq!(select(&tas, "time=2012-01-01T06:2012-01-01T12").unwrap()[0], 1..3);
    assert_eq!(select(&tas, "time=2012-01-01T12:2012-01-01T06").unwrap()[0], 1..3);
    assert_eq!(select(&tas, "time=2012-01-01:2011-12-31").unwrap()[0], 0..3);
    let err = select(&tas, "lat=45").unwrap_err().to_string();
    assert!(err.contains("no lat is 45") && err.contains("lat~45"), "{err}");
    let err = select(&tas, "lat=70:80").unwrap_err().to_string();
    assert!(err.contains("no lat lies in it"), "{err}");
    let err = select(&tas, "time=never").unwrap_err().to_string();
    assert!(err.contains("not a date"), "{err}");
}

/// Time units that cannot be decoded leave the values numbers, and say why.
#[test]
#[expect(clippy::single_range_in_vec_init, reason = "a one-dimensional region")]
fn undecodable_time_units_leave_numbers() {
    let mut set = zarrs_kerchunk::kerchunk::ReferenceSetBuilder::new();
    let zarray = r#"{"shape":[2],"chunks":[2],"dtype":"<f8","fill_value":null,"order":"C","filters":null,"compressor":null,"zarr_format":2}"#;
    set.insert_inline("m/.zarray", zarray.as_bytes());
    set.insert_inline("m/.zattrs", br#"{"_ARRAY_DIMENSIONS":["m"],"units":"months since 2000-01-01"}"#);
    set.insert_inline("m/0", &[1.0f64, 2.0].iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>());
    let store = Arc::new(zarrs_kerchunk::ReferenceStoreBuilder::new().build(set.build(), "refs.json").unwrap());
    let months = Variable::open(store, "/m").unwrap();
    assert!(months.time_units().is_none());
    assert!(months.time_problem().unwrap().contains("\"months\""), "{:?}", months.time_problem());
    assert_eq!(months.read(&[0..2]).unwrap().into_raw_vec_and_offset().0, [1.0, 2.0]);
    let err = months.read_times(&[0..2]).unwrap_err().to_string();
    assert!(err.contains("/m: attribute \"units\"") && err.contains("months"), "{err}");
}

/// A coordinate's `bounds` without units of its own are dates in the
/// coordinate's units and calendar, as xarray's `decode_cf` reads them (it
/// gives them the coordinate's); a variable that is no coordinate's bounds stays numbers.
#[test]
fn bounds_take_their_coordinates_time_units() {
    let mut set = zarrs_kerchunk::kerchunk::ReferenceSetBuilder::new();
    let zarray = |shape: &str| {
        format!(
            r#"{{"shape":{shape},"chunks":{shape},"dtype":"<f8","fill_value":null,"order":"C","filters":null,"compressor":null,"zarr_format":2}}"#
        )
    };
    let bytes = |values: &[f64]| values.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>();
    set.insert_inline("time/.zarray", zarray("[1]").as_bytes());
    set.insert_inline(
        "time/.zattrs",
        br#"{"_ARRAY_DIMENSIONS":["time"],"units":"hours since 2020-01-01","calendar":"noleap","bounds":"time_bnds"}"#,
    );
    set.insert_inline("time/0", &bytes(&[1428.0]));
    for name in ["time_bnds", "other"] {
        set.insert_inline(&format!("{name}/.zarray"), zarray("[1,2]").as_bytes());
        set.insert_inline(&format!("{name}/.zattrs"), br#"{"_ARRAY_DIMENSIONS":["time","nv"]}"#);
        set.insert_inline(&format!("{name}/0.0"), &bytes(&[1416.0, 1440.0]));
    }
    let store = Arc::new(zarrs_kerchunk::ReferenceStoreBuilder::new().build(set.build(), "refs.json").unwrap());
    let bounds = Variable::open(Arc::clone(&store), "/time_bnds").unwrap();
    let times = bounds.read_times(&[0..1, 0..2]).unwrap().into_raw_vec_and_offset().0;
    // 1416 h after 2020-01-01 in a calendar of 365-day years (59 days to 03-01): 03-01; 1440 h: 03-02.
    let expected = [Some(DateTime::date(2020, 3, 1)), Some(DateTime::date(2020, 3, 2))];
    assert_eq!(times, expected);
    assert_eq!(bounds.time_units().map(|units| units.calendar().name()), Some("noleap"));
    let other = Variable::open(store, "/other").unwrap();
    assert!(other.time_units().is_none());
}
