use super::*;
use crate::model::{Reference, ReferenceSource as _};

fn parse(doc: &str) -> Result<ReferenceSet, ParseError> {
    ReferenceSet::from_json(doc.as_bytes(), &ParseOptions::default())
}

/// Options that refuse a document with a malformed reference.
fn refusing() -> ParseOptions {
    ParseOptions::default().with_malformed_references(MalformedReferences::Refuse)
}

/// The same keys with the same meaning (URLs compared as text).
fn assert_same(a: &ReferenceSet, b: &ReferenceSet) {
    let show = |set: &ReferenceSet| -> Vec<String> {
        set.iter()
            .map(|(k, r)| match r {
                Reference::Inline(v) => format!("{k} inline {v:?}"),
                Reference::Whole { url } => format!("{k} whole {url:?}"),
                Reference::Range { url, offset, length } => format!("{k} {url:?} {offset} {length}"),
                Reference::Malformed { reason } => format!("{k} malformed {reason}"),
            })
            .collect()
    };
    assert_eq!(show(a), show(b));
}

const SPEC_V1: &str = r#"{
    "version": 1,
    "templates": {"u": "server.domain/path", "f": "{{c}}"},
    "gen": [{"key": "gen_key{{i}}", "url": "http://{{u}}_{{i}}", "offset": "{{(i + 1) * 1000}}",
             "length": "1000", "dimensions": {"i": {"stop": 5}}}],
    "refs": {"key0": "data", "key1": ["http://target_url", 10000, 100],
             "key2": ["http://{{u}}", 10000, 100], "key3": ["http://{{f(c='text')}}", 10000, 100]}
}"#;

const SPEC_V0: &str = r#"{
    "key0": "data",
    "key1": ["http://target_url", 10000, 100],
    "key2": ["http://server.domain/path", 10000, 100],
    "key3": ["http://text", 10000, 100],
    "gen_key0": ["http://server.domain/path_0", 1000, 1000],
    "gen_key1": ["http://server.domain/path_1", 2000, 1000],
    "gen_key2": ["http://server.domain/path_2", 3000, 1000],
    "gen_key3": ["http://server.domain/path_3", 4000, 1000],
    "gen_key4": ["http://server.domain/path_4", 5000, 1000]
}"#;

#[test]
fn spec_version_1_example_expands_to_its_version_0_equivalent() {
    assert_same(&parse(SPEC_V1).unwrap(), &parse(SPEC_V0).unwrap());
}

