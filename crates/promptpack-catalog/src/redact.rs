//! Store URLs as they may be shown: in errors, events and logs, with any
//! password replaced by `***`.

/// What a password is shown as.
const HIDDEN: &str = "***";

/// `url` with its passwords replaced by `***`, for every message that shows
/// a store URL: the password of the user part (`postgres://ada:pw@host/db`
/// → `postgres://ada:***@host/db`) and the value of every `password` and
/// `sslpassword` parameter (`?password=pw`, `&sslpassword=pw`, also with
/// its name percent-encoded). A libpq `key=value` connection string
/// (`host=db password=pw`) has the values of the same keys hidden. Anything
/// else is kept as given; a URL without `://` that is no `key=value`
/// string (a SQLite path) is returned unchanged.
///
/// A password is hidden whole whether it is percent-encoded or holds `@`,
/// `:` or `/` raw. The user part ends at the last `@` before any `?` that
/// follows the first `@`: a raw `?` after a raw `@` in a password reads as
/// the start of the parameters (percent-encode such a password, as URLs
/// require anyway).
///
/// ```
/// use promptpack_catalog::redact_url;
///
/// assert_eq!(
///     redact_url("postgres://ada:s3cret@db:5432/cat?password=s3cret&sslmode=disable"),
///     "postgres://ada:***@db:5432/cat?password=***&sslmode=disable"
/// );
/// ```
pub fn redact_url(url: &str) -> String {
    // A `://` after something that is no scheme (`password='a://b'`) is
    // inside a value of a `key=value` string, not a URL's.
    let scheme = url.find("://").filter(|&i| is_scheme(&url[..i]));
    let Some(scheme_end) = scheme.map(|i| i + 3) else {
        return redact_keyword_value(url);
    };
    let (scheme, rest) = url.split_at(scheme_end);
    let (user_part, after_user) = split_user_part(rest);
    let mut shown = String::with_capacity(url.len());
    shown.push_str(scheme);
    if let Some(user_part) = user_part {
        // What reads as a user may be parameters that an `@` in a later
        // one made the driver take for a user part.
        match user_part.split_once(':') {
            Some((user, _password)) => {
                shown.push_str(&redact_parameters(user));
                shown.push(':');
                shown.push_str(HIDDEN);
            }
            None => shown.push_str(&redact_parameters(user_part)),
        }
        shown.push('@');
    }
    shown.push_str(&redact_parameters(after_user));
    shown
}

/// Whether `text` is a URL scheme: a letter, then letters, digits, `+`,
/// `-` or `.` (RFC 3986).
fn is_scheme(text: &str) -> bool {
    let mut chars = text.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// The user part of what follows `scheme://` (without its `@`), when there
/// is one, and the rest. The driver ends it at the first `@`; a person who
/// wrote a raw `@` in a password meant the last one. Both are covered by
/// taking the last `@` that no `?` separates from the first: a `?` between
/// them starts the parameters, whose values may hold an `@` of their own.
fn split_user_part(rest: &str) -> (Option<&str>, &str) {
    let Some(first) = rest.find('@') else {
        return (None, rest);
    };
    let bounded = rest[first..].find('?').map_or(rest.len(), |i| first + i);
    let last = rest[..bounded].rfind('@').unwrap_or(first);
    (Some(&rest[..last]), &rest[last + 1..])
}

/// `text` with the value of each `password` parameter hidden: a name
/// right after a `?` or `&`, its value up to the next `&` (as the driver
/// reads them; a raw `?` in a value does not end it).
fn redact_parameters(text: &str) -> String {
    let mut shown = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(delimiter) = rest.find(['?', '&']) {
        shown.push_str(&rest[..=delimiter]);
        rest = &rest[delimiter + 1..];
        let Some((key, value)) = rest.split_once('=') else {
            continue;
        };
        if !key.contains(['?', '&']) && is_secret(&percent_decoded(key)) {
            shown.push_str(key);
            shown.push('=');
            shown.push_str(HIDDEN);
            rest = value.find('&').map_or("", |end| &value[end..]);
        }
    }
    shown.push_str(rest);
    shown
}

/// Whether a parameter named `key` holds a secret: a password, or the one
/// that unlocks the client's TLS key.
fn is_secret(key: &str) -> bool {
    matches!(key, "password" | "sslpassword")
}

/// `text` with the secret values hidden when it reads as a libpq
/// `key=value` connection string (it starts with a key and `=`), as given
/// otherwise. Values are read as libpq does: up to the next white space,
/// or in single quotes, a backslash escaping the next character in both.
fn redact_keyword_value(text: &str) -> String {
    let starts_with_key = {
        let trimmed = text.trim_start();
        let key_end = trimmed
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(trimmed.len());
        key_end > 0 && trimmed[key_end..].trim_start().starts_with('=')
    };
    if !starts_with_key {
        return text.to_string();
    }
    let mut shown = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    loop {
        // White space, then a key up to `=` (or the end).
        while let Some(c) = chars.next_if(|c| c.is_whitespace()) {
            shown.push(c);
        }
        let mut key = String::new();
        while let Some(c) = chars.next_if(|c| *c != '=' && !c.is_whitespace()) {
            key.push(c);
        }
        shown.push_str(&key);
        while let Some(c) = chars.next_if(|c| c.is_whitespace()) {
            shown.push(c);
        }
        if chars.next_if_eq(&'=').is_none() {
            // The end, or a key without `=` (which libpq refuses): what
            // is left is shown as it is, unless it follows a secret.
            shown.extend(chars);
            return shown;
        }
        shown.push('=');
        while let Some(c) = chars.next_if(|c| c.is_whitespace()) {
            shown.push(c);
        }
        let mut value = String::new();
        let quoted = chars.next_if_eq(&'\'').is_some();
        while let Some(c) = chars.next() {
            match c {
                '\\' => {
                    value.push(c);
                    if let Some(escaped) = chars.next() {
                        value.push(escaped);
                    }
                }
                '\'' if quoted => break,
                c if !quoted && c.is_whitespace() => {
                    value.push(c);
                    break;
                }
                c => value.push(c),
            }
        }
        if is_secret(&key) {
            shown.push_str(HIDDEN);
            if value.ends_with(char::is_whitespace) {
                shown.push(' ');
            }
        } else {
            if quoted {
                shown.push('\'');
            }
            shown.push_str(&value);
            if quoted {
                shown.push('\'');
            }
        }
        if chars.peek().is_none() {
            return shown;
        }
    }
}

/// `text` with its `%XX` escapes decoded, as the driver reads a parameter's
/// name (invalid escapes and bytes kept as they are, lossily).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let escaped = (bytes[index] == b'%')
            .then(|| bytes.get(index + 1..index + 3))
            .flatten()
            .and_then(|hex| std::str::from_utf8(hex).ok())
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match escaped {
            Some(byte) => {
                decoded.push(byte);
                index += 3;
            }
            None => {
                decoded.push(bytes[index]);
                index += 1;
            }
        }
    }
    String::from_utf8_lossy(&decoded).into_owned()
}

