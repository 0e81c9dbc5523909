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
        /// opencode: with mcp, `swarm mcp` among its MCP servers (`OPENCODE_CONFIG_CONTENT`);
        /// otherwise as generic
        Opencode = "opencode",
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

/// What network a fenced member's program has (docs/ARCHITECTURE.md, "Fencing members"):
/// `"full"`, `"none"`, or a list of `"host:port"` it may reach through swarm's proxy.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum SandboxNetwork {
    /// The host's network, as an unfenced member has
    #[default]
    Full,
    /// None at all: a network namespace of its own with only loopback
    None,
    /// Only loopback, and through its supervisor's proxy these hosts and no other
    Only(Vec<AllowedHost>),
}

impl SandboxNetwork {
    /// Whether the sandbox has a network namespace of its own (no host network).
    pub fn own_namespace(&self) -> bool {
        !matches!(self, Self::Full)
    }

    /// The hosts its proxy lets it reach, none unless it has an allow-list.
    pub fn allowed(&self) -> &[AllowedHost] {
        match self {
            Self::Only(hosts) => hosts,
            Self::Full | Self::None => &[],
        }
    }
}

/// As a team file and config.json write it: `"full"`, `"none"`, or the list.
#[derive(Serialize, Deserialize)]
#[serde(untagged)]
enum NetworkAsWritten {
    Named(String),
    Only(Vec<String>),
}

impl Serialize for SandboxNetwork {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Full => serializer.serialize_str("full"),
            Self::None => serializer.serialize_str("none"),
            Self::Only(hosts) => serializer.collect_seq(hosts.iter().map(ToString::to_string)),
        }
    }
}

impl<'de> Deserialize<'de> for SandboxNetwork {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        match NetworkAsWritten::deserialize(deserializer)? {
            NetworkAsWritten::Named(name) => match name.as_str() {
                "full" => Ok(Self::Full),
                "none" => Ok(Self::None),
                other => Err(D::Error::custom(format!(
                    "a sandbox's network is \"full\", \"none\" or a list, not {other:?}"
                ))),
            },
            NetworkAsWritten::Only(hosts) => hosts
                .iter()
                .map(|host| host.parse())
                .collect::<Result<_, String>>()
                .map(Self::Only)
                .map_err(D::Error::custom),
        }
    }
}

/// One entry of a fenced member's allow-list: a host, by name (`example.com`), by every name
/// under a domain (`*.example.com`) or by IP address (`10.0.0.7`, `[::1]`), and one port. A
/// proxy's target matches it by the name the client asked for, never by what that resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedHost {
    host: HostPattern,
    port: u16,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum HostPattern {
    /// A name, lower case, without a final dot.
    Name(String),
    /// `*.example.com`: any name ending in `.example.com` (kept with its leading dot), not
    /// `example.com` itself.
    Under(String),
    Address(std::net::IpAddr),
}

impl AllowedHost {
    /// Whether the proxy may connect to `host` (as the client sent it, an IPv6 address with or
    /// without brackets) on `port`.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        if port != self.port {
            return false;
        }
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        match (&self.host, host.parse::<std::net::IpAddr>()) {
            (HostPattern::Address(allowed), Ok(address)) => *allowed == address,
            (HostPattern::Address(_), Err(_)) | (_, Ok(_)) => false,
            (HostPattern::Name(name), Err(_)) => *name == normal_name(host),
            (HostPattern::Under(suffix), Err(_)) => {
                let host = normal_name(host);
                host.len() > suffix.len() && host.ends_with(suffix.as_str())
            }
        }
    }
}

/// A host name as compared: lower case, without the final dot of a fully qualified name.
fn normal_name(host: &str) -> String {
    host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase()
}

impl std::str::FromStr for AllowedHost {
    type Err = String;

