//! A fenced member's allow-list (`sandbox_network = ["host:port", …]`, docs/ARCHITECTURE.md,
//! "Fencing members"): its sandbox has a network namespace of its own, only loopback, and two
//! ends of one way out.
//!
//! - Outside, in the supervisor, [`serve`]: a proxy on a unix socket bound into the sandbox. It
//!   speaks HTTP (`CONNECT host:port`, and a plain request to an `http://` URL) and SOCKS5, and
//!   connects only to a target its allow-list names, by the name the client sent
//!   ([`AllowedHost::allows`]); anything else gets `403` (SOCKS5: "not allowed by ruleset") and
//!   [`Refusal`] tells the member's event stream.
//! - Inside, [`bridge_then_exec`] (`swarm fence-bridge`, the sandbox's first program): it listens
//!   on `127.0.0.1:<port>`, hands each connection to the proxy's socket unread, and becomes the
//!   member's program with `HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY` naming that port.
//!
//! A program that ignores those variables cannot connect anywhere but loopback: it fails closed.

#![allow(unsafe_code)]

use std::collections::HashSet;
use std::ffi::OsString;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::{TcpStream, UnixStream};

use crate::error::{Error, Result};
use crate::format::settings::AllowedHost;

/// The longest a client may take to say where it goes, and the proxy to connect there.
const HANDSHAKE_LIMIT: Duration = Duration::from_secs(30);

/// The longest request head the proxy reads.
const MAX_HEAD: usize = 16 * 1024;

/// What a fenced program is told: its loopback bridge for every proxy variable, and none for
/// its own loopback.
const PROXY_VARS: &[&str] = &["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"];
const ALL_PROXY_VARS: &[&str] = &["ALL_PROXY", "all_proxy"];
const NO_PROXY_VARS: &[&str] = &["NO_PROXY", "no_proxy"];
const NO_PROXY: &str = "localhost,127.0.0.1,::1";

/// Whom a refused target is told to, once a run for each target: a program that retries in a
/// loop would otherwise fill the event stream.
pub struct Refusal {
    told: Mutex<HashSet<String>>,
    tell: Box<dyn Fn(String) + Send + Sync>,
}

impl Refusal {
    /// `tell` gets `host:port` as the client asked for it; it runs on tokio's blocking pool.
    pub fn new(tell: impl Fn(String) + Send + Sync + 'static) -> Arc<Self> {
        Arc::new(Self {
            told: Mutex::new(HashSet::new()),
            tell: Box::new(tell),
        })
    }

    fn refused(self: &Arc<Self>, target: String) {
        tracing::info!("the fenced program's connection to {target} is refused");
        let first = self
            .told
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(target.clone());
        if first {
            let this = Arc::clone(self);
            tokio::task::spawn_blocking(move || (this.tell)(target));
        }
    }
}

/// Serves the proxy on `listener` for as long as the returned task runs (abort it when the run
/// ends). Nothing checks who connects: the socket is its owner's only, and whoever can reach it
/// from outside the sandbox has the host's network already.
pub fn serve(
    listener: std::os::unix::net::UnixListener,
    allowed: Vec<AllowedHost>,
    refusal: Arc<Refusal>,
) -> Result<tokio::task::JoinHandle<()>> {
    listener
        .set_nonblocking(true)
        .map_err(|err| Error::os("serve the fenced member's proxy", err))?;
    let listener = tokio::net::UnixListener::from_std(listener)
        .map_err(|err| Error::os("serve the fenced member's proxy", err))?;
    let allowed = Arc::new(allowed);
    Ok(tokio::spawn(async move {
        loop {
            let Ok((client, _)) = listener.accept().await else {
                continue;
            };
            let allowed = Arc::clone(&allowed);
            let refusal = Arc::clone(&refusal);
            tokio::spawn(async move {
                if let Err(err) = answer(client, &allowed, &refusal).await {
                    tracing::debug!("a fenced program's proxied connection: {err}");
                }
            });
        }
    }))
}

