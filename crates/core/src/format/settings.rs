//! The typed choices a member is made with: profile, colour, protocol, delivery, isolation, its
//! restart policy, the permission modes a plan approval may grant, and which inherited variables
//! its program keeps.
//! Each type is the one source of its spellings: serde reads and writes them in team files and
//! config.json, clap offers them as values.

use std::collections::BTreeSet;

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

/// Declares a choice: an enum whose every value has one spelling, shared by serde (team files,
/// config.json), clap (flags) and `as_str` (output).
macro_rules! choice {
    ($(#[$meta:meta])* $name:ident {
        $($(#[$variant_meta:meta])* $variant:ident = $text:literal,)+
    }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, ValueEnum)]
        pub enum $name {
            $($(#[$variant_meta])* #[serde(rename = $text)] #[value(name = $text)] $variant,)+
        }

        impl $name {
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $text,)+
                }
            }
        }
    };
}

choice! {
    #[derive(Default)]
    Profile {
        /// Claude Code: teammate identity flags and environment, as Claude Code's own teammates get
        Claude = "claude",
        /// Codex CLI: its turn-end `notify` program wired to `swarm hook codex`; resumed with
        /// `codex resume <id>`
        Codex = "codex",
        /// Gemini CLI: a chosen `--session-id`, its hooks wired to `swarm hook gemini`; resumed with
        /// `--resume <id>`
        Gemini = "gemini",
        /// aider: a chat history file of the member's own; resumed with `--restore-chat-history`
        Aider = "aider",
        /// Any other program: identity in SWARM_* variables only
        #[default]
        Generic = "generic",
    }
}

choice! {
    Color {
        Red = "red",
        Blue = "blue",
        Green = "green",
        Yellow = "yellow",
        Purple = "purple",
        Orange = "orange",
        Pink = "pink",
        Cyan = "cyan",
    }
}

choice! {
    #[derive(Default)]
    Protocol {
        /// The program reads its own inbox and answers requests itself
        #[default]
        Native = "native",
        /// The supervisor answers shutdown requests on the program's behalf
        Wrapper = "wrapper",
        /// The program answers no requests (a shell, a REPL): `down` stops it without asking or
        /// waiting, and a shutdown request to it is refused
        None = "none",
    }
}

choice! {
    #[derive(Default)]
    Delivery {
        /// The program runs `swarm recv`
        #[default]
        Pull = "pull",
        /// The supervisor pastes arriving messages into the pane
        Paste = "paste",
    }
}

choice! {
    #[derive(Default)]
    Isolation {
        /// The member works in its directory as it is
        #[default]
        None = "none",
        /// The member works in its own git worktree
        Worktree = "worktree",
    }
}

choice! {
    /// When a member's supervisor starts its program again after it ended on its own
    /// (docs/ARCHITECTURE.md, "Restart policies").
    #[derive(Default)]
    Restart {
        /// Never: its ending is its end
        #[default]
        Never = "never",
        /// After it failed (a non-zero exit or a crash), up to restart_max times in a row
        OnFailure = "on-failure",
        /// After any ending of its own, failed or not, up to restart_max times in a row
        Always = "always",
    }
}

choice! {
    #[derive(Default)]
    /// What network a fenced member's program has (docs/ARCHITECTURE.md, "Fencing members")
    SandboxNetwork {
        /// The host's network, as an unfenced member has
        #[default]
        Full = "full",
        /// None at all: a network namespace of its own with only loopback
        None = "none",
    }
}

/// A fenced member's sandbox (`sandbox = true`, docs/ARCHITECTURE.md, "Fencing members"): the
/// extra paths it may write, the paths it may not see, and its network. Its working directory or
/// worktree is always writable; the rest of the file system read-only.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Fence {
    /// Absolute paths it may write besides its working directory.
    #[serde(default)]
    pub write: Vec<String>,
    /// Absolute paths it cannot see, besides those every fence hides.
    #[serde(default)]
    pub hide: Vec<String>,
    #[serde(default)]
    pub network: SandboxNetwork,
}

impl Fence {
    /// How `status` and `top` show whether a member is fenced: `no`, `yes`, `yes, no network`.
    pub fn shown(fence: Option<&Self>) -> &'static str {
        match fence.map(|fence| fence.network) {
            None => "no",
            Some(SandboxNetwork::Full) => "yes",
            Some(SandboxNetwork::None) => "yes, no network",
        }
    }
}

choice! {
    /// The permission modes Claude Code understands, which a plan approval may grant.
    PermissionMode {
        Default = "default",
        AcceptEdits = "acceptEdits",
        BypassPermissions = "bypassPermissions",
        Plan = "plan",
        DontAsk = "dontAsk",
    }
}

