//! Which values are secret, and how one is shown (docs/ARCHITECTURE.md, "Secrets and the
//! environment"). The one rule: everything that shows a variable's value to a person goes
//! through [`shown`].

use std::borrow::Cow;

/// What is shown in place of a secret value.
pub const MASK: &str = "<masked>";

/// Parts of a name that mark its value as secret, matched anywhere in the name, whatever its case.
/// Broad on purpose: a value masked that need not be costs a look at the real environment; one
/// shown that should not have been is on a screen, in a terminal's scrollback, in a paste.
pub(crate) const SECRET_MARKS: [&str; 9] = [
    "KEY",
    "TOKEN",
    "SECRET",
    "PASS",
    "CREDENTIAL",
    "AUTH",
    "PRIVATE",
    "COOKIE",
    "SIGNATURE",
];

/// Whether a variable called `name` looks like it holds a secret: its name contains one of
/// [`SECRET_MARKS`] (`ANTHROPIC_API_KEY`, `CLAUDE_CODE_OAUTH_TOKEN`, `AWS_SECRET_ACCESS_KEY`,
/// `PGPASSWORD`, `GOOGLE_APPLICATION_CREDENTIALS`, …).
/// swarm's own variables hold none (`SWARM_LEAD_VERIFY_KEY` is a public key).
pub fn looks_secret(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    !name.starts_with("SWARM_") && SECRET_MARKS.iter().any(|mark| name.contains(mark))
}

/// The value of variable `name` as a person may see it: [`MASK`] when the name looks secret,
/// else the value with the password of a URL in it (`https://user:password@proxy:3128`, as a
/// proxy or a database URL carries one) masked.
pub fn shown<'a>(name: &str, value: &'a str) -> Cow<'a, str> {
    if looks_secret(name) {
        return Cow::Borrowed(MASK);
    }
    match url_password(value) {
        Some((start, end)) => Cow::Owned(format!("{}{MASK}{}", &value[..start], &value[end..])),
        None => Cow::Borrowed(value),
    }
}

/// A webhook's URL as a person may see it: its scheme and host, everything after (a path or query
/// that carries the hook's secret, `https://hooks.slack.com/services/T0/B0/XXXX`) and any user
/// masked: `https://hooks.slack.com/<masked>`.
pub fn shown_url(url: &str) -> String {
    let Some(authority) = url.find("://").map(|at| at + 3) else {
        return MASK.to_owned();
    };
    let rest = &url[authority..];
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = rest[..end].rsplit('@').next().unwrap_or_default();
    let user = if rest[..end].contains('@') {
        format!("{MASK}@")
    } else {
        String::new()
    };
    let tail = if end < rest.len() {
        format!("/{MASK}")
    } else {
        String::new()
    };
    format!("{}{user}{host}{tail}", &url[..authority])
}

/// Where the password of `scheme://user:password@host…` lies in `value`, if it has one.
fn url_password(value: &str) -> Option<(usize, usize)> {
    let authority = value.find("://")? + 3;
    let rest = &value[authority..];
    let end_of_authority = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let at = rest[..end_of_authority].rfind('@')?;
    let colon = rest[..at].find(':')?;
    Some((authority + colon + 1, authority + at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_looking_names_are_masked_whatever_their_case() {
        for name in [
            "ANTHROPIC_API_KEY",
            "CLAUDE_CODE_OAUTH_TOKEN",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_SESSION_TOKEN",
            "GITHUB_TOKEN",
            "PGPASSWORD",
            "MYSQL_PWD_PASSFILE",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "npm_config__authToken",
            "ssh_private_file",
            "openai_api_key",
        ] {
            assert!(looks_secret(name), "{name}");
            assert_eq!(shown(name, "value"), MASK, "{name}");
        }
        for name in ["PATH", "HOME", "TERM", "SWARM_AGENT", "LANG", "HTTPS_PROXY"] {
            assert!(!looks_secret(name), "{name}");
            assert_eq!(shown(name, "value"), "value");
        }
    }

    #[test]
    fn a_webhooks_url_shows_its_host_alone() {
        assert_eq!(
            shown_url("https://hooks.slack.com/services/T0/B0/XXXX"),
            "https://hooks.slack.com/<masked>"
        );
        assert_eq!(
            shown_url("http://u:p@127.0.0.1:8080?token=x"),
            "http://<masked>@127.0.0.1:8080/<masked>"
        );
        assert_eq!(shown_url("https://example.com"), "https://example.com");
        assert_eq!(shown_url("nonsense"), MASK);
    }

    #[test]
    fn a_password_in_a_url_is_masked() {
        assert_eq!(
            shown("HTTPS_PROXY", "http://me:hunter2@proxy:3128"),
            "http://me:<masked>@proxy:3128"
        );
        assert_eq!(
            shown("DATABASE_URL", "postgres://u:p@w@db/x?y=z@q"),
            "postgres://u:<masked>@db/x?y=z@q"
        );
        for plain in [
            "http://proxy:3128",
            "http://me@proxy:3128",
            "/usr/bin:/bin",
            "a@b:c",
            "https://host/path?u=a:b@c",
        ] {
            assert_eq!(shown("HTTPS_PROXY", plain), plain);
        }
    }
}
