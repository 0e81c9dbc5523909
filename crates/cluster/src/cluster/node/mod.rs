//! `swarm node`: the one long-lived process per host that joins the host's files to the NATS
//! server (docs/ARCHITECTURE.md, "Across machines"). It holds the home's node lock, keeps
//! `node/node.json` saying whether it reaches the server, and runs each service below until
//! SIGTERM or SIGINT. While the server is unreachable it keeps running and keeps trying: local
//! messaging never depends on it, and what must cross hosts waits in the local files.

mod control;
mod inbound;
mod outbound;
mod presence;
mod roster;
pub(crate) mod shared;
mod sign;
mod tasks;
mod teams;
pub mod unit;

use std::sync::Arc;
use std::time::Duration;

use async_nats::jetstream;
use tokio::task::JoinSet;

use crate::base::clock;
use crate::base::names::Name;
use crate::base::process;
use crate::base::runtime::OffRuntime;
use crate::cluster::connection::{self, Connection};
use crate::cluster::node::shared::Node;
use crate::cluster::settings::Settings;
use crate::error::{Error, ErrorKind, Result};
use crate::store::node::{self as record, NodeLock, NodeRecord};
use crate::store::paths::Home;

/// How long to wait between attempts to reach a server that is not there yet.
const RETRY: Duration = Duration::from_secs(1);

/// Runs the node in the foreground until SIGTERM or SIGINT.
pub fn run(home: Home, name: Name, settings: Settings, socket: Option<String>) -> Result<()> {
    let _lock = NodeLock::take(&home)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| Error::os("start the node's runtime", err))?;
    runtime.block_on(async move {
        tokio::select! {
            result = serve(home, name, settings, socket) => result,
            () = stop_signal() => Ok(()),
        }
    })
}

async fn serve(home: Home, name: Name, settings: Settings, socket: Option<String>) -> Result<()> {
    let connection = reach(&home, &name, &settings).await?;
    let node = Arc::new(Node {
        home,
        name,
        js: jetstream::new(connection.client.clone()),
        client: connection.client,
        url: connection.url,
        connected: connection.connected,
        socket,
    });
    presence::refuse_namesake(&node).await?;
    let mut services: JoinSet<Result<()>> = JoinSet::new();
    services.spawn(report_connection(Arc::clone(&node)));
    services.spawn(control::serve(Arc::clone(&node)));
    services.spawn(roster::serve(Arc::clone(&node)));
    services.spawn(presence::serve(Arc::clone(&node)));
    services.spawn(outbound::serve(Arc::clone(&node)));
    services.spawn(inbound::serve(Arc::clone(&node)));
    services.spawn(tasks::serve(Arc::clone(&node)));
    // Every service runs until the node stops; the first to fail ends the node with its error.
    match services.join_next().await {
        Some(Ok(result)) => result,
        Some(Err(panic)) => std::panic::resume_unwind(panic.into_panic()),
        None => Ok(()),
    }
}

/// Connects, trying again while the server cannot be reached. Wrong credentials, a server too old
/// or without JetStream end the node at once: trying again would not help.
async fn reach(home: &Home, name: &Name, settings: &Settings) -> Result<Connection> {
    let mut said = false;
    loop {
        match connection::connect(settings, &format!("swarm node {name}")).await {
            Ok(connection) => return Ok(connection),
            Err(err) if unreachable(&err) => {
                if !said {
                    tracing::info!(target: "swarm::node",
                        "swarm node {name}: {}; trying again until it answers",
                        err.message()
                    );
                    write_record(home, name, &settings.url, false)?;
                    said = true;
                }
                tokio::time::sleep(RETRY).await;
            }
            Err(err) => return Err(err),
        }
    }
}

fn unreachable(err: &Error) -> bool {
    err.kind() == ErrorKind::Runtime && err.message().starts_with("cannot reach")
}

/// Keeps `node/node.json` saying whether the server is reached, and says so in the node's output.
async fn report_connection(node: Arc<Node>) -> Result<()> {
    let mut connected = node.connected.clone();
    loop {
        let now = *connected.borrow_and_update();
        let (home, name, url) = (node.home.clone(), node.name.clone(), node.url.clone());
        node.off_runtime(move |_| write_record(&home, &name, &url, now))
            .await?;
        if now {
            tracing::info!(target: "swarm::node", "swarm node {}: connected to {}", node.name, node.url);
        } else {
            tracing::info!(target: "swarm::node",
                "swarm node {}: lost the NATS server at {}; cross-host messages wait in the local files",
                node.name, node.url
            );
        }
        if connected.changed().await.is_err() {
            return Ok(());
        }
    }
}

fn write_record(home: &Home, name: &Name, url: &str, connected: bool) -> Result<()> {
    record::write(
        home,
        &NodeRecord {
            name: name.to_string(),
            pid: process::own_pid(),
            url: url.to_owned(),
            connected,
            since_ms: clock::now_ms(),
        },
    )
}

async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        std::future::pending::<()>().await;
        return;
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
}