#[cfg(test)]
mod tests {
    use super::redact_url;
    use proptest::prelude::*;

    #[test]
    fn passwords_are_hidden_and_the_rest_kept() {
        let cases = [
            // (given, shown)
            (
                "postgres://ada:secret@db:5432/cat",
                "postgres://ada:***@db:5432/cat",
            ),
            ("postgres://db/cat", "postgres://db/cat"),
            ("postgres://ada@db/cat", "postgres://ada@db/cat"),
            ("postgresql://ada:@db/cat", "postgresql://ada:***@db/cat"),
            (
                "postgres://db/cat?password=secret",
                "postgres://db/cat?password=***",
            ),
            (
                "postgres://db/cat?sslmode=disable&password=secret&connect_timeout=3",
                "postgres://db/cat?sslmode=disable&password=***&connect_timeout=3",
            ),
            (
                "postgres://db/cat?pass%77ord=secret",
                "postgres://db/cat?pass%77ord=***",
            ),
            (
                "postgres://ada:p%40ss%3Aw%2Fd@db/cat",
                "postgres://ada:***@db/cat",
            ),
            // Raw `@`, `:` and `/` in a password.
            ("postgres://ada:p@s:s/w@db/cat", "postgres://ada:***@db/cat"),
            // Raw `?` in a password, before its only `@`.
            ("postgres://ada:pa?ss@db/cat", "postgres://ada:***@db/cat"),
            // An `@` in a parameter is not the end of the user part.
            (
                "postgres://ada:secret@db/cat?user=ada@corp",
                "postgres://ada:***@db/cat?user=ada@corp",
            ),
            // Without a user part, the driver reads up to the first `@` as
            // one, and its password is hidden as such.
            (
                "postgres://db/cat?application_name=a@b",
                "postgres://db/cat?application_name=a@b",
            ),
            (
                "postgres://db:5432/cat?application_name=a@b",
                "postgres://db:***@b",
            ),
            (
                "postgres://db/cat?a=x@y&password=secret",
                "postgres://db/cat?a=x@y&password=***",
            ),
            (
                "postgres://db/cat?password=secret&a=x@y",
                "postgres://db/cat?password=***&a=x@y",
            ),
            // Several hosts, IPv6, a Unix socket folder as host parameter.
            (
                "postgres://ada:secret@[::1]:5432,db2/cat",
                "postgres://ada:***@[::1]:5432,db2/cat",
            ),
            (
                "postgres://ada:secret@%2Frun%2Fpg/cat?host=/run/pg",
                "postgres://ada:***@%2Frun%2Fpg/cat?host=/run/pg",
            ),
            // Odd ones.
            ("sqlite:/tmp/a:b@c.db", "sqlite:/tmp/a:b@c.db"),
            ("", ""),
            ("postgres://", "postgres://"),
            ("postgres://@", "postgres://@"),
            ("postgres://:@", "postgres://:***@"),
            ("postgres://?password", "postgres://?password"),
            ("postgres://?password=", "postgres://?password=***"),
            ("postgres://é:ü@ñ/ø", "postgres://é:***@ñ/ø"),
            // The password of a client's TLS key.
            (
                "postgres://db/cat?sslmode=verify-full&sslpassword=secret",
                "postgres://db/cat?sslmode=verify-full&sslpassword=***",
            ),
            (
                "postgres://db/cat?sslpass%77ord=secret&a=b",
                "postgres://db/cat?sslpass%77ord=***&a=b",
            ),
            // libpq `key=value` strings.
            (
                "host=db port=5432 user=ada password=secret dbname=cat",
                "host=db port=5432 user=ada password=*** dbname=cat",
            ),
            (
                "dbname=cat sslpassword=secret",
                "dbname=cat sslpassword=***",
            ),
            (
                "  user = ada password = 'sec ret\\' x' dbname=cat",
                "  user = ada password = *** dbname=cat",
            ),
            ("password=sec\\ ret host=db", "password=*** host=db"),
            ("password=", "password=***"),
            ("password", "password"),
            // A SQLite path with `=` later on is no `key=value` string.
            ("data/a=b.db", "data/a=b.db"),
            ("/tmp/x password=y", "/tmp/x password=y"),
        ];
        for (given, shown) in cases {
            assert_eq!(redact_url(given), shown, "{given:?}");
        }
    }

