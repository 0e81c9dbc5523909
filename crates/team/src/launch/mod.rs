//! Starting members: the team file, each member's exact argv and environment, the team on disk,
//! the launch lock, the window layout, the panes, the tmux driver, worktrees, the team file's tasks,
//! and a fenced member's sandbox.

pub mod argv;
pub mod environment;
pub mod keys;
pub mod layout;
pub mod lock;
pub mod panes;
pub mod prepare;
pub mod profiles;
pub mod rerun;
pub mod sandbox;
pub mod tasks;
pub mod teamfile;
pub mod tmux;
pub mod worktree;
