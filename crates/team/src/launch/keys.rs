//! Where a teammate's verify key goes at launch (docs/ARCHITECTURE.md, "Signed lead messages"):
//! `<ms>.<base64url SPKI>` in `SWARM_LEAD_VERIFY_KEY` for every profile (swarm's own readers in
//! its pane take it from its supervisor's environment), and for Claude Code also as
//! `--lead-verify-key`. The key pair itself is made by the signing agent (`member/signer/`).

use std::collections::BTreeMap;

use crate::format::config::Member;
pub use crate::format::settings::Profile;

/// The variable a member's pane carries its verify key in.
pub(crate) const KEY_VAR: &str = "SWARM_LEAD_VERIFY_KEY";

/// Claude Code's flag for it.
pub(crate) const KEY_FLAG: &str = "--lead-verify-key";

/// What `up --dry-run` shows in place of a key, which only a launch makes.
pub const MADE_AT_LAUNCH: &str = "<made-at-launch>";

/// Launches `member` with verify key `key`: in its argv (Claude Code), its environment `env`,
/// and config.json's copy. A key of an earlier launch is replaced.
pub fn apply(member: &mut Member, env: &mut BTreeMap<String, String>, key: &str) {
    if member.profile == Some(Profile::Claude)
        && let Some(argv) = &mut member.argv
    {
        if let Some(at) = argv.iter().position(|a| a == KEY_FLAG) {
            argv.drain(at..(at + 2).min(argv.len()));
        }
        argv.extend([KEY_FLAG.to_owned(), key.to_owned()]);
    }
    env.insert(KEY_VAR.to_owned(), key.to_owned());
    if let Some(keys) = &mut member.env_keys
        && !keys.iter().any(|k| k == KEY_VAR)
    {
        keys.push(KEY_VAR.to_owned());
        keys.sort();
    }
    member.lead_verify_key = Some(key.to_owned());
}