    /// A password made of any characters but `?` (see [`redact_url`]),
    /// with a marker no other part of the URL holds, so that finding it
    /// whole in the output means it leaked.
    fn password() -> impl Strategy<Value = String> {
        "[^?]{0,24}".prop_map(|tail| format!("PW!{tail}"))
    }

    fn percent_encoded(text: &str) -> String {
        text.bytes().map(|b| format!("%{b:02X}")).collect()
    }

    proptest! {
        #[test]
        fn a_user_part_password_never_shows(
            user in "[a-z]{0,8}",
            password in password(),
            host in "[a-z0-9.]{1,12}(:[0-9]{1,5})?",
            database in "(/[a-z_]{0,8})?",
            parameters in "(\\?[a-z_]{1,8}=[a-z0-9@:/]{0,8})?",
            encode in any::<bool>(),
        ) {
            let written = if encode { percent_encoded(&password) } else { password.clone() };
            let url = format!("postgres://{user}:{written}@{host}{database}{parameters}");
            let shown = redact_url(&url);
            prop_assert!(!shown.contains(&written), "{url:?} shown as {shown:?}");
            prop_assert!(!shown.contains(&password), "{url:?} shown as {shown:?}");
            prop_assert!(shown.contains(&host), "{url:?} shown as {shown:?}");
        }

        #[test]
        fn a_password_parameter_never_shows(
            before in "([a-z_]{1,8}=[a-z0-9@]{0,8}&){0,3}",
            key in prop_oneof![Just("password".to_string()), Just(percent_encoded("password"))],
            password in "PW![^&]{0,24}",
            after in "(&[a-z_]{1,8}=[a-z0-9@]{0,8}){0,3}",
            user_part in "([a-z]{1,8}(:PW![a-z]{0,8})?@)?",
        ) {
            let url = format!("postgresql://{user_part}db/cat?{before}{key}={password}{after}");
            let shown = redact_url(&url);
            prop_assert!(!shown.contains("PW!"), "{url:?} shown as {shown:?}");
            prop_assert!(shown.contains("db/cat?"), "{url:?} shown as {shown:?}");
        }

        #[test]
        fn a_keyword_value_password_never_shows(
            before in "([a-z_]{1,8} ?= ?[a-z0-9@]{1,8} ){0,3}",
            key in prop_oneof![Just("password"), Just("sslpassword")],
            password in prop_oneof![
                "PW![^ '\\\\]{0,16}".prop_map(|p| p),
                "PW![^'\\\\]{0,16}".prop_map(|p| format!("'{p}'")),
            ],
            after in "( [a-z_]{1,8}=[a-z0-9@]{1,8}){0,3}",
        ) {
            let text = format!("{before}{key}={password}{after}");
            let shown = redact_url(&text);
            prop_assert!(!shown.contains("PW!"), "{text:?} shown as {shown:?}");
        }

        #[test]
        fn any_text_is_redacted_without_a_panic(url in "\\PC{0,64}") {
            let _ = redact_url(&url);
        }
    }
}
