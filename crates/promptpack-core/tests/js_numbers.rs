//! JSON numbers parse and print as JavaScript's `String(JSON.parse(text))`,
//! checked against a corpus node wrote (tests/data/js-numbers.js says how to
//! regenerate it): every shape of number, 15 to 25 significant digits,
//! integers beyond 2^53, subnormals, the ends of the range, halfway cases.
#![cfg(feature = "json")]

use promptpack_core::value::write_value;

const CORPUS: &str = include_str!("data/js-numbers.tsv");

#[test]
fn numbers_print_as_javascript_prints_them() {
    let mut rows = 0;
    let mut wrong = Vec::new();
    for line in CORPUS.lines() {
        let Some((text, javascript)) = line.split_once('\t') else {
            panic!("a corpus row without a tab: {line:?}");
        };
        rows += 1;
        let printed = match serde_json::from_str::<serde_json::Value>(text) {
            Ok(value) => {
                let mut out = String::new();
                write_value(&mut out, &value);
                out
            }
            Err(e) => format!("error: {e}"),
        };
        if printed != javascript {
            wrong.push(format!(
                "{text}: JavaScript {javascript}, promptpack {printed}"
            ));
        }
    }
    assert!(rows > 5000, "the corpus has {rows} rows");
    assert!(
        wrong.is_empty(),
        "{} of {rows} numbers differ from JavaScript:\n{}",
        wrong.len(),
        wrong[..wrong.len().min(20)].join("\n")
    );
}