impl Color {
    /// The `index`-th teammate's colour.
    pub fn round_robin(index: usize) -> Self {
        let all = Self::value_variants();
        all[index % all.len()]
    }

    /// A colour as config.json records it; another tool may have written a name swarm lacks.
    pub fn parse(raw: &str) -> Option<Self> {
        Self::from_str(raw, false).ok()
    }

    /// The colour as a terminal shows it: the ANSI colour of the same name, and for those ANSI
    /// lacks the 256-colour palette's, as in tmux.
    pub fn ansi(self) -> anstyle::Color {
        use anstyle::{Ansi256Color, AnsiColor};
        match self {
            Self::Red => AnsiColor::Red.into(),
            Self::Blue => AnsiColor::Blue.into(),
            Self::Green => AnsiColor::Green.into(),
            Self::Yellow => AnsiColor::Yellow.into(),
            Self::Purple => AnsiColor::Magenta.into(),
            Self::Orange => Ansi256Color(208).into(),
            Self::Pink => Ansi256Color(205).into(),
            Self::Cyan => AnsiColor::Cyan.into(),
        }
    }

    /// The colour's name in tmux.
    pub fn tmux(self) -> &'static str {
        match self {
            Self::Purple => "magenta",
            Self::Orange => "colour208",
            Self::Pink => "colour205",
            other => other.as_str(),
        }
    }
}

/// Which variables of the environment a member's pane inherits its program keeps
/// (docs/ARCHITECTURE.md, "Secrets and the environment"). Names only, never values: config.json
/// records it as `envClear`, `envKeep` and `envRemove`, per member and, for members `spawn` adds
/// later, team-wide in `launch`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct EnvPolicy {
    /// `env_clear`: keep nothing inherited but `keep`.
    #[serde(
        rename = "envClear",
        default,
        skip_serializing_if = "std::ops::Not::not"
    )]
    pub clear: bool,
    /// `env_keep`: what `clear` keeps.
    #[serde(
        rename = "envKeep",
        default,
        skip_serializing_if = "BTreeSet::is_empty"
    )]
    pub keep: BTreeSet<String>,
    /// `env_remove`: what is removed, whatever else is kept.
    #[serde(
        rename = "envRemove",
        default,
        skip_serializing_if = "BTreeSet::is_empty"
    )]
    pub remove: BTreeSet<String>,
}

impl EnvPolicy {
    /// A member's own rules over the team's: its `env_clear` when it says one, else the team's;
    /// the names either keeps, and the names either removes.
    #[must_use]
    pub fn over(&self, own_clear: Option<bool>, team: &Self) -> Self {
        Self {
            clear: own_clear.unwrap_or(team.clear),
            keep: team.keep.union(&self.keep).cloned().collect(),
            remove: team.remove.union(&self.remove).cloned().collect(),
        }
    }

    /// Whether an inherited variable stays.
    pub fn keeps(&self, name: &str) -> bool {
        (!self.clear || self.keep.contains(name)) && !self.remove.contains(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// serde and clap must spell every value alike, or a team file and a flag would disagree.
    fn same_spelling<T: ValueEnum + Serialize>() {
        for value in T::value_variants() {
            let clap = value.to_possible_value().unwrap().get_name().to_owned();
            let serde = serde_json::to_value(value).unwrap();
            assert_eq!(serde, serde_json::Value::String(clap.clone()));
            assert_eq!(
                serde_json::to_value(value).unwrap().as_str(),
                Some(clap.as_str())
            );
        }
    }

    #[test]
    fn serde_and_clap_agree() {
        same_spelling::<Profile>();
        same_spelling::<Color>();
        same_spelling::<Protocol>();
        same_spelling::<Delivery>();
        same_spelling::<Isolation>();
        same_spelling::<PermissionMode>();
        same_spelling::<Restart>();
        assert_eq!(PermissionMode::AcceptEdits.as_str(), "acceptEdits");
    }

    #[test]
    fn colours_cycle_and_map_to_tmux_names() {
        assert_eq!(Color::round_robin(0), Color::Red);
        assert_eq!(Color::round_robin(9), Color::Blue);
        assert_eq!(Color::Purple.tmux(), "magenta");
        assert_eq!(Color::Orange.tmux(), "colour208");
        assert_eq!(Color::Pink.tmux(), "colour205");
        assert_eq!(Color::parse("cyan"), Some(Color::Cyan));
        assert_eq!(Color::parse("mauve"), None);
        let shown = |color: Color| {
            let style = anstyle::Style::new().fg_color(Some(color.ansi()));
            format!("{style}")
        };
        assert_eq!(shown(Color::Red), "\x1b[31m");
        assert_eq!(shown(Color::Purple), "\x1b[35m");
        assert_eq!(shown(Color::Orange), "\x1b[38;5;208m");
    }
}