    /// `host:port`, `*.domain:port`, `1.2.3.4:port` or `[v6]:port`; a port from 1 to 65535.
    fn from_str(text: &str) -> Result<Self, String> {
        let bad = |why: &str| format!("{text:?} is not host:port ({why})");
        let (host, port) = text.rsplit_once(':').ok_or_else(|| bad("no port"))?;
        let port: u16 = port
            .parse()
            .ok()
            .filter(|port| *port != 0)
            .ok_or_else(|| bad("the port is a number from 1 to 65535"))?;
        let host = if let Some(inner) = host.strip_prefix('[') {
            let inner = inner
                .strip_suffix(']')
                .ok_or_else(|| bad("an unclosed ["))?;
            let address = inner
                .parse::<std::net::Ipv6Addr>()
                .map_err(|_| bad("not an IPv6 address in [ ]"))?;
            HostPattern::Address(address.into())
        } else if let Ok(address) = host.parse::<std::net::Ipv4Addr>() {
            HostPattern::Address(address.into())
        } else {
            let (under, name) = match host.strip_prefix("*.") {
                Some(rest) => (true, rest),
                None => (false, host),
            };
            let name = normal_name(name);
            let label_ok = |label: &str| {
                !label.is_empty()
                    && label.len() <= 63
                    && label
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            };
            if name.is_empty() || name.len() > 253 || !name.split('.').all(label_ok) {
                return Err(bad(
                    "a host is a name, *.domain, an IPv4 address or an IPv6 address in [ ]",
                ));
            }
            if under {
                HostPattern::Under(format!(".{name}"))
            } else {
                HostPattern::Name(name)
            }
        };
        Ok(Self { host, port })
    }
}

impl std::fmt::Display for AllowedHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.host {
            HostPattern::Name(name) => write!(f, "{name}:{}", self.port),
            HostPattern::Under(suffix) => write!(f, "*{suffix}:{}", self.port),
            HostPattern::Address(std::net::IpAddr::V6(address)) => {
                write!(f, "[{address}]:{}", self.port)
            }
            HostPattern::Address(address) => write!(f, "{address}:{}", self.port),
        }
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
    /// How `status` and `top` show whether a member is fenced: `no`, `yes`, `yes, no network`,
    /// `yes, listed hosts`.
    pub fn shown(fence: Option<&Self>) -> &'static str {
        match fence.map(|fence| &fence.network) {
            None => "no",
            Some(SandboxNetwork::Full) => "yes",
            Some(SandboxNetwork::None) => "yes, no network",
            Some(SandboxNetwork::Only(_)) => "yes, listed hosts",
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

    #[test]
    fn an_allow_list_entry_matches_the_name_or_address_it_names_and_its_port_only() {
        let entry = |text: &str| text.parse::<AllowedHost>().unwrap();
        let exact = entry("Example.COM.:443");
        assert_eq!(exact.to_string(), "example.com:443");
        assert!(exact.allows("example.com", 443));
        assert!(exact.allows("EXAMPLE.com.", 443));
        assert!(!exact.allows("example.com", 80));
        assert!(!exact.allows("www.example.com", 443));
        assert!(!exact.allows("example.com.evil.net", 443));
        let under = entry("*.example.com:443");
        assert!(under.allows("api.example.com", 443));
        assert!(under.allows("a.b.example.com", 443));
        assert!(!under.allows("example.com", 443));
        assert!(!under.allows("badexample.com", 443));
        let v4 = entry("127.0.0.1:8080");
        assert!(v4.allows("127.0.0.1", 8080));
        assert!(!v4.allows("localhost", 8080));
        let v6 = entry("[::1]:22");
        assert_eq!(v6.to_string(), "[::1]:22");
        assert!(v6.allows("[::1]", 22));
        assert!(v6.allows("0:0:0:0:0:0:0:1", 22));
        // A name is never matched as an address, nor an address as a name.
        assert!(!entry("localhost:22").allows("127.0.0.1", 22));
        for bad in [
            "example.com",
            "example.com:",
            "example.com:0",
            "example.com:65536",
            ":443",
            "exa mple.com:443",
            "*.:443",
            "[::1:22",
            "[example.com]:22",
            "http://example.com:443",
        ] {
            assert!(bad.parse::<AllowedHost>().is_err(), "{bad} was taken");
        }
        let network: SandboxNetwork =
            serde_json::from_str(r#"["example.com:443", "*.pypi.org:443"]"#).unwrap();
        assert_eq!(network.allowed().len(), 2);
        assert_eq!(
            serde_json::to_string(&network).unwrap(),
            r#"["example.com:443","*.pypi.org:443"]"#
        );
        assert_eq!(
            serde_json::to_string(&SandboxNetwork::None).unwrap(),
            r#""none""#
        );
        assert!(serde_json::from_str::<SandboxNetwork>(r#""some""#).is_err());
    }
}