/// One connection from the sandbox: SOCKS5 if its first byte is 5, else HTTP.
async fn answer(
    mut client: UnixStream,
    allowed: &[AllowedHost],
    refusal: &Arc<Refusal>,
) -> std::io::Result<()> {
    let opened = tokio::time::timeout(HANDSHAKE_LIMIT, async {
        let first = client.read_u8().await?;
        if first == 5 {
            socks5(&mut client, allowed, refusal).await
        } else {
            http(&mut client, first, allowed, refusal).await
        }
    })
    .await
    .map_err(|_| {
        std::io::Error::new(std::io::ErrorKind::TimedOut, "the handshake took too long")
    })??;
    if let Some(mut upstream) = opened {
        tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    }
    Ok(())
}

/// Whether the list lets the program reach `host:port`.
fn allows(allowed: &[AllowedHost], host: &str, port: u16) -> bool {
    allowed.iter().any(|entry| entry.allows(host, port))
}

/// `host:port` or `[v6]:port`, as the proxy names a target.
fn target(host: &str, port: u16) -> String {
    if host.contains(':') && !host.starts_with('[') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// Connects to an allowed `host` (a name is resolved here, outside the sandbox).
async fn connect(host: &str, port: u16) -> std::io::Result<TcpStream> {
    let host = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host);
    TcpStream::connect((host, port)).await
}

/// An HTTP proxy request, its first byte read: `CONNECT host:port` opens a tunnel; a request for
/// an `http://` URL is sent on to its host in origin form. The upstream connection, once the
/// client has been answered; `None` when it was refused (and answered so).
async fn http(
    client: &mut UnixStream,
    first: u8,
    allowed: &[AllowedHost],
    refusal: &Arc<Refusal>,
) -> std::io::Result<Option<TcpStream>> {
    let mut head = vec![first];
    let end = loop {
        if let Some(at) = head.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        if head.len() > MAX_HEAD {
            return refuse_http(client, "431 Request Header Fields Too Large", "").await;
        }
        let mut chunk = [0u8; 4096];
        let read = client.read(&mut chunk).await?;
        if read == 0 {
            return Ok(None);
        }
        head.extend_from_slice(&chunk[..read]);
    };
    let rest = head.split_off(end);
    // The request line is text; the fields after it are sent on as they came.
    let line_end = head
        .windows(2)
        .position(|w| w == b"\r\n")
        .unwrap_or(head.len());
    let fields = head.split_off(line_end);
    let request_line = String::from_utf8_lossy(&head);
    let mut words = request_line.split(' ');
    let (Some(method), Some(uri), Some(version), None) =
        (words.next(), words.next(), words.next(), words.next())
    else {
        return refuse_http(client, "400 Bad Request", "").await;
    };
    let Some((host, port, path)) = http_target(method, uri) else {
        return refuse_http(client, "400 Bad Request", "").await;
    };
    let named = target(&host, port);
    if !allows(allowed, &host, port) {
        refusal.refused(named.clone());
        let said = format!("swarm: {named} is not on this member's allow-list\n");
        return refuse_http(client, "403 Forbidden", &said).await;
    }
    let Ok(Ok(mut upstream)) = tokio::time::timeout(HANDSHAKE_LIMIT, connect(&host, port)).await
    else {
        return refuse_http(client, "502 Bad Gateway", "").await;
    };
    if method.eq_ignore_ascii_case("CONNECT") {
        client
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .await?;
    } else {
        upstream
            .write_all(format!("{method} {path} {version}").as_bytes())
            .await?;
        upstream.write_all(&fields).await?;
    }
    upstream.write_all(&rest).await?;
    Ok(Some(upstream))
}

/// The host, port and origin-form path an HTTP proxy request names: `CONNECT host:port`, or an
/// absolute `http://host[:port]/path` (port 80 unless named).
fn http_target(method: &str, uri: &str) -> Option<(String, u16, String)> {
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = uri.rsplit_once(':')?;
        return Some((host.to_owned(), port.parse().ok()?, String::new()));
    }
    let scheme = uri.get(..7)?;
    if !scheme.eq_ignore_ascii_case("http://") {
        return None;
    }
    let rest = &uri[7..];
    let split = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(split);
    let authority = authority
        .rsplit_once('@')
        .map_or(authority, |(_, host)| host);
    let (host, port) = match authority.rsplit_once(':') {
        Some((host, port)) if !port.contains(']') => (host, port.parse().ok()?),
        _ => (authority, 80),
    };
    let path = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("/{path}")
    };
    (!host.is_empty()).then(|| (host.to_owned(), port, path))
}

