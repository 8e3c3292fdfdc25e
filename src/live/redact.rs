//! What a live handle shows of its catalog's URL in events and logs: never
//! a password. Every URL the handle shows goes through [`shown_url`].

/// `url` without its password: `user:secret@` keeps the user, and a
/// `password=` parameter its name.
pub(super) fn shown_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let (authority, tail) = rest.split_at(rest.find(['/', '?']).unwrap_or(rest.len()));
    let authority = match authority.rsplit_once('@') {
        Some((user, host)) => {
            let user = user.split_once(':').map_or(user, |(name, _)| name);
            format!("{user}@{host}")
        }
        None => authority.to_string(),
    };
    let tail = match tail.split_once('?') {
        Some((path, query)) => {
            let query: Vec<String> = query
                .split('&')
                .map(|pair| match pair.split_once('=') {
                    Some((key, _)) if key.eq_ignore_ascii_case("password") => format!("{key}=***"),
                    _ => pair.to_string(),
                })
                .collect();
            format!("{path}?{}", query.join("&"))
        }
        None => tail.to_string(),
    };
    format!("{scheme}://{authority}{tail}")
}

#[cfg(test)]
mod tests {
    use super::shown_url;

    #[test]
    fn passwords_are_never_shown() {
        for (url, shown) in [
            (
                "postgres://ada:s3cret@db:5432/cat",
                "postgres://ada@db:5432/cat",
            ),
            (
                "postgres://ada@db/cat?sslmode=disable&password=s3cret",
                "postgres://ada@db/cat?sslmode=disable&password=***",
            ),
            ("postgres://ada:s3cret@db?password=x", "postgres://ada@db?password=***"),
            ("postgres://db/cat", "postgres://db/cat"),
            ("sqlite:/tmp/a@b:c/catalog.db", "sqlite:/tmp/a@b:c/catalog.db"),
        ] {
            assert_eq!(shown_url(url), shown, "{url}");
        }
    }
}
