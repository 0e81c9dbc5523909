//! The one way swarm connects to NATS, and what a failure to connect means to a person
//! (docs/ARCHITECTURE.md, "Across machines"): unreachable, wrong credentials, TLS, a server too
//! old or without JetStream, each one line naming the URL.

use std::time::Duration;

use async_nats::{Client, ConnectErrorKind, ConnectOptions, Event};
use tokio::sync::watch;

use crate::cluster::settings::{Auth, Settings};
use crate::error::{Error, Result};

/// How long one attempt to reach the server may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(5);

/// The oldest server swarm works with: Debian 12's nats-server. Nothing newer is required.
const OLDEST_SERVER: (u64, u64) = (2, 9);

/// A client and whether it is connected now; the flag follows the client's reconnections.
pub(crate) struct Connection {
    pub(crate) client: Client,
    pub(crate) connected: watch::Receiver<bool>,
    pub(crate) url: String,
}

/// Connects once: the first failure is returned as an error naming the URL. Once connected, the
/// client reconnects by itself for as long as it lives, and `connected` says when it is.
pub(crate) async fn connect(settings: &Settings, name: &str) -> Result<Connection> {
    let (set_connected, connected) = watch::channel(false);
    let options = login(ConnectOptions::new(), &settings.auth)
        .await
        .map_err(|err| Error::io("read NATS credentials", creds_path(&settings.auth), err))?
        .name(name)
        .connection_timeout(CONNECT_TIMEOUT)
        .max_reconnects(None)
        .reconnect_delay_callback(|attempt| {
            // Quick at first, so a restarted server is found again at once; then at most 2 s.
            Duration::from_millis((50u64 << attempt.min(5)).min(2000))
        })
        .event_callback(move |event| {
            let set_connected = set_connected.clone();
            async move {
                match event {
                    Event::Connected => {
                        set_connected.send_replace(true);
                    }
                    Event::Disconnected => {
                        set_connected.send_replace(false);
                    }
                    other => tracing::debug!(event = %other, "NATS"),
                }
            }
        });
    let client = options
        .connect(settings.url.as_str())
        .await
        .map_err(|err| connect_error(&settings.url, err.kind(), &err.to_string()))?;
    let info = client.server_info();
    check_server(&settings.url, &info.version, info.jetstream)?;
    let mut connected = connected;
    // The Connected event may not have been delivered yet; the client is connected now.
    connected.mark_changed();
    Ok(Connection {
        client,
        connected,
        url: settings.url.clone(),
    })
}

async fn login(options: ConnectOptions, auth: &Auth) -> std::io::Result<ConnectOptions> {
    Ok(match auth {
        Auth::None => options,
        Auth::Creds(path) => options.credentials_file(path).await?,
        Auth::UserPassword { user, password } => {
            options.user_and_password(user.clone(), password.clone())
        }
        Auth::Token(token) => options.token(token.clone()),
    })
}

fn creds_path(auth: &Auth) -> &std::path::Path {
    match auth {
        Auth::Creds(path) => path,
        _ => std::path::Path::new(""),
    }
}

/// One line for each way connecting fails.
fn connect_error(url: &str, kind: ConnectErrorKind, detail: &str) -> Error {
    match kind {
        ConnectErrorKind::AuthorizationViolation | ConnectErrorKind::Authentication => {
            Error::runtime(format!("the NATS server at {url} refused swarm's credentials"))
                .with_hint("check SWARM_NATS_CREDS, SWARM_NATS_USER and SWARM_NATS_PASSWORD, or SWARM_NATS_TOKEN")
        }
        ConnectErrorKind::Tls => Error::runtime(format!("TLS with the NATS server at {url} failed: {detail}"))
            .with_hint("a tls:// URL needs a server with TLS whose certificate this machine trusts"),
        ConnectErrorKind::Dns | ConnectErrorKind::ServerParse => {
            Error::runtime(format!("cannot find the NATS server at {url}: {detail}"))
                .with_hint("check the host name in SWARM_NATS_URL or the team file's [cluster] nats")
        }
        ConnectErrorKind::TimedOut | ConnectErrorKind::Io | ConnectErrorKind::MaxReconnects => {
            Error::runtime(format!("cannot reach the NATS server at {url}: {detail}")).with_hint(
                "start one with `nats-server -js -sd DIR`, or check SWARM_NATS_URL and the team file's [cluster] nats",
            )
        }
    }
}

/// Refuses a server older than 2.9 or without JetStream.
fn check_server(url: &str, version: &str, jetstream: bool) -> Result<()> {
    let mut parts = version
        .split(['.', '-'])
        .map(|part| part.parse::<u64>().unwrap_or(0));
    let found = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    if found < OLDEST_SERVER {
        return Err(Error::runtime(format!(
            "the NATS server at {url} runs {version}; swarm needs {}.{} or newer",
            OLDEST_SERVER.0, OLDEST_SERVER.1
        )));
    }
    if !jetstream {
        return Err(
            Error::runtime(format!("the NATS server at {url} has JetStream turned off"))
                .with_hint("start it with -js (and -sd DIR for where it keeps its files)"),
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_servers_and_servers_without_jetstream_are_refused() {
        assert!(check_server("nats://h", "2.9.10", true).is_ok());
        assert!(check_server("nats://h", "2.10.0-beta.1", true).is_ok());
        assert!(check_server("nats://h", "3.0.0", true).is_ok());
        let old = check_server("nats://h", "2.8.4", true).unwrap_err();
        assert!(old.message().contains("runs 2.8.4"), "{}", old.message());
        let plain = check_server("nats://h", "2.9.10", false).unwrap_err();
        assert!(plain.message().contains("JetStream turned off"));
    }

    #[test]
    fn every_failure_names_the_url() {
        for kind in [
            ConnectErrorKind::AuthorizationViolation,
            ConnectErrorKind::Tls,
            ConnectErrorKind::Dns,
            ConnectErrorKind::Io,
        ] {
            let err = connect_error("nats://h:1", kind, "detail");
            assert!(err.message().contains("nats://h:1"), "{}", err.message());
        }
    }
}
