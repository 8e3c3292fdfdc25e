//! JSON numbers parse and print as JavaScript's `String(JSON.parse(text))`,
//! checked against a corpus node wrote (tests/data/js-numbers.js says how to
//! regenerate it): every shape of number, 15 to 25 significant digits,
//! integers beyond 2^53, subnormals, the ends of the range, halfway cases.
#![cfg(feature = "json")]

use promptpack_core::value::write_value;
use proptest::strategy::Strategy;

const CORPUS: &str = include_str!("../data/js-numbers.tsv");

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

proptest::proptest! {
    /// Every finite double prints with the fewest digits that read back as
    /// it (as many as Rust's shortest form), and reads back as it: choosing
    /// the closest of those digits never costs one more.
    #[test]
    fn every_double_prints_shortest_and_reads_back(
        f in proptest::num::f64::ANY.prop_filter("finite", |f| f.is_finite())
    ) {
        let mut out = String::new();
        promptpack_core::value::write_js_number(&mut out, f);
        proptest::prop_assert_eq!(out.parse::<f64>().ok(), Some(f), "{} printed as {}", f, out);
        let digits = |text: &str| {
            let mantissa = text.split(['e', 'E']).next().unwrap_or_default();
            mantissa.trim_start_matches(['-', '0', '.']).trim_end_matches(['0', '.']).chars().filter(char::is_ascii_digit).count()
        };
        let shortest = format!("{f:e}");
        proptest::prop_assert_eq!(digits(&out), digits(&shortest), "{} printed as {}", f, out);
    }
}
