//! Registered builds: the programs following a label, each with the
//! contract it was built against, refreshed while it runs and expired
//! when it stops.

use crate::model::{RegisteredBuild, Timestamp};
use crate::store::{Param, Tx};
use promptpack_core::contract::{Contract, FORMAT};
use promptpack_core::{Error, ErrorCode};

/// Registers a build: inserts it, or refreshes its `last_seen` (and, when
/// its contract changed, the contract and `first_seen`).
pub(crate) fn upsert_build(
    tx: &mut dyn Tx,
    process: &str,
    label: &str,
    contract_hash: &str,
    contract: &str,
    now: Timestamp,
) -> Result<(), Error> {
    // Every SET reads the row as it was, on both stores: first_seen
    // compares the old hash. An unchanged contract keeps its stored text
    // rather than writing the same again.
    tx.execute(
        "INSERT INTO registered_builds (process, label, contract_hash, contract, first_seen, last_seen) \
         VALUES ($1, $2, $3, $4, $5, $5) \
         ON CONFLICT (process, label) DO UPDATE SET \
         first_seen = CASE WHEN registered_builds.contract_hash = excluded.contract_hash \
             THEN registered_builds.first_seen ELSE excluded.first_seen END, \
         contract = CASE WHEN registered_builds.contract_hash = excluded.contract_hash \
             THEN registered_builds.contract ELSE excluded.contract END, \
         contract_hash = excluded.contract_hash, \
         last_seen = excluded.last_seen",
        &[
            Param::Text(process),
            Param::Text(label),
            Param::Text(contract_hash),
            Param::Text(contract),
            Param::Int(now.0),
        ],
    )?;
    Ok(())
}

/// Deletes the registration of `process` following `label`: how many
/// went (0 or 1).
pub(crate) fn delete_build(tx: &mut dyn Tx, process: &str, label: &str) -> Result<u64, Error> {
    tx.execute(
        "DELETE FROM registered_builds WHERE process = $1 AND label = $2",
        &[Param::Text(process), Param::Text(label)],
    )
}

/// Deletes the registrations last seen before `cutoff`.
pub(crate) fn expire_builds(tx: &mut dyn Tx, cutoff: Timestamp) -> Result<u64, Error> {
    tx.execute(
        "DELETE FROM registered_builds WHERE last_seen < $1",
        &[Param::Int(cutoff.0)],
    )
}

/// The registrations last seen at or after `since`, by process and label.
/// One whose contract is of another format than this promptpack reads (a
/// newer promptpack's) is left out: it is not this promptpack's to show.
pub(crate) fn builds(tx: &mut dyn Tx, since: Timestamp) -> Result<Vec<RegisteredBuild>, Error> {
    let sql = "SELECT process, label, contract_hash, contract, first_seen, last_seen \
               FROM registered_builds WHERE last_seen >= $1 ORDER BY process, label";
    let mut builds = Vec::new();
    for row in tx.query(sql, &[Param::Int(since.0)])? {
        let (process, label) = (row.text("process")?, row.text("label")?);
        let text = row.text("contract")?;
        let contract_hash = row.text("contract_hash")?;
        let damaged = |why: String| {
            Error::new(
                ErrorCode::Damaged,
                format!(
                    "the registered build of `{process}` (label `{label}`) {why}: the catalog was changed outside promptpack"
                ),
            )
        };
        if crate::hash::text_hash(&text) != contract_hash {
            return Err(damaged("holds a contract other than its hash names".into()));
        }
        let contract = match Contract::from_json("the registered contract", &text) {
            Ok(contract) => contract,
            Err(error) => {
                let format = serde_json::from_str::<serde_json::Value>(&text)
                    .ok()
                    .and_then(|json| json.get("format").and_then(serde_json::Value::as_u64));
                if format.is_some_and(|format| format != u64::from(FORMAT)) {
                    continue;
                }
                return Err(damaged(error.to_string()));
            }
        };
        builds.push(RegisteredBuild {
            process,
            label,
            contract_hash,
            contract,
            first_seen: Timestamp(row.int("first_seen")?),
            last_seen: Timestamp(row.int("last_seen")?),
        });
    }
    Ok(builds)
}

#[cfg(all(test, feature = "sqlite"))]
mod tests {
    use super::*;
    use crate::catalog::rows::scratch::Scratch;
    use crate::model::{canonical_contract, token_hash};

