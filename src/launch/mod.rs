//! Starting members: the team file, each member's exact argv and environment, the team on disk,
//! the launch lock, the window layout, the panes, the tmux driver, worktrees, and the team file's
//! tasks.

pub(crate) mod argv;
pub(crate) mod environment;
pub(crate) mod keys;
pub(crate) mod layout;
pub(crate) mod lock;
pub(crate) mod panes;
pub(crate) mod prepare;
pub(crate) mod rerun;
pub(crate) mod tasks;
pub(crate) mod teamfile;
pub(crate) mod tmux;
pub(crate) mod worktree;
