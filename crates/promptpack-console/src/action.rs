//! Which role each action needs: one table, read by the JSON API and the
//! pages alike, with one refusal message. Reading needs only a user (any
//! role); everything that writes is here.

use crate::failure::Failure;
use crate::state::AppState;
use promptpack_catalog::{Role, User};

/// Something a user does that their role decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Action<'a> {
    /// Publishing a prompt's version (the API's publish; the edit page,
    /// offered and sent).
    Publish,
    /// Moving or splitting a label that is not protected.
    MoveLabel(&'a str),
    /// Moving or splitting a protected label.
    MoveProtectedLabel(&'a str),
    /// Deleting a prompt.
    Delete,
    /// Restoring a deleted prompt.
    Restore,
    /// Upgrading a prompt's snippet pins (from its page or a snippet's).
    UpgradeSnippets,
    /// Publishing a snippet's revision.
    EditSnippet,
}

impl<'a> Action<'a> {
    /// Moving `label`: protected or not as the console is set
    /// ([`AppState::is_protected`]).
    pub(crate) fn move_label(state: &AppState, label: &'a str) -> Action<'a> {
        if state.is_protected(label) {
            Action::MoveProtectedLabel(label)
        } else {
            Action::MoveLabel(label)
        }
    }

    /// The table: the weakest role that may take the action.
    pub(crate) fn role(self) -> Role {
        match self {
            Action::Publish
            | Action::MoveLabel(_)
            | Action::UpgradeSnippets
            | Action::EditSnippet => Role::Editor,
            Action::MoveProtectedLabel(_) | Action::Delete | Action::Restore => Role::Admin,
        }
    }

    /// The action in words, as a refusal names it.
    fn what(self) -> String {
        match self {
            Action::Publish => "publishing a prompt".to_string(),
            Action::MoveLabel(label) => format!("changing label `{label}`"),
            Action::MoveProtectedLabel(label) => format!("changing protected label `{label}`"),
            Action::Delete => "deleting a prompt".to_string(),
            Action::Restore => "restoring a prompt".to_string(),
            Action::UpgradeSnippets => "upgrading a prompt's snippets".to_string(),
            Action::EditSnippet => "editing a snippet".to_string(),
        }
    }

    /// Whether `user`'s role may take the action: what a page offers.
    pub(crate) fn allows(self, user: &User) -> bool {
        user.role >= self.role()
    }

    /// Refuses `user` unless their role may take the action: `forbidden`,
    /// naming the role needed and the user's own.
    pub(crate) fn check(self, user: &User) -> Result<(), Failure> {
        if self.allows(user) {
            Ok(())
        } else {
            Err(Failure::forbidden(format!(
                // "has the … role", not "is a …": no article to get wrong.
                "{} needs the {} role; `{}` has the {} role",
                self.what(),
                self.role(),
                user.name,
                user.role
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(role: Role) -> User {
        User {
            name: "vi".to_string(),
            role,
            created_by: "setup".to_string(),
            created_at: promptpack_catalog::Timestamp(0),
        }
    }

    #[test]
    fn each_action_needs_its_role_and_says_so() {
        let table = [
            (Action::Publish, Role::Editor),
            (Action::MoveLabel("staging"), Role::Editor),
            (Action::MoveProtectedLabel("production"), Role::Admin),
            (Action::Delete, Role::Admin),
            (Action::Restore, Role::Admin),
            (Action::UpgradeSnippets, Role::Editor),
            (Action::EditSnippet, Role::Editor),
        ];
        for (action, needs) in table {
            assert_eq!(action.role(), needs, "{action:?}");
            for role in [Role::Viewer, Role::Editor, Role::Admin] {
                let verdict = action.check(&user(role));
                assert_eq!(verdict.is_ok(), role >= needs, "{action:?} as {role}");
                assert_eq!(action.allows(&user(role)), role >= needs);
                if let Err(failure) = verdict {
                    assert_eq!(failure.code, "forbidden");
                    assert!(
                        failure.message.ends_with(&format!(
                            "needs the {needs} role; `vi` has the {role} role"
                        )),
                        "{}",
                        failure.message
                    );
                }
            }
        }
    }
}