    /// What [`builds`] makes of a stored contract.
    #[derive(Debug, PartialEq)]
    enum Read {
        /// Listed, with this contract.
        Listed(Contract),
        /// Left out: another promptpack's.
        LeftOut,
        /// Refused as damaged, the message saying this.
        Damaged(&'static str),
    }

    #[test]
    fn a_registered_contract_reads_back_or_is_told_apart() {
        let contract = Contract::new(Default::default());
        let canonical = canonical_contract(&contract);
        // `token_hash` is SHA-256 of a text as hex: the hash a registration
        // names its contract's text by.
        let cases: [(&str, String, String, Read); 5] = [
            (
                "as registered",
                canonical.clone(),
                token_hash(&canonical),
                Read::Listed(contract.clone()),
            ),
            (
                "text changed under its hash",
                canonical.replace('}', " }"),
                token_hash(&canonical),
                Read::Damaged("holds a contract other than its hash names"),
            ),
            (
                "of a newer format",
                r#"{"format":99,"prompts":{"a":"a shape to come"}}"#.into(),
                token_hash(r#"{"format":99,"prompts":{"a":"a shape to come"}}"#),
                Read::LeftOut,
            ),
            (
                "of this format, not a contract",
                r#"{"format":1,"prompts":3}"#.into(),
                token_hash(r#"{"format":1,"prompts":3}"#),
                Read::Damaged("is not a promptpack contract"),
            ),
            (
                "not JSON",
                "contract".into(),
                token_hash("contract"),
                Read::Damaged("is not a promptpack contract"),
            ),
        ];
        for (case, text, hash, wanted) in cases {
            let mut scratch = Scratch::new();
            scratch
                .write(&mut |tx| upsert_build(tx, "agent#1", "prod", &hash, &text, Timestamp(5)))
                .expect(case);
            let read = match scratch.read(&mut |tx| builds(tx, Timestamp(5))) {
                Ok(builds) => match builds.as_slice() {
                    [] => Read::LeftOut,
                    [build] => {
                        assert_eq!(
                            (build.process.as_str(), build.label.as_str()),
                            ("agent#1", "prod")
                        );
                        assert_eq!(
                            (build.first_seen, build.last_seen),
                            (Timestamp(5), Timestamp(5))
                        );
                        Read::Listed(build.contract.clone())
                    }
                    more => panic!("{case}: {more:?}"),
                },
                Err(error) => {
                    assert_eq!(error.code(), ErrorCode::Damaged, "{case}");
                    let message = error.to_string();
                    assert!(
                        message.contains("the registered build of `agent#1` (label `prod`)"),
                        "{case}: {message}"
                    );
                    match wanted {
                        Read::Damaged(why) if message.contains(why) => Read::Damaged(why),
                        _ => panic!("{case}: {message}"),
                    }
                }
            };
            assert_eq!(read, wanted, "{case}");
        }
    }

    /// Seen again with its contract: first seen kept; with another: first
    /// seen anew; not seen since the cutoff: expired, and gone from the list.
    #[test]
    fn a_registration_keeps_its_first_sighting_until_its_contract_changes() {
        let mut scratch = Scratch::new();
        let old = canonical_contract(&Contract::new(Default::default()));
        let new = old.replace("{}", r#"{"a":{"variables":[]}}"#);
        let seen = |scratch: &mut Scratch| {
            let builds = scratch
                .read(&mut |tx| builds(tx, Timestamp(0)))
                .expect("read");
            builds
                .iter()
                .map(|b| (b.first_seen.0, b.last_seen.0, b.contract.prompts.len()))
                .collect::<Vec<_>>()
        };
        let register = |scratch: &mut Scratch, text: &str, at: i64| {
            scratch
                .write(&mut |tx| {
                    upsert_build(
                        tx,
                        "agent#1",
                        "prod",
                        &token_hash(text),
                        text,
                        Timestamp(at),
                    )
                })
                .expect("registered");
        };
        register(&mut scratch, &old, 1);
        register(&mut scratch, &old, 2);
        assert_eq!(seen(&mut scratch), [(1, 2, 0)]);
        register(&mut scratch, &new, 3);
        assert_eq!(seen(&mut scratch), [(3, 3, 1)]);
        let expired = scratch
            .write(&mut |tx| expire_builds(tx, Timestamp(4)))
            .expect("expired");
        assert_eq!((expired, seen(&mut scratch)), (1, vec![]));
    }
}
