//! Where the NATS server is and how to log in to it: the command line, else the environment
//! (`SWARM_NATS_URL`, `SWARM_NATS_CREDS`, `SWARM_NATS_USER`, `SWARM_NATS_PASSWORD`,
//! `SWARM_NATS_TOKEN`), else a team file's `[cluster]` table (docs/ARCHITECTURE.md, "Across
//! machines").

use std::fmt;
use std::path::PathBuf;

use crate::error::{Error, Result};

/// How swarm proves who it is to the server.
#[derive(Clone, PartialEq, Eq)]
pub enum Auth {
    None,
    /// A `.creds` file (a user JWT and its nkey seed), as `nsc` writes them.
    Creds(PathBuf),
    UserPassword {
        user: String,
        password: String,
    },
    Token(String),
}

impl fmt::Debug for Auth {
    // Never print a secret, not even in a debug log.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::None => f.write_str("None"),
            Self::Creds(path) => write!(f, "Creds({})", path.display()),
            Self::UserPassword { user, .. } => write!(f, "UserPassword({user}, ***)"),
            Self::Token(_) => f.write_str("Token(***)"),
        }
    }
}

/// The server's URL (`nats://`, or `tls://` for TLS) and the login.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Settings {
    pub(crate) url: String,
    pub auth: Auth,
}

/// The raw values, from wherever they came; [`Sources::settle`] checks them.
#[derive(Debug, Clone, Default, serde::Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Sources {
    /// The server's URL.
    pub nats: Option<String>,
    pub creds: Option<PathBuf>,
    pub user: Option<String>,
    pub password: Option<String>,
    pub token: Option<String>,
}

impl Sources {
    /// What the environment says.
    pub fn from_env() -> Self {
        let var = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        Self {
            nats: var("SWARM_NATS_URL"),
            creds: var("SWARM_NATS_CREDS").map(PathBuf::from),
            user: var("SWARM_NATS_USER"),
            password: var("SWARM_NATS_PASSWORD"),
            token: var("SWARM_NATS_TOKEN"),
        }
    }

    /// `self`, with anything it leaves unset taken from `fallback`. The URL and the login are
    /// taken together: a login never applies to another source's server.
    pub(crate) fn or(self, fallback: Self) -> Self {
        if self.nats.is_some() || fallback.nats.is_none() {
            return self;
        }
        if self.has_login() {
            return Self {
                nats: fallback.nats,
                ..self
            };
        }
        fallback
    }

    fn has_login(&self) -> bool {
        self.creds.is_some() || self.user.is_some() || self.token.is_some()
    }

    /// The settings, or `None` when no URL is set anywhere: the team stays on one host.
    pub fn settle(self) -> Result<Option<Settings>> {
        let Some(url) = self.nats else {
            if self.has_login() || self.password.is_some() {
                return Err(Error::usage("NATS credentials are set but no server URL")
                    .with_hint("set SWARM_NATS_URL, --nats or `nats = \"nats://host:4222\"` under [cluster]"));
            }
            return Ok(None);
        };
        check_url(&url)?;
        let auth = match (self.creds, self.user, self.password, self.token) {
            (None, None, None, None) => Auth::None,
            (Some(path), None, None, None) => Auth::Creds(path),
            (None, Some(user), Some(password), None) => Auth::UserPassword { user, password },
            (None, Some(_), None, None) => {
                return Err(Error::usage("a NATS user is set without a password")
                    .with_hint("set SWARM_NATS_PASSWORD as well"));
            }
            (None, None, Some(_), None) => {
                return Err(Error::usage("a NATS password is set without a user")
                    .with_hint("set SWARM_NATS_USER as well"));
            }
            (None, None, None, Some(token)) => Auth::Token(token),
            _ => {
                return Err(Error::usage(
                    "more than one way to log in to NATS is set: choose a .creds file, a user and password, or a token",
                ));
            }
        };
        Ok(Some(Settings { url, auth }))
    }
}

/// Refuses a URL the client could not use, before anything is started.
fn check_url(url: &str) -> Result<()> {
    let scheme = url.split_once("://").map(|(scheme, _)| scheme);
    match scheme {
        Some("nats" | "tls" | "ws" | "wss") if url.len() > scheme.unwrap_or("").len() + 3 => Ok(()),
        _ => Err(Error::usage(format!("{url:?} is not a NATS server URL"))
            .with_hint("write it as nats://host:4222, or tls://host:4222 for TLS")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(url: &str) -> Sources {
        Sources {
            nats: Some(url.into()),
            ..Sources::default()
        }
    }

    #[test]
    fn no_url_means_one_host() {
        assert_eq!(Sources::default().settle().unwrap(), None);
    }

    #[test]
    fn a_login_without_a_url_is_refused() {
        let sources = Sources {
            token: Some("t".into()),
            ..Sources::default()
        };
        assert!(
            sources
                .settle()
                .unwrap_err()
                .message()
                .contains("no server URL")
        );
    }

    #[test]
    fn each_login_is_recognised_and_two_are_refused() {
        let token = Sources {
            token: Some("secret".into()),
            ..url("nats://h:4222")
        };
        assert_eq!(
            token.settle().unwrap().unwrap().auth,
            Auth::Token("secret".into())
        );
        let user = Sources {
            user: Some("u".into()),
            password: Some("p".into()),
            ..url("tls://h:4222")
        };
        assert!(matches!(
            user.settle().unwrap().unwrap().auth,
            Auth::UserPassword { .. }
        ));
        let half = Sources {
            user: Some("u".into()),
            ..url("nats://h")
        };
        assert!(
            half.settle()
                .unwrap_err()
                .message()
                .contains("without a password")
        );
        let both = Sources {
            token: Some("t".into()),
            creds: Some("/x.creds".into()),
            ..url("nats://h")
        };
        assert!(
            both.settle()
                .unwrap_err()
                .message()
                .contains("more than one")
        );
    }

    #[test]
    fn a_url_without_a_nats_scheme_is_refused() {
        for bad in ["localhost:4222", "http://h:4222", "nats://"] {
            assert!(url(bad).settle().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_environment_wins_with_its_own_login_only() {
        let team = Sources {
            token: Some("team".into()),
            ..url("nats://team:4222")
        };
        let env = url("nats://env:4222");
        assert_eq!(env.clone().or(team.clone()), env);
        let login_only = Sources {
            token: Some("env".into()),
            ..Sources::default()
        };
        let merged = login_only.or(team);
        assert_eq!(merged.nats.as_deref(), Some("nats://team:4222"));
        assert_eq!(merged.token.as_deref(), Some("env"));
    }

    #[test]
    fn debug_output_hides_secrets() {
        let auth = Auth::UserPassword {
            user: "u".into(),
            password: "hunter2".into(),
        };
        assert!(!format!("{auth:?}").contains("hunter2"));
        assert!(!format!("{:?}", Auth::Token("tok".into())).contains("tok"));
    }
}