#[test]
fn values() {
    let set = parse(
        r#"{"a": "text", "b": "base64:AAEC", "c": {"x": [1, 2]}, "d": ["u"], "e": [null, 1, 2], "f": "\u0000\"",
            "g": "base64:AAE", "h": "βeta"}"#,
    )
    .unwrap();
    assert_eq!(set.get("a"), Some(Reference::Inline(b"text")));
    assert_eq!(set.get("b"), Some(Reference::Inline(&[0, 1, 2])));
    assert_eq!(set.get("c"), Some(Reference::Inline(br#"{"x":[1,2]}"#)));
    assert!(matches!(set.get("d"), Some(Reference::Whole { url: Some("u") })));
    assert!(matches!(set.get("e"), Some(Reference::Range { url: None, offset: 1, length: 2 })));
    assert_eq!(set.get("f"), Some(Reference::Inline(b"\0\"")));
    assert_eq!(set.get("g"), Some(Reference::Inline(&[0, 1])), "padding is optional");
    assert_eq!(set.get("h"), Some(Reference::Inline("βeta".as_bytes())), "strings are UTF-8");
}

#[test]
fn version_0_does_not_template() {
    let set = parse(r#"{"templates": "x", "a": ["{{u}}"]}"#).unwrap();
    assert!(matches!(set.get("a"), Some(Reference::Whole { url: Some("{{u}}") })));
}

#[test]
fn version_handling() {
    assert!(parse(r#"{"version": 1.0, "refs": {"a": "b"}}"#).unwrap().get("a").is_some());
    assert!(parse(r#"{"version": 1}"#).unwrap().is_empty());
    for bad in [r#"{"version": 2}"#, r#"{"version": "1"}"#, r#"{"version": null}"#] {
        let err = parse(bad).unwrap_err();
        assert!(matches!(err, ParseError::UnsupportedVersion(_)), "{bad}: {err}");
    }
}

#[test]
fn malformed_references_name_the_key() {
    for (doc, needle) in [
        (r#"{"k": ["u", 1]}"#, "not 2"),
        (r#"{"k": ["u", 1, 2, 3]}"#, "not 4"),
        (r#"{"k": []}"#, "empty"),
        (r#"{"k": ["u", -1, 2]}"#, "offset"),
        (r#"{"k": ["u", 1, -2]}"#, "length"),
        (r#"{"k": ["u", 1.5, 2]}"#, "offset"),
        (r#"{"k": ["u", 1, 2.0]}"#, "length"),
        (r#"{"k": ["u", "1", 2]}"#, "offset"),
        (r#"{"k": ["u", 18446744073709551615, 2]}"#, "overflows"),
        (r#"{"k": [1, 2, 3]}"#, "URL"),
        (r#"{"k": "base64:_"}"#, "base64"),
        (r#"{"k": "base64:AA=A"}"#, "base64"),
        (r#"{"k": null}"#, "null"),
        (r#"{"k": 3}"#, "number"),
        (r#"{"k": true}"#, "boolean"),
        (r#"{"version": 1, "refs": {"k": ["u", -1, 2]}}"#, "offset"),
        (r#"{"version": 1, "templates": {"t": "u"}, "refs": {"k": ["{{t}}", 1, -2]}}"#, "length"),
        (r#"{"refs": "v0 name", "k": ["u", 1]}"#, "not 2"),
    ] {
        // Refused: the whole document fails, naming the key.
        let err = ReferenceSet::from_json(doc.as_bytes(), &refusing()).unwrap_err();
        let text = err.to_string();
        assert!(matches!(err, ParseError::InvalidReference { ref key, .. } if key == "k"), "{doc}: {text}");
        assert!(text.contains(needle), "{doc}: {text}");
        // By default the key is kept, malformed, and a good key beside it reads as usual,
        // whichever reader reads the document and wherever the key stands in it.
        // (A version 1 document ignores a top-level "good".)
        let last = doc.rfind('}').unwrap();
        for doc in
            [doc.replacen('{', r#"{"good": ["f", 0, 1], "#, 1), format!(r#"{}, "good": ["f", 0, 1]}}"#, &doc[..last])]
        {
            let whole = parse(&doc).unwrap();
            let Some(Reference::Malformed { reason }) = whole.get("k") else { panic!("{doc}: {:?}", whole.get("k")) };
            assert!(reason.contains(needle), "{doc}: {reason}");
            assert_eq!(whole.malformed().map(|(k, _)| k.into_owned()).collect::<Vec<_>>(), ["k"]);
            if !doc.contains("\"version\"") {
                assert_eq!(whole.get("good"), Some(Reference::Range { url: Some("f"), offset: 0, length: 1 }));
            }
            for block in [1, 7, 4096] {
                let streamed =
                    ReferenceSet::from_json_blocks(doc.as_bytes(), &ParseOptions::default(), "(test)", block).unwrap();
                assert_same(&streamed, &whole);
            }
        }
    }
}

/// `gen` follows the same policy: a generated offset that is no integer makes its key malformed.
#[test]
fn malformed_generated_references_fail_their_keys() {
    let doc = br#"{"version": 1, "gen": [{"key": "a/{{i}}", "url": "u", "offset": "{{ 'x' if i == 1 else i }}",
        "length": "{{ 18446744073709551615 if i == 2 else 1 }}", "dimensions": {"i": {"stop": 4}}}]}"#;
    let set = ReferenceSet::from_json(doc, &ParseOptions::default()).unwrap();
    assert_eq!(set.get("a/0"), Some(Reference::Range { url: Some("u"), offset: 0, length: 1 }));
    assert_eq!(set.get("a/3"), Some(Reference::Range { url: Some("u"), offset: 3, length: 1 }));
    let malformed: Vec<(String, String)> = set.malformed().map(|(k, r)| (k.into_owned(), r.to_owned())).collect();
    assert_eq!(malformed.len(), 2, "{malformed:?}");
    assert!(malformed[0].0 == "a/1" && malformed[0].1.contains("generated offset \"x\""), "{malformed:?}");
    assert!(malformed[1].0 == "a/2" && malformed[1].1.contains("overflows"), "{malformed:?}");
    let err = ReferenceSet::from_json(doc, &refusing()).unwrap_err();
    assert!(matches!(err, ParseError::InvalidReference { ref key, .. } if key == "a/1"), "{err}");
}

#[test]
fn bare_non_finite_tokens_are_accepted() {
    let set = parse(r#"{"x/.zarray": {"fill_value": NaN, "v": -Infinity}, "x/.zattrs": "{\"a\": NaN}"}"#).unwrap();
    assert_eq!(set.get("x/.zarray"), Some(Reference::Inline(br#"{"fill_value":"NaN","v":"-Infinity"}"#)));
    // Inside a string the token is left for the metadata layer.
    assert_eq!(set.get("x/.zattrs"), Some(Reference::Inline(br#"{"a": NaN}"#)));
}

#[test]
fn the_streamed_reader_reads_bare_non_finite_tokens_as_the_whole_document_reader_does() {
    for doc in [
        r#"{"x/.zarray": {"fill_value": NaN, "v": -Infinity}, "x/.zattrs": "{\"a\": NaN}", "x/0": ["f", 0, 1]}"#,
        r#"{"version": 1, "refs": {"x/.zarray": {"fill_value": Infinity}, "x/0": ["f", 0, 1]}}"#,
    ] {
        let whole = parse(doc).unwrap();
        for block in [1, 7, 4096] {
            let streamed = ReferenceSet::from_json_blocks(doc.as_bytes(), &ParseOptions::default(), "(test)", block);
            assert_same(&streamed.unwrap(), &whole);
        }
    }
    // Text that is not JSON for another reason is still an error.
    let err = ReferenceSet::from_json_blocks(
        &br#"{"x/.zarray": {"fill_value": NaX}}"#[..],
        &ParseOptions::default(),
        "(test)",
        7,
    );
    assert!(err.is_err_and(|e| e.is_not_json()));
}

#[test]
fn invalid_json_reports_position() {
    let err = parse("{\"a\": [1,\n 2").unwrap_err().to_string();
    assert!(err.contains("line 2"), "{err}");
    assert!(parse("[1, 2]").unwrap_err().to_string().contains("object"));
}

#[test]
fn templates_only_in_version_1_urls() {
    let set =
        parse(r#"{"version": 1, "templates": {"u": "s3://b/f"}, "refs": {"a": "{{u}}", "b": ["{{ u }}", 0, 1]}}"#)
            .unwrap();
    assert_eq!(set.get("a"), Some(Reference::Inline(b"{{u}}")));
    assert!(matches!(set.get("b"), Some(Reference::Range { url: Some("s3://b/f"), .. })));
    let err = parse(r#"{"version": 1, "templates": {"u": "x"}, "refs": {"k": ["{{v}}"]}}"#).unwrap_err();
    assert!(err.to_string().contains("\"k\""), "{err}");
}

#[test]
fn template_overrides() {
    let options = ParseOptions::default().with_template_override("root", "/abs");
    let doc = br#"{"version": 1, "templates": {"root": "."}, "refs": {"a": ["{{root}}/data.nc"]}}"#;
    let set = ReferenceSet::from_json(doc, &options).unwrap();
    assert!(matches!(set.get("a"), Some(Reference::Whole { url: Some("/abs/data.nc") })));
}

#[test]
fn gen_product_order_and_url_only() {
    let set = parse(
        r#"{"version": 1, "templates": {"u": "f"}, "gen": [
            {"key": "a/{{i}}.{{j}}", "url": "{{u}}{{i}}", "offset": "{{ i * 10 + j }}", "length": "1",
             "dimensions": {"i": [3, 1], "j": {"start": 4, "stop": 0, "step": -2}}},
            {"key": "w/{{n}}", "url": "x{{n}}", "dimensions": {"n": {"start": 1, "stop": 3}}}],
          "refs": {"a/3.4": "replaced by gen"}}"#,
    )
    .unwrap();
    let keys: Vec<_> = set.iter().map(|(k, _)| k.into_owned()).collect();
    assert_eq!(keys, ["a/1.2", "a/1.4", "a/3.2", "a/3.4", "w/1", "w/2"]);
    assert!(matches!(set.get("a/3.4"), Some(Reference::Range { url: Some("f3"), offset: 34, length: 1 })));
    assert!(matches!(set.get("w/2"), Some(Reference::Whole { url: Some("x2") })));
}

#[test]
fn gen_ranges_at_the_ends_of_i64_do_not_overflow() {
    // start + step * i past i64::MAX for the step alone: 3 * 2^62. The values are exact.
    let set = parse(&format!(
        r#"{{"version": 1, "gen": [{{"key": "k/{{{{i}}}}", "url": "u{{{{i}}}}", "dimensions":
            {{"i": {{"start": {}, "stop": {}, "step": {}}}}}}}]}}"#,
        i64::MIN,
        i64::MAX,
        1_i64 << 62
    ))
    .unwrap();
    let keys: Vec<_> = set.iter().map(|(k, _)| k.into_owned()).collect();
    let expected: Vec<String> = (0..4).map(|i| format!("k/{}", i128::from(i64::MIN) + i * (1_i128 << 62))).collect();
    let mut expected_sorted = expected.clone();
    expected_sorted.sort();
    assert_eq!(keys, expected_sorted);
    // Rendered through minijinja too (a filter is not native), with the same values.
    let set = parse(&format!(
        r#"{{"version": 1, "gen": [{{"key": "j/{{{{i|string}}}}", "url": "u", "dimensions":
            {{"i": {{"start": {}, "stop": {}, "step": {}}}}}}}]}}"#,
        i64::MAX,
        i64::MIN,
        -(1_i64 << 62)
    ))
    .unwrap();
    assert_eq!(set.len(), 4);
    assert!(set.get(&format!("j/{}", i128::from(i64::MAX) - 3 * (1_i128 << 62))).is_some());
}

#[test]
fn gen_errors() {
    for (gen_entry, needle) in [
        (r#"{"key": "k{{i}}", "url": "u", "offset": "1", "dimensions": {"i": [1]}}"#, "both"),
        (r#"{"key": "k{{i}}", "url": "u", "length": "1", "dimensions": {"i": [1]}}"#, "both"),
        (r#"{"key": "k{{i}}", "url": "u", "dimensions": {}}"#, "at least one"),
        (r#"{"key": "k{{i}}", "url": "u", "dimensions": {"i": {"start": 1}}}"#, "stop"),
        (r#"{"key": "k{{i}}", "url": "u", "dimensions": {"i": {"stop": 3, "step": 0}}}"#, "zero"),
        (
            r#"{"key": "k{{i}}", "url": "u", "offset": "{{i - 5}}", "length": "1", "dimensions": {"i": [1]}}"#,
            "non-negative",
        ),
        (
            r#"{"key": "k{{i}}", "url": "u", "offset": "{{ 1 / 0 }}", "length": "1", "dimensions": {"i": [1]}}"#,
            "gen[0].offset",
        ),
        (r#"{"key": "k{{nope}}", "url": "u", "dimensions": {"i": [1]}}"#, "undefined"),
        (r#"{"key": "k{{u}}", "url": "u", "dimensions": {"u": [1]}}"#, "same name as a template"),
        (r#"{"url": "u", "dimensions": {"i": [1]}}"#, "missing \"key\""),
        (r#"{"key": "k{{i}}", "url": "u", "dimensions": {"i": {"stop": 1000000000000}}}"#, "limit"),
    ] {
        let doc = format!(r#"{{"version": 1, "templates": {{"u": "x"}}, "gen": [{gen_entry}]}}"#);
        // A generated offset that is no integer is a malformed reference, which only the
        // refusing policy makes an error (see `malformed_generated_references_fail_their_keys`).
        let options = if needle == "non-negative" { refusing() } else { ParseOptions::default() };
        let err = ReferenceSet::from_json(doc.as_bytes(), &options).unwrap_err().to_string();
        assert!(err.contains(needle), "{gen_entry}: {err}");
    }
}

#[test]
fn gen_limit_is_configurable() {
    let doc = br#"{"version": 1, "gen": [{"key": "k{{i}}", "url": "u", "dimensions": {"i": {"stop": 11}}}]}"#;
    let options = ParseOptions::default().with_max_generated_references(10);
    assert!(ReferenceSet::from_json(doc, &options).unwrap_err().to_string().contains("limit of 10"));
    let options = ParseOptions::default().with_max_generated_references(11);
    assert_eq!(ReferenceSet::from_json(doc, &options).unwrap().len(), 11, "the limit itself is allowed");
}

/// The text templates render counts against one budget for the whole document.
#[test]
fn generated_text_is_bounded_per_document() {
    // 10 references, each a 2-byte key ("k0".."k9") and a 100-byte URL: 1020 bytes.
    let url = "u".repeat(100);
    let doc = format!(
        r#"{{"version": 1, "gen": [{{"key": "k{{{{i}}}}", "url": "{url}", "dimensions": {{"i": {{"stop": 10}}}}}}]}}"#
    );
    let limits = |bytes| ParseOptions::default().with_limits(Limits::default().with_max_generated_bytes(bytes));
    assert_eq!(ReferenceSet::from_json(doc.as_bytes(), &limits(1020)).unwrap().len(), 10);
    let err = ReferenceSet::from_json(doc.as_bytes(), &limits(1019)).unwrap_err().to_string();
    assert!(err.contains("1019 bytes of rendered text"), "{err}");
}

/// Template work is one budget for the whole document: a function template
/// called from every reference, each call within the per-render cap, still
/// stops once the document's budget is spent.
#[test]
fn template_work_is_bounded_per_document() {
    let doc = br#"{"version": 1,
        "templates": {"f": "{% for i in range(200) %}{% endfor %}{{c}}"},
        "refs": {"a": ["{{f(c='x')}}"], "b": ["{{f(c='y')}}"], "c": ["{{f(c='z')}}"]}}"#;
    let fuel = |budget| ParseOptions::default().with_limits(Limits::default().with_max_template_fuel(budget));
    assert_eq!(ReferenceSet::from_json(doc, &ParseOptions::default()).unwrap().len(), 3);
    // Measure what the three renders use, then allow exactly that, and one unit less.
    let mut used = 0;
    while ReferenceSet::from_json(doc, &fuel(used)).is_err() {
        used += 100;
    }
    let exact = (used.saturating_sub(100)..=used).find(|&b| ReferenceSet::from_json(doc, &fuel(b)).is_ok()).unwrap();
    assert!(exact > 3 * 200, "three renders of a 200-step loop: {exact}");
    let err = ReferenceSet::from_json(doc, &fuel(exact - 1)).unwrap_err().to_string();
    assert!(err.contains("units of work") && err.contains("with_max_template_fuel"), "{err}");
}

/// A template cheap to write and to fuel but expensive to render: the
/// document's rendering time bounds what every render of it costs in all.
#[test]
fn template_time_is_bounded_per_document() {
    let doc = br#"{"version": 1, "gen": [{"key": "k{{i}}{{ range(100000)|sum }}", "url": "u",
        "dimensions": {"i": {"stop": 10000000}}}]}"#;
    let limits = Limits::default().with_max_template_time(std::time::Duration::from_millis(50));
    let err = ReferenceSet::from_json(doc, &ParseOptions::default().with_limits(limits)).unwrap_err().to_string();
    assert!(err.contains("milliseconds of rendering") && err.contains("with_max_template_time"), "{err}");
    // Within the time, the same template renders.
    let doc =
        br#"{"version": 1, "gen": [{"key": "k{{i}}{{ range(100)|sum }}", "url": "u", "dimensions": {"i": [1, 2]}}]}"#;
    assert_eq!(ReferenceSet::from_json(doc, &ParseOptions::default()).unwrap().len(), 2);
}

/// With the defaults, a few bytes of `gen` cost at most 10^7 references and
/// 1 GiB of rendered text: a document that asks for more is refused once it passes them.
#[test]
fn gen_amplification_is_bounded_by_default() {
    let doc = br#"{"version": 1, "gen": [{"key": "k{{i}}", "url": "u", "dimensions": {"i": {"stop": 10000001}}}]}"#;
    let err = ReferenceSet::from_json(doc, &ParseOptions::default()).unwrap_err().to_string();
    assert!(err.contains("10000000") && err.contains("with_max_generated_references"), "{err}");
    // 125 bytes asking for 20 000 distinct URLs of 60 KB each (1.2 GB, all kept: URLs are
    // stored once each): refused at 1 GiB.
    let doc = br#"{"version": 1, "gen": [{"key": "k{{i}}", "url": "{{ 'u' * 60000 }}{{i}}", "dimensions": {"i": {"stop": 20000}}}]}"#;
    let err = ReferenceSet::from_json(doc, &ParseOptions::default()).unwrap_err().to_string();
    assert!(err.contains("1073741824 bytes of rendered text"), "{err}");
}

#[test]
fn gen_keys_are_bounded_in_length() {
    // 108 bytes of document for 20 000 keys of 60 KB each, 1.1 GiB, before the limit.
    let doc = br#"{"version": 1, "gen": [{"key": "{{ 'k' * 60000 }}{{i}}", "url": "u", "dimensions": {"i": {"stop": 20000}}}]}"#;
    let err = ReferenceSet::from_json(doc, &ParseOptions::default()).unwrap_err().to_string();
    assert!(err.contains("gen[0] renders a key of 60001 bytes") && err.contains("with_max_key_bytes"), "{err}");
    let limits = Limits::default().with_max_key_bytes(70_000);
    let doc = br#"{"version": 1, "gen": [{"key": "{{ 'k' * 60000 }}{{i}}", "url": "u", "dimensions": {"i": [1, 2]}}]}"#;
    assert_eq!(ReferenceSet::from_json(doc, &ParseOptions::default().with_limits(limits)).unwrap().len(), 2);
}

#[test]
fn gen_literal_integers() {
    let set = parse(
        r#"{"version": 1, "gen": [{"key": "k{{i}}", "url": "u", "offset": 5, "length": "{{i}}", "dimensions": {"i": [2]}}]}"#,
    )
    .unwrap();
    assert!(matches!(set.get("k2"), Some(Reference::Range { offset: 5, length: 2, .. })));
}

#[test]
fn gen_renders_natively_what_jinja_would() {
    // Arithmetic, negative steps, a string list and a float list (the float one goes through jinja).
    let doc = r#"{"version": 1, "templates": {"u": "/d"}, "gen": [{
        "key": "a/{{i}}.{{s}}", "url": "{{u}}/f{{(i * 3) // 2 % 4}}-{{s}}.bin",
        "offset": "{{ (i - 10) * -2 }}", "length": "{{i % 3 + 1}}",
        "dimensions": {"i": {"start": 9, "stop": 3, "step": -3}, "s": ["x", "y"]}},
        {"key": "b/{{f}}", "url": "u{{f}}", "dimensions": {"f": [1.5, 2.0]}}]}"#;
    let set = ReferenceSet::from_json(doc.as_bytes(), &ParseOptions::default()).unwrap();
    let got: Vec<String> = set.iter().map(|(k, r)| format!("{k} {}", describe(r))).collect();
    assert_eq!(
        got,
        [
            "a/6.x /d/f1-x.bin 8+1",
            "a/6.y /d/f1-y.bin 8+1",
            "a/9.x /d/f1-x.bin 2+1",
            "a/9.y /d/f1-y.bin 2+1",
            "b/1.5 u1.5",
            "b/2.0 u2.0",
        ]
    );
}

fn describe(reference: Reference<'_>) -> String {
    match reference {
        Reference::Range { url, offset, length } => format!("{} {offset}+{length}", url.unwrap()),
        Reference::Whole { url } => url.unwrap().to_owned(),
        Reference::Inline(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        Reference::Malformed { reason } => format!("malformed: {reason}"),
    }
}

#[test]
fn streaming_keeps_the_document_semantics() {
    // Version 0 may use the names version 1 reserves, as ordinary keys.
    let v0 = br#"{"refs": {"a": 1}, "gen": "text", "k\u00e9y/0": ["f.nc", 1, 2], "templates": "t"}"#;
    let set = ReferenceSet::from_json(v0, &ParseOptions::default()).unwrap();
    assert_eq!(set.get("refs"), Some(Reference::Inline(br#"{"a":1}"#)));
    assert_eq!(set.get("gen"), Some(Reference::Inline(b"text")));
    assert_eq!(set.get("templates"), Some(Reference::Inline(b"t")));
    assert!(matches!(set.get("k\u{e9}y/0"), Some(Reference::Range { offset: 1, length: 2, .. })), "escaped key");
    // Version 1 ignores other top-level members, wherever "version" comes.
    let v1 = br#"{"stray": ["x.nc"], "refs": {"a/0": ["{{u}}", 0, 4]}, "templates": {"u": "s3://b/f"}, "version": 1}"#;
    let set = ReferenceSet::from_json(v1, &ParseOptions::default()).unwrap();
    assert_eq!(set.len(), 1);
    assert!(matches!(set.get("a/0"), Some(Reference::Range { url: Some("s3://b/f"), .. })));
    // Errors still name the key, and the top level must be an object.
    let err = ReferenceSet::from_json(br#"{"version": 1, "refs": {"x/0": ["f", -1, 2]}}"#, &refusing())
        .unwrap_err()
        .to_string();
    assert!(err.contains("\"x/0\"") && err.contains("offset"), "{err}");
    for doc in [&b"[1, 2]"[..], b"\"text\"", b"{\"version\": 1, \"refs\": [1]}"] {
        let err = ReferenceSet::from_json(doc, &ParseOptions::default()).unwrap_err().to_string();
        assert!(err.contains("object"), "{err}");
    }
    let err = ReferenceSet::from_json(b"{\"a\": [\"f\", 1, 2]", &ParseOptions::default()).unwrap_err().to_string();
    assert!(err.contains("line 1"), "{err}");
}

/// The streamed reader takes the common member shape without serde
/// (`fast.rs`); on every near miss it must read what the whole-document
/// reader (serde throughout) reads, or fail where it fails.
#[test]
fn the_fast_path_reads_what_serde_reads() {
    let zarray = r#""a/.zarray": "{\"shape\": [4, 4], \"chunks\": [2, 2], \"dtype\": \"<f4\", \"compressor\": null, \"filters\": null, \"fill_value\": 0, \"order\": \"C\", \"zarr_format\": 2}""#;
    let members = [
        r#""a/0.0": ["s3://b/f.nc", 10, 20]"#,
        r#""a/0.1" : [ "f" , 0 , 0 ] "#,
        "\"a/1.0\":\n[\"f\",\t1,\r2]",
        r#""a/1.1": ["é", 18446744073709551615, 0]"#,
        r#""a/0.0": ["later, so it replaces", 1, 2]"#,
        r#""a/00.1": ["f", 1, 2]"#,
        r#""a/9.9": ["f", 1, 2]"#,
        r#""b\/0": ["f", 1, 2]"#,
        r#""\u0061/1.1": ["f", 5, 6]"#,
        r#""a/1.0": ["f\u0041", 1, 2]"#,
        r#""x": ["f", 01, 2]"#,
        r#""x": ["f", -1, 2]"#,
        r#""x": ["f", 1.0, 2]"#,
        r#""x": ["f", 1e2, 2]"#,
        r#""x": ["f", 18446744073709551616, 2]"#,
        r#""x": ["f", 18446744073709551615, 1]"#,
        r#""x": ["f", 1]"#,
        r#""x": ["f"]"#,
        r#""x": [null, 1, 2]"#,
        r#""x": ["f", 1, 2, 3]"#,
        r#""x": "base64:AAE=""#,
        r#""refs": ["f", 1, 2]"#,
        r#""gen": ["f", 1, 2]"#,
        r#""version": ["f", 1, 2]"#,
        "\"x\": [\"f\t\", 1, 2]",
        r#""x": ["f", 1 2]"#,
        r#""x": ["f", 1, 2]]"#,
    ];
    for member in members {
        for doc in [format!("{{{zarray}, {member}}}"), format!("{{{member}, {zarray}}}"), format!("{{{member}}}")] {
            let whole = ReferenceSet::from_json(doc.as_bytes(), &ParseOptions::default());
            let streamed = ReferenceSet::from_reader(doc.as_bytes(), &ParseOptions::default());
            match (&whole, &streamed) {
                (Ok(whole), Ok(streamed)) => assert_same(whole, streamed),
                (Err(_), Err(_)) => {}
                _ => panic!("{doc}: whole {whole:?}, streamed {streamed:?}"),
            }
        }
    }
}

/// A repeated version 1 member replaces the earlier one, and the earlier one
/// must still be JSON: found by the `json_document` fuzzer, where the streamed
/// reader kept only the last `refs` and read a document the other refused.
#[test]
fn an_earlier_repeated_member_must_be_json_too() {
    for doc in [r#"{"refs": {"a": "x": 1}, "refs": {}, "version": 1}"#, r#"{"gen": [, "gen": [], "version": 1}"#] {
        assert!(parse(doc).is_err(), "{doc}");
        assert!(ReferenceSet::from_reader(doc.as_bytes(), &ParseOptions::default()).is_err(), "{doc}");
    }
    let doc = r#"{"refs": {"a": "x"}, "refs": {"b": "y"}, "version": 1}"#;
    let streamed = ReferenceSet::from_reader(doc.as_bytes(), &ParseOptions::default()).unwrap();
    assert_same(&parse(doc).unwrap(), &streamed);
    assert!(streamed.get("a").is_none() && streamed.get("b").is_some(), "the last one counts");
}

/// After the top-level object only JSON's whitespace may follow (space, tab,
/// newline, carriage return): found by the `json_document` fuzzer, where the
/// streamed reader also took a form feed, which the other refuses.
#[test]
fn only_json_whitespace_may_follow_the_object() {
    for trailing in ["\u{c}", "\u{b}", "\r\r\u{c} "] {
        let doc = format!("{{\r\r}}{trailing}");
        assert!(parse(&doc).is_err(), "{doc:?}");
        let err = ReferenceSet::from_reader(doc.as_bytes(), &ParseOptions::default()).unwrap_err().to_string();
        assert!(err.contains("nothing after the top-level object"), "{doc:?}: {err}");
    }
    for trailing in [" ", "\t", "\n", "\r\n "] {
        let doc = format!("{{}}{trailing}");
        assert!(parse(&doc).is_ok() && ReferenceSet::from_reader(doc.as_bytes(), &ParseOptions::default()).is_ok());
    }
}

/// Members of many kinds, `n` of them, as a version 0 document's members.
fn many_members(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| match i % 7 {
            0 => format!(r#""v/{i}": "inline {i}""#),
            1 => format!(r#""v/{i}": "base64:AAE=""#),
            2 => format!(r#""w\/{i}": ["s3://b/f.nc", {i}, 8]"#),
            3 => format!(r#""v/{i}" : [ "f{i}.nc" ]"#),
            _ => format!(r#""v/{i}": ["s3://bucket/file.nc", {}, 1000]"#, i * 1000),
        })
        .collect()
}

/// A reader that fails after `good` bytes.
struct FailingAfter<'a>(&'a [u8], usize);

impl std::io::Read for FailingAfter<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.1 == 0 {
            return Err(std::io::Error::other("the disk went away"));
        }
        let n = out.len().min(self.0.len()).min(self.1);
        out[..n].copy_from_slice(&self.0[..n]);
        (self.0, self.1) = (&self.0[n..], self.1 - n);
        Ok(n)
    }
}

/// A document of many blocks is scanned on one thread and read into the set
/// on another (`pipeline.rs`): it must read as the whole-document reader
/// reads it, later members replacing earlier ones across blocks, and fail
/// with the first error in document order.
#[test]
fn a_document_of_many_blocks_reads_as_a_whole_one() {
    let options = ParseOptions::default();
    let mut members = many_members(40_000);
    members[5] = r#""v/5": ["first", 1, 2]"#.into();
    members[39_000] = r#""v/5": ["last", 3, 4]"#.into();
    let doc = format!("{{{}}}", members.join(",\n"));
    assert!(doc.len() > 5 * (256 << 10), "{} bytes: several blocks", doc.len());
    let streamed = ReferenceSet::from_reader(doc.as_bytes(), &options).unwrap();
    assert_same(&parse(&doc).unwrap(), &streamed);
    assert!(matches!(streamed.get("v/5"), Some(Reference::Range { url: Some("last"), .. })));
    // Version 1, its references in one member of many blocks.
    let v1 = format!(r#"{{"version": 1, "templates": {{"u": "s3://b"}}, "refs": {{{}}}}}"#, members.join(","));
    assert_same(&parse(&v1).unwrap(), &ReferenceSet::from_reader(v1.as_bytes(), &options).unwrap());

    // A bad reference early, middle or last: named as the whole reader names it.
    for at in [3, 20_000, 39_999] {
        let mut bad = members.clone();
        bad[at] = format!(r#""bad/{at}": ["f", -1, 2]"#);
        // And a syntax error after it, which must not be what is reported.
        bad[39_999.min(at + 7_000)].push_str(" 1");
        let doc = format!("{{{}}}", bad.join(","));
        let refused = refusing().with_limits(options.limits());
        let whole = ReferenceSet::from_json(doc.as_bytes(), &refused).unwrap_err().to_string();
        let streamed = ReferenceSet::from_reader(doc.as_bytes(), &refused).unwrap_err().to_string();
        assert!(streamed.contains(&format!("\"bad/{at}\"")) && streamed.contains("offset"), "{streamed}");
        assert!(whole.contains(&format!("\"bad/{at}\"")), "{whole}");
    }
    // A syntax error in a late block: at its byte offset in the document.
    let at = doc.len() - 1000;
    let cut = doc[..at].rfind(",\n").unwrap();
    let broken = format!("{} x{}", &doc[..cut], &doc[cut..]);
    match ReferenceSet::from_reader(broken.as_bytes(), &options) {
        Err(ParseError::Syntax { offset, expected, .. }) => {
            assert_eq!((offset, expected), (cut as u64 + 1, "',' or '}'"));
        }
        other => panic!("{other:?}"),
    }
    // A read that fails part way, early or late.
    for good in [1000, 300 << 10, doc.len() - 10] {
        let err = ReferenceSet::from_reader(FailingAfter(doc.as_bytes(), good), &options).unwrap_err();
        assert!(err.to_string().contains("the disk went away"), "{good}: {err}");
    }
}

/// The two threads hand over hundreds of blocks when blocks are tiny: every
/// document, well formed or not, reads as the whole-document reader reads it
/// (or fails as it fails), whatever the block size.
#[test]
fn tiny_blocks_read_as_the_whole_document() {
    let options = ParseOptions::default();
    let members = many_members(300);
    let mut docs = vec![
        format!("{{{}}}", members.join(", ")),
        format!(r#"{{"version": 1, "templates": {{"u": "s3://b"}}, "refs": {{{}}}}}"#, members.join(",")),
        format!(r#"{{"refs": {{"a": "x"}}, {}, "refs": {{"b": ["f", 1, 2]}}, "version": 1}}"#, members.join(",")),
        SPEC_V1.to_owned(),
        SPEC_V0.to_owned(),
        "{}".to_owned(),
        " { } ".to_owned(),
    ];
    for (at, bad) in [(0, r#""x": ["f", -1, 2]"#), (150, r#""x": ["f" 1, 2]"#), (299, r#""x": [, ]"#)] {
        let mut members = members.clone();
        members[at] = bad.to_owned();
        docs.push(format!("{{{}}}", members.join(",")));
    }
    docs.push(format!("{{{}", members.join(",")));
    docs.push(format!("{{{}}} x", members.join(",")));
    for doc in &docs {
        let whole = parse(doc);
        for block in [1, 2, 7, 64, 1000] {
            let streamed = ReferenceSet::from_json_blocks(doc.as_bytes(), &options, "(test)", block);
            match (&whole, &streamed) {
                (Ok(whole), Ok(streamed)) => assert_same(whole, streamed),
                (Err(_), Err(_)) => {}
                _ => panic!("block {block}, {}: whole {whole:?}, streamed {streamed:?}", &doc[..80.min(doc.len())]),
            }
        }
    }
}

#[test]
fn a_set_answers_the_chunk_grid_of_each_array_it_holds_inline() {
    let set = parse(
        r#"{"a/.zarray": {"shape": [4, 6], "chunks": [2, 3], "fill_value": NaN}, "a/0.0": ["f", 0, 1],
            "b/.zarray": {"shape": [4], "chunks": "x"}, "c/.zarray": ["f", 0, 10], ".zarray": {"shape": [2], "chunks": [1]}}"#,
    )
    .unwrap();
    let grid = set.chunk_grid("a").unwrap().unwrap();
    assert_eq!((grid.dims(), grid.count()), (&[2, 2][..], 4));
    assert_eq!(set.chunk_grid("").unwrap().unwrap().count(), 2);
    assert!(matches!(set.chunk_grid("b"), Some(Err(crate::zarr::GridError::NotAList("chunks")))));
    // A `.zarray` in a target is for a store to read; no `.zarray` at all, likewise.
    assert!(set.chunk_grid("c").is_none() && set.chunk_grid("d").is_none());
}

/// `malformed` names a malformed chunk of an array's table by its own key, after the keys no table
/// holds, and lists nothing else.
#[test]
fn malformed_names_the_chunks_of_tables_by_their_keys() {
    let zarray = r#"{\"shape\":[4],\"chunks\":[1],\"dtype\":\"<i2\",\"fill_value\":null,\"compressor\":null,\"filters\":null,\"order\":\"C\",\"zarr_format\":2}"#;
    let doc = format!(
        r#"{{"a/.zarray": "{zarray}", "a/0": ["u", 0, 2], "a/2": ["u", 2], "a/3": ["u", 4, 2], "b": ["u", -1, 2]}}"#
    );
    let set = ReferenceSet::from_json(doc.as_bytes(), &ParseOptions::default()).unwrap();
    assert!(set.array_chunks("a").is_some(), "the chunks of a are in a table");
    let malformed: Vec<(String, String)> = set.malformed().map(|(k, r)| (k.into_owned(), r.to_owned())).collect();
    let keys: Vec<&str> = malformed.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(keys, ["b", "a/2"], "{malformed:?}");
    assert!(malformed[0].1.contains("non-negative integer") && malformed[1].1.contains("not 2"), "{malformed:?}");
}
