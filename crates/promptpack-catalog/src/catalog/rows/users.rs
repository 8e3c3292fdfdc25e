//! The console's users and their audit: a user's row, adding and removing
//! one, and the history of both.

use super::hand_written;
use crate::model::{Role, Timestamp, User, UserAction, UserChange};
use crate::store::{Param, Row, Tx};
use promptpack_core::Error;

const USER_COLUMNS: &str = "name, role, created_by, created_at";

/// A console user from a row of [`USER_COLUMNS`].
pub(crate) fn user_row(row: &Row) -> Result<User, Error> {
    let role = row.text("role")?;
    Ok(User {
        name: row.text("name")?,
        role: role_of(&role)?,
        created_by: row.text("created_by")?,
        created_at: Timestamp(row.int("created_at")?),
    })
}

/// Adds a console user; `None` when the name or the token hash is taken
/// (the caller tells which apart).
pub(crate) fn insert_user(
    tx: &mut dyn Tx,
    name: &str,
    role: Role,
    token_hash: &str,
    created_by: &str,
) -> Result<Option<User>, Error> {
    let created_at = Timestamp::now();
    // No conflict target: either unique key (name, token hash) refuses
    // the row quietly, on both stores, instead of failing the transaction.
    let added = tx.execute(
        "INSERT INTO console_users (name, role, token_hash, created_by, created_at) \
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
        &[
            Param::Text(name),
            Param::Text(role.as_str()),
            Param::Text(token_hash),
            Param::Text(created_by),
            Param::Int(created_at.0),
        ],
    )?;
    if added == 0 {
        return Ok(None);
    }
    audit_user(tx, name, UserAction::Add, role, created_by, created_at)?;
    Ok(Some(User {
        name: name.to_string(),
        role,
        created_by: created_by.to_string(),
        created_at,
    }))
}

/// The console user named `name`.
pub(crate) fn user(tx: &mut dyn Tx, name: &str) -> Result<Option<User>, Error> {
    let sql = format!("SELECT {USER_COLUMNS} FROM console_users WHERE name = $1");
    tx.query_opt(&sql, &[Param::Text(name)])?
        .map(|row| user_row(&row))
        .transpose()
}

/// The console user whose token hashes to `token_hash`.
pub(crate) fn user_by_token_hash(tx: &mut dyn Tx, token_hash: &str) -> Result<Option<User>, Error> {
    let sql = format!("SELECT {USER_COLUMNS} FROM console_users WHERE token_hash = $1");
    tx.query_opt(&sql, &[Param::Text(token_hash)])?
        .map(|row| user_row(&row))
        .transpose()
}

/// Every console user, by name.
pub(crate) fn users(tx: &mut dyn Tx) -> Result<Vec<User>, Error> {
    let sql = format!("SELECT {USER_COLUMNS} FROM console_users ORDER BY name");
    tx.query(&sql, &[])?.iter().map(user_row).collect()
}

/// Removes the console user named `name` and every session of theirs,
/// recorded as removed by `author`; whether there was one.
pub(crate) fn delete_user(tx: &mut dyn Tx, name: &str, author: &str) -> Result<bool, Error> {
    let Some(user) = user(tx, name)? else {
        return Ok(false);
    };
    // Explicitly, not only by the foreign key's cascade: a name added
    // again must not find its old sessions signed in.
    crate::catalog::sessions::delete_user_sessions(tx, name)?;
    tx.execute(
        "DELETE FROM console_users WHERE name = $1",
        &[Param::Text(name)],
    )?;
    audit_user(
        tx,
        name,
        UserAction::Remove,
        user.role,
        author,
        Timestamp::now(),
    )?;
    Ok(true)
}

/// Appends a change of the console's users to their audit.
fn audit_user(
    tx: &mut dyn Tx,
    name: &str,
    action: UserAction,
    role: Role,
    author: &str,
    at: Timestamp,
) -> Result<(), Error> {
    tx.execute(
        "INSERT INTO console_user_audit (user_name, action, role, author, created_at) \
         VALUES ($1, $2, $3, $4, $5)",
        &[
            Param::Text(name),
            Param::Text(action.as_str()),
            Param::Text(role.as_str()),
            Param::Text(author),
            Param::Int(at.0),
        ],
    )?;
    Ok(())
}