async fn refuse_http(
    client: &mut UnixStream,
    status: &str,
    said: &str,
) -> std::io::Result<Option<TcpStream>> {
    let answer = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{said}",
        said.len()
    );
    client.write_all(answer.as_bytes()).await?;
    Ok(None)
}

/// A SOCKS5 handshake, its version byte read: no authentication, then `CONNECT` to an address
/// or a name (`socks5h://`).
async fn socks5(
    client: &mut UnixStream,
    allowed: &[AllowedHost],
    refusal: &Arc<Refusal>,
) -> std::io::Result<Option<TcpStream>> {
    let methods = usize::from(client.read_u8().await?);
    let mut offered = vec![0u8; methods];
    client.read_exact(&mut offered).await?;
    if !offered.contains(&0) {
        client.write_all(&[5, 0xff]).await?;
        return Ok(None);
    }
    client.write_all(&[5, 0]).await?;
    let mut request = [0u8; 4];
    client.read_exact(&mut request).await?;
    let host = match request[3] {
        1 => {
            let mut octets = [0u8; 4];
            client.read_exact(&mut octets).await?;
            std::net::Ipv4Addr::from(octets).to_string()
        }
        3 => {
            let length = usize::from(client.read_u8().await?);
            let mut name = vec![0u8; length];
            client.read_exact(&mut name).await?;
            String::from_utf8_lossy(&name).into_owned()
        }
        4 => {
            let mut octets = [0u8; 16];
            client.read_exact(&mut octets).await?;
            std::net::Ipv6Addr::from(octets).to_string()
        }
        _ => return socks_reply(client, 8).await,
    };
    let port = client.read_u16().await?;
    if request[0] != 5 || request[1] != 1 {
        // Only CONNECT: no BIND, no UDP.
        return socks_reply(client, 7).await;
    }
    if !allows(allowed, &host, port) {
        refusal.refused(target(&host, port));
        return socks_reply(client, 2).await;
    }
    match tokio::time::timeout(HANDSHAKE_LIMIT, connect(&host, port)).await {
        Ok(Ok(upstream)) => {
            client.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]).await?;
            Ok(Some(upstream))
        }
        _ => socks_reply(client, 5).await,
    }
}

/// A SOCKS5 failure: `code` 2 not allowed by ruleset, 5 refused, 7 command or 8 address type
/// not supported.
async fn socks_reply(client: &mut UnixStream, code: u8) -> std::io::Result<Option<TcpStream>> {
    client.write_all(&[5, code, 0, 1, 0, 0, 0, 0, 0, 0]).await?;
    Ok(None)
}

/// Inside the sandbox: listens on a loopback port, leaves a process of its own (in a session of
/// its own, so the terminal's signals do not reach it; the sandbox's end ends it) to hand each
/// connection to `proxy`, and runs `program` in this process's place with the proxy variables
/// naming that port. Returns only when `program` cannot be run.
pub fn bridge_then_exec(proxy: &Path, program: &[OsString]) -> Result<std::convert::Infallible> {
    let (name, args) = program
        .split_first()
        .ok_or_else(|| Error::usage("swarm fence-bridge runs a program: none was given"))?;
    let listener = std::net::TcpListener::bind((std::net::Ipv4Addr::LOCALHOST, 0))
        .map_err(|err| Error::os("listen on loopback for the proxy", err))?;
    let port = listener
        .local_addr()
        .map_err(|err| Error::os("listen on loopback for the proxy", err))?
        .port();
    leave_bridge(listener, proxy.to_path_buf())?;
    let http = format!("http://127.0.0.1:{port}");
    let socks = format!("socks5h://127.0.0.1:{port}");
    let mut command = std::process::Command::new(name);
    command.args(args);
    for var in PROXY_VARS {
        command.env(var, &http);
    }
    for var in ALL_PROXY_VARS {
        command.env(var, &socks);
    }
    for var in NO_PROXY_VARS {
        command.env(var, NO_PROXY);
    }
    let err = command.exec();
    Err(Error::io_on_named("run", Path::new(name), err))
}

