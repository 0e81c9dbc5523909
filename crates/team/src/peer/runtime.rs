//! Where peer sockets live: `$XDG_RUNTIME_DIR/swarm`, else `/tmp/swarm-<uid>`. The directory is
//! private (0700) and must be ours; a directory someone else could write to is refused, since a
//! socket there could be swapped for a stranger's.

use std::fs;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};

use nix::unistd::getuid;

use crate::error::{Error, Result};
use crate::store::paths::RuntimePaths;

/// This process's runtime directory (`store/paths.rs` names it), made private and checked.
pub(crate) fn runtime_dir() -> Result<RuntimePaths> {
    let runtime = RuntimePaths::current();
    let dir = runtime.dir();
    match fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => {}
        Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(err) => return Err(Error::io("create the peer socket directory", dir, err)),
    }
    let meta = fs::symlink_metadata(dir).map_err(|err| Error::io("inspect", dir, err))?;
    let uid = getuid().as_raw();
    let unsafe_dir = |why: String| {
        Error::runtime(format!(
            "refusing to use {} for peer sockets: {why}",
            dir.display()
        ))
        .with_hint(format!(
            "remove it, or `chmod 700 {}` if it is yours",
            dir.display()
        ))
    };
    if !meta.is_dir() {
        return Err(unsafe_dir("it is not a directory".into()));
    }
    if meta.uid() != uid {
        return Err(unsafe_dir(format!(
            "it belongs to uid {}, not {uid}",
            meta.uid()
        )));
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(unsafe_dir(format!("its mode is {mode:03o}, not 700")));
    }
    Ok(runtime)
}

/// The inode of the listening Unix socket bound at `path`, as the kernel lists them
/// (`/proc/net/unix`): with [`crate::base::process::holds_socket`], it tells which process
/// listens there.
pub(crate) fn listening_inode(path: &std::path::Path) -> Option<u64> {
    /// `__SO_ACCEPTCON`: the socket listens.
    const LISTENING: u32 = 0x0001_0000;
    let sockets = fs::read_to_string("/proc/net/unix").ok()?;
    let wanted = path.as_os_str().to_str()?;
    sockets.lines().skip(1).find_map(|line| {
        // `Num: RefCount Protocol Flags Type St Inode Path`; the path may hold spaces.
        let mut rest = line;
        let mut fields = Vec::with_capacity(7);
        for _ in 0..7 {
            rest = rest.trim_start_matches(' ');
            let end = rest.find(' ').unwrap_or(rest.len());
            fields.push(&rest[..end]);
            rest = &rest[end..];
        }
        let flags = u32::from_str_radix(fields[3], 16).ok()?;
        let inode = fields[6].parse().ok()?;
        (flags & LISTENING != 0 && rest.strip_prefix(' ') == Some(wanted)).then_some(inode)
    })
}

/// Whether some process has a Unix socket bound at `path`, as the kernel lists them
/// (`/proc/net/unix`): true even when the file itself was removed, so a socket that is only
/// missing is told from one never bound.
pub(crate) fn is_bound(path: &std::path::Path) -> bool {
    let Ok(sockets) = fs::read_to_string("/proc/net/unix") else {
        // Nothing can be told: say bound, so what was to be asked is not taken as unasked.
        return true;
    };
    let name = format!(" {}", path.display());
    sockets.lines().skip(1).any(|line| line.ends_with(&name))
}