/// Every change of the console's users, oldest first.
pub(crate) fn user_history(tx: &mut dyn Tx) -> Result<Vec<UserChange>, Error> {
    let rows = tx.query(
        "SELECT user_name, action, role, author, created_at FROM console_user_audit ORDER BY seq",
        &[],
    )?;
    rows.iter()
        .map(|row| {
            let action = match row.text("action")?.as_str() {
                "add" => UserAction::Add,
                "remove" => UserAction::Remove,
                other => return Err(hand_written("a console user audit action", other)),
            };
            let role = row.text("role")?;
            Ok(UserChange {
                user: row.text("user_name")?,
                action,
                role: role_of(&role)?,
                author: row.text("author")?,
                at: Timestamp(row.int("created_at")?),
            })
        })
        .collect()
}

/// The role a row names. The schema's CHECK admits only the three; a row
/// that says otherwise was written by hand.
fn role_of(role: &str) -> Result<Role, Error> {
    role.parse()
        .map_err(|_| hand_written("a console user of role", role))
}

#[cfg(all(test, feature = "sqlite"))]
mod tests {
    use super::*;
    use crate::catalog::rows::scratch::Scratch;
    use promptpack_core::ErrorCode;

    /// What a user reader gives back, reduced to whether it read.
    type Reader = fn(&mut dyn Tx) -> Result<(), Error>;

    /// Every reader of a user's role, the user's own row and the audit's,
    /// refuses one written by hand past the CHECK in the same words.
    #[test]
    fn every_reader_refuses_a_role_written_by_hand_alike() {
        let mut scratch = Scratch::new();
        scratch.by_hand(
            "INSERT INTO console_users (name, role, token_hash, created_by, created_at) \
             VALUES ('ann', 'owner', 'hash', 'root', 1); \
             INSERT INTO console_user_audit (user_name, action, role, author, created_at) \
             VALUES ('ann', 'add', 'owner', 'root', 1);",
        );
        let readers: [(&str, Reader); 4] = [
            ("user", |tx| user(tx, "ann").map(drop)),
            ("user_by_token_hash", |tx| {
                user_by_token_hash(tx, "hash").map(drop)
            }),
            ("users", |tx| users(tx).map(drop)),
            ("user_history", |tx| user_history(tx).map(drop)),
        ];
        for (name, reader) in readers {
            let error = scratch
                .read(&mut |tx| reader(tx))
                .expect_err("a role that is not one");
            assert_eq!(error.code(), ErrorCode::NotConfigured, "{name}");
            let message = error.to_string();
            assert!(
                message
                    .contains("the catalog holds a console user of role `owner`, which is not one"),
                "{name}: {message}"
            );
        }
    }

    #[test]
    fn the_audit_refuses_an_action_written_by_hand() {
        let mut scratch = Scratch::new();
        scratch.by_hand(
            "INSERT INTO console_user_audit (user_name, action, role, author, created_at) \
             VALUES ('ann', 'grant', 'admin', 'root', 1);",
        );
        let error = scratch
            .read(&mut |tx| user_history(tx))
            .expect_err("an action that is not one");
        assert_eq!(error.code(), ErrorCode::NotConfigured);
        let message = error.to_string();
        assert!(
            message.contains("a console user audit action `grant`"),
            "{message}"
        );
    }

    /// A user added, refused a second time by name and by token hash,
    /// removed: read back as written, and the audit holds the two changes.
    #[test]
    fn a_user_reads_back_as_written_and_its_changes_as_made() {
        let mut scratch = Scratch::new();
        let added = scratch
            .write(&mut |tx| {
                let added = insert_user(tx, "ann", Role::Editor, "hash-1", "root")?;
                let same_name = insert_user(tx, "ann", Role::Viewer, "hash-2", "root")?;
                let same_token = insert_user(tx, "bob", Role::Viewer, "hash-1", "root")?;
                assert_eq!((same_name, same_token), (None, None));
                Ok(added)
            })
            .expect("written");
        let read = scratch
            .read(&mut |tx| {
                Ok((
                    user(tx, "ann")?,
                    user_by_token_hash(tx, "hash-1")?,
                    users(tx)?,
                ))
            })
            .expect("read");
        let ann = added.expect("ann is new");
        assert_eq!(read, (Some(ann.clone()), Some(ann.clone()), vec![ann]));
        let removed = scratch
            .write(&mut |tx| {
                Ok((
                    delete_user(tx, "ann", "root")?,
                    delete_user(tx, "ann", "root")?,
                ))
            })
            .expect("removed");
        assert_eq!(removed, (true, false));
        let history = scratch.read(&mut |tx| user_history(tx)).expect("history");
        let changes: Vec<(&str, UserAction, Role)> = history
            .iter()
            .map(|change| (change.user.as_str(), change.action, change.role))
            .collect();
        assert_eq!(
            changes,
            [
                ("ann", UserAction::Add, Role::Editor),
                ("ann", UserAction::Remove, Role::Editor),
            ]
        );
    }
}