/// Forks the bridge off: a grandchild, so that the program is not its parent (init of the
/// sandbox's pid namespace adopts it, and the namespace's end kills it). Forking is sound only
/// while this process has one thread, which is checked.
fn leave_bridge(listener: std::net::TcpListener, proxy: PathBuf) -> Result<()> {
    use nix::unistd::{ForkResult, fork, setsid};
    let threads = std::fs::read_dir("/proc/self/task").map_or(0, Iterator::count);
    if threads != 1 {
        return Err(Error::runtime(format!(
            "swarm fence-bridge cannot fork with {threads} threads"
        )));
    }
    // SAFETY: this process has one thread (checked above), so the child's copy of its memory
    // is consistent and it may do anything, as a single-threaded program may.
    match unsafe { fork() }.map_err(|err| Error::os("start the proxy bridge", err.into()))? {
        ForkResult::Parent { child } => {
            let _ = nix::sys::wait::waitpid(child, None);
            Ok(())
        }
        ForkResult::Child => {
            let _ = setsid();
            // SAFETY: as above, still one thread.
            if let Ok(ForkResult::Child) = unsafe { fork() } {
                quiet_stdio();
                bridge(listener, &proxy);
            }
            std::process::exit(0);
        }
    }
}

/// The pane's terminal is the program's, not the bridge's.
fn quiet_stdio() {
    if let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        let _ = nix::unistd::dup2_stdin(&null);
        let _ = nix::unistd::dup2_stdout(&null);
        let _ = nix::unistd::dup2_stderr(&null);
    }
}

/// Hands each connection to the proxy's socket, until the sandbox ends.
fn bridge(listener: std::net::TcpListener, proxy: &Path) {
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()
    else {
        return;
    };
    runtime.block_on(async {
        let Ok(()) = listener.set_nonblocking(true) else {
            return;
        };
        let Ok(listener) = tokio::net::TcpListener::from_std(listener) else {
            return;
        };
        loop {
            let Ok((mut inside, _)) = listener.accept().await else {
                continue;
            };
            let proxy = proxy.to_path_buf();
            tokio::spawn(async move {
                if let Ok(mut outside) = UnixStream::connect(&proxy).await {
                    let _ = splice(&mut inside, &mut outside).await;
                }
            });
        }
    });
}

async fn splice(
    a: &mut (impl AsyncRead + AsyncWrite + Unpin),
    b: &mut (impl AsyncRead + AsyncWrite + Unpin),
) -> std::io::Result<()> {
    tokio::io::copy_bidirectional(a, b).await.map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http_request_names_its_target_as_a_proxy_reads_it() {
        assert_eq!(
            http_target("CONNECT", "example.com:443"),
            Some(("example.com".into(), 443, String::new()))
        );
        assert_eq!(
            http_target("CONNECT", "[::1]:8443"),
            Some(("[::1]".into(), 8443, String::new()))
        );
        assert_eq!(http_target("CONNECT", "example.com"), None);
        assert_eq!(
            http_target("GET", "http://Example.com/a?b"),
            Some(("Example.com".into(), 80, "/a?b".into()))
        );
        assert_eq!(
            http_target("GET", "http://127.0.0.1:8080"),
            Some(("127.0.0.1".into(), 8080, "/".into()))
        );
        assert_eq!(
            http_target("GET", "http://user@10.0.0.1:81/x"),
            Some(("10.0.0.1".into(), 81, "/x".into()))
        );
        assert_eq!(http_target("GET", "/origin-form"), None);
        assert_eq!(http_target("GET", "https://example.com/"), None);
        assert_eq!(target("::1", 22), "[::1]:22");
        assert_eq!(target("example.com", 22), "example.com:22");
    }
}
