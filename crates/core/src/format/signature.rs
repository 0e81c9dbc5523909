//! Signed lead messages, exactly as Claude Code makes and checks them (docs/ARCHITECTURE.md,
//! "Signed lead messages").
//!
//! - A teammate is launched with `--lead-verify-key <ms>.<key>`: `<ms>` its launch time in epoch
//!   milliseconds, `<key>` the base64url (unpadded) DER SPKI of an ed25519 public key.
//! - Every entry from the lead, `user` or `system` in its inbox carries `lead_sig`: the base64url
//!   (unpadded) ed25519 signature over the UTF-8 bytes of the JSON array
//!   `["claude-team-lead-entry-v1", msg_id, from, timestamp, text, summary ?? null,
//!   color ?? null, from_plugin ?? null]`, serialised as JavaScript's `JSON.stringify` does.
//!   serde_json's compact output is the same: no spaces, non-ASCII (U+2028 and U+2029 too) and `/`
//!   as they are, `"`, `\` and `\b \f \n \r \t` escaped so, other control characters as
//!   `\u00xx` in lowercase hex.
//! - An entry from one of those senders is verified only if its `msg_id` was not seen before, its
//!   timestamp is not older than the teammate's start less 2 minutes, and the signature checks.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ed25519_dalek::pkcs8::{DecodePublicKey, EncodePublicKey};
use ed25519_dalek::{Signature, Signer as _, SigningKey, Verifier as _, VerifyingKey};
use serde_json::Value;

use crate::base::clock;
use crate::error::{Error, Result};
use crate::format::message::InboxMessage;

/// The first element of every signed array.
pub(crate) const DOMAIN: &str = "claude-team-lead-entry-v1";

/// The field that carries the signature.
pub const FIELD: &str = "lead_sig";

/// How much older than the teammate's start a signed entry may be.
pub(crate) const SKEW_MS: u64 = 2 * 60 * 1000;

/// Senders whose entries are signed besides the lead itself, by whatever name it has.
const OTHER_LEAD_SENDERS: [&str; 3] = ["team-lead", "user", "system"];

/// Whether an entry from `from` speaks for the lead, so it must be signed for a keyed teammate.
pub fn speaks_for_lead(from: &str, lead: &str) -> bool {
    from == lead || OTHER_LEAD_SENDERS.contains(&from)
}

/// The bytes signed for `message`.
pub(crate) fn payload(message: &InboxMessage) -> Vec<u8> {
    let fields = message.fields();
    let field = |key: &str| match fields.get(key) {
        None | Some(Value::Null) => Value::Null,
        Some(value) => value.clone(),
    };
    let array = Value::Array(vec![
        DOMAIN.into(),
        message.id().into_owned().into(),
        field("from"),
        field("timestamp"),
        field("text"),
        field("summary"),
        field("color"),
        field("from_plugin"),
    ]);
    serde_json::to_vec(&array).expect("a JSON value always serialises")
}

/// A teammate's key pair, on the lead's side.
pub struct KeyPair {
    secret: SigningKey,
    public: VerifyKey,
}

impl KeyPair {
    /// A fresh key pair for a teammate launched at `since_ms`.
    pub fn generate(since_ms: u64) -> Self {
        let secret = SigningKey::generate(&mut rand_core::OsRng);
        let public = VerifyKey {
            since_ms,
            key: secret.verifying_key(),
        };
        Self { secret, public }
    }

    pub fn public(&self) -> &VerifyKey {
        &self.public
    }

    /// `lead_sig` for `message`.
    pub fn sign(&self, message: &InboxMessage) -> String {
        URL_SAFE_NO_PAD.encode(self.secret.sign(&payload(message)).to_bytes())
    }
}

/// What a teammate verifies with: `<ms>.<base64url DER SPKI>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyKey {
    /// The teammate's launch time: entries older than this less [`SKEW_MS`] are refused.
    pub since_ms: u64,
    key: VerifyingKey,
}

impl VerifyKey {
    pub fn parse(text: &str) -> Result<Self> {
        let bad = |why: &str| Error::usage(format!("invalid lead verify key {text:?}: {why}"));
        let (ms, key) = text
            .split_once('.')
            .ok_or_else(|| bad("it is not <ms>.<key>"))?;
        let since_ms = ms.parse().map_err(|_| bad("<ms> is not a number"))?;
        let der = URL_SAFE_NO_PAD
            .decode(key.trim_end_matches('='))
            .map_err(|_| bad("<key> is not base64url"))?;
        let key = VerifyingKey::from_public_key_der(&der)
            .map_err(|_| bad("<key> is not an ed25519 public key in DER SPKI"))?;
        Ok(Self { since_ms, key })
    }

    /// A key nothing verifies with: for a member whose key cannot be read, so that whatever
    /// claims to come from the lead is forged.
    pub fn unusable() -> Self {
        Self {
            since_ms: u64::MAX,
            key: SigningKey::from_bytes(&[0; 32]).verifying_key(),
        }
    }

    /// `<ms>.<base64url DER SPKI>`, as `--lead-verify-key` takes it.
    pub fn encode(&self) -> String {
        let der = self
            .key
            .to_public_key_der()
            .expect("an ed25519 key always encodes");
        format!(
            "{}.{}",
            self.since_ms,
            URL_SAFE_NO_PAD.encode(der.as_bytes())
        )
    }

    /// Whether `message`'s signature checks and it is not too old; whether its `msg_id` was seen
    /// before is the reader's to say.
    pub fn check(&self, message: &InboxMessage) -> Verdict {
        let Some(signature) = message.fields().get(FIELD).and_then(Value::as_str) else {
            return Verdict::Forged("it is not signed");
        };
        if !message.fields().get("msg_id").is_some_and(Value::is_string) {
            return Verdict::Forged("it has no msg_id");
        }
        match clock::parse_ms(message.timestamp()) {
            Some(at) if at + SKEW_MS >= self.since_ms => {}
            _ => return Verdict::Forged("it is older than the teammate"),
        }
        let valid = URL_SAFE_NO_PAD
            .decode(signature)
            .ok()
            .and_then(|bytes| Signature::from_slice(&bytes).ok())
            .is_some_and(|signature| self.key.verify(&payload(message), &signature).is_ok());
        if valid {
            Verdict::Verified
        } else {
            Verdict::Forged("its signature does not check")
        }
    }
}

/// What a keyed reader makes of an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Signed by the lead's side for this teammate.
    Verified,
    /// It claims to speak for the lead and does not prove it: shown as forged, never acted on.
    Forged(&'static str),
    /// Not from a sender that must sign, or read by a member that has no key.
    NotClaimed,
}

impl Verdict {
    /// The sender of `message` as shown: marked `(forged)` when the message claims to come from
    /// the lead's side and does not prove it (docs/ARCHITECTURE.md, "Signed lead messages").
    pub fn sender(self, message: &InboxMessage) -> String {
        if self.is_forged() {
            format!("{}(forged)", message.from())
        } else {
            message.from().to_owned()
        }
    }

    /// `true`, `false`, or `None` when nothing was claimed: the `verified` field of `--json`.
    pub fn verified(self) -> Option<bool> {
        match self {
            Self::Verified => Some(true),
            Self::Forged(_) => Some(false),
            Self::NotClaimed => None,
        }
    }

    pub fn is_forged(self) -> bool {
        matches!(self, Self::Forged(_))
    }
}

/// How a member's reader judges what is in its inbox: the member's own verify key (from what it
/// was launched with), the lead's name, and the `msg_id`s it has already seen.
#[derive(Debug, Clone)]
pub struct Judge {
    pub key: Option<VerifyKey>,
    pub(crate) lead: String,
    seen: std::collections::HashSet<String>,
    /// Why whether an entry was taken before cannot be told, when it cannot: then nothing that
    /// claims the lead's side is verified.
    doubt: Option<&'static str>,
}

impl Judge {
    pub fn new(key: Option<VerifyKey>, lead: &str) -> Self {
        Self {
            key,
            lead: lead.to_owned(),
            seen: std::collections::HashSet::new(),
            doubt: None,
        }
    }

    /// Remembers `msg_id` as seen: a later entry with it is a replay.
    pub fn saw(&mut self, msg_id: &str) {
        self.seen.insert(msg_id.to_owned());
    }

    /// Whether `message` claims to speak for the lead to a member with a key: what is judged.
    pub(crate) fn claims(&self, message: &InboxMessage) -> bool {
        self.key.is_some() && speaks_for_lead(message.from(), &self.lead)
    }

    /// The `msg_id`s of those of `messages` that [`Judge::claims`] judges.
    pub fn claimed<'a>(&self, messages: impl IntoIterator<Item = &'a InboxMessage>) -> Vec<String> {
        messages
            .into_iter()
            .filter(|m| self.claims(m))
            .map(|m| m.id().into_owned())
            .collect()
    }

    /// From now on nothing that claims the lead's side is verified: whether it was taken before
    /// cannot be told, for the reason `why`.
    pub fn doubt(&mut self, why: &'static str) {
        self.doubt = Some(why);
    }

    /// The verdict on `message` for a reader that shows each message once: a verified one's
    /// `msg_id` is seen from now on, so its replay is forged.
    pub fn judge(&mut self, message: &InboxMessage) -> Verdict {
        let verdict = self.verdict(message);
        if verdict == Verdict::Verified {
            self.seen.insert(message.id().into_owned());
        }
        verdict
    }

    /// The verdict on `message`, remembering nothing: for a reader that acts on what it takes,
    /// and calls [`Judge::saw`] once it has taken it.
    pub fn verdict(&self, message: &InboxMessage) -> Verdict {
        let Some(key) = &self.key else {
            return Verdict::NotClaimed;
        };
        if !speaks_for_lead(message.from(), &self.lead) {
            return Verdict::NotClaimed;
        }
        if let Some(why) = self.doubt {
            return Verdict::Forged(why);
        }
        if self.seen.contains(message.id().as_ref()) {
            return Verdict::Forged("its msg_id was seen before");
        }
        key.check(message)
    }
}

/// The tests' one way to skip visibly (docs/ARCHITECTURE.md, "Testing"): node's crypto is the
/// reference for signatures, and a machine without node skips those tests and says so.
#[cfg(test)]
#[path = "../../../../tests/swarm/skip.rs"]
mod skip;

#[cfg(test)]
mod tests {
    use super::*;

    /// Signs `message` with `pair` in place.
    fn seal(pair: &KeyPair, message: &mut InboxMessage) {
        let signature = pair.sign(message);
        message.set_field(FIELD, signature.into());
    }

    fn message(from: &str, text: &str) -> InboxMessage {
        InboxMessage::new(from, text, Some("sum"), Some("blue"))
    }

    #[test]
    fn the_payload_is_the_array_json_stringify_makes() {
        let mut m = InboxMessage::new("team-lead", "a\u{2028}/\"\\\n\u{1}\u{7f}é", None, None);
        m.set_id("id-1");
        let text = String::from_utf8(payload(&m)).unwrap();
        let timestamp = m.timestamp().to_owned();
        assert_eq!(
            text,
            format!(
                "[\"claude-team-lead-entry-v1\",\"id-1\",\"team-lead\",\"{timestamp}\",\"a\u{2028}/\\\"\\\\\\n\\u0001\u{7f}é\",null,null,null]"
            )
        );
    }

    #[test]
    fn a_signed_message_verifies_and_every_change_breaks_it() {
        let pair = KeyPair::generate(clock::now_ms());
        let key = VerifyKey::parse(&pair.public().encode()).unwrap();
        let mut m = message("team-lead", "do it");
        seal(&pair, &mut m);
        assert_eq!(key.check(&m), Verdict::Verified);
        for (field, value) in [
            ("text", "do something else"),
            ("from", "user"),
            ("summary", "other"),
            ("color", "red"),
            ("msg_id", "another"),
            ("from_plugin", "x"),
        ] {
            let mut changed = m.clone();
            changed.set_field(field, value.into());
            assert!(key.check(&changed).is_forged(), "{field}");
        }
        // `read`, `type` and unknown fields are not signed.
        let mut marked = m.clone();
        marked.set_field("read", true.into());
        marked.set_field("type", "message".into());
        assert_eq!(key.check(&marked), Verdict::Verified);
        let other = KeyPair::generate(clock::now_ms());
        assert!(other.public().check(&m).is_forged());
    }

    #[test]
    fn entries_older_than_the_start_less_two_minutes_are_forged() {
        let start = clock::now_ms() + 10 * 60 * 1000;
        let pair = KeyPair::generate(start);
        let mut m = message("team-lead", "old");
        seal(&pair, &mut m);
        assert_eq!(
            pair.public().check(&m),
            Verdict::Forged("it is older than the teammate")
        );
        let pair = KeyPair::generate(clock::now_ms() + SKEW_MS / 2);
        let mut m = message("team-lead", "recent enough");
        seal(&pair, &mut m);
        assert_eq!(pair.public().check(&m), Verdict::Verified);
    }

    #[test]
    fn a_judge_refuses_replays_and_ignores_other_senders() {
        let pair = KeyPair::generate(clock::now_ms());
        let mut judge = Judge::new(Some(pair.public().clone()), "boss");
        let mut m = message("boss", "go");
        seal(&pair, &mut m);
        assert_eq!(judge.judge(&m), Verdict::Verified);
        assert_eq!(
            judge.judge(&m),
            Verdict::Forged("its msg_id was seen before")
        );
        assert_eq!(judge.judge(&message("bob", "hi")), Verdict::NotClaimed);
        assert!(judge.judge(&message("system", "hi")).is_forged());
        assert_eq!(
            Judge::new(None, "boss").judge(&message("boss", "hi")),
            Verdict::NotClaimed
        );
        // When whether it was taken before cannot be told, nothing of the lead's is verified.
        let mut doubting = Judge::new(Some(pair.public().clone()), "boss");
        let mut fresh = message("boss", "fresh");
        seal(&pair, &mut fresh);
        assert!(doubting.claims(&fresh));
        doubting.doubt("no record");
        assert_eq!(doubting.judge(&fresh), Verdict::Forged("no record"));
        assert_eq!(doubting.judge(&message("bob", "hi")), Verdict::NotClaimed);
    }

    /// Text that JSON.stringify and serde_json must write alike.
    const TRICKY: &str = "line\nsep\u{2028}para\u{2029}/slash \"q\" \\ \u{0}\u{1f}\u{7f} é 🦀 \t";

    /// Runs `script` with node and returns what it printed.
    fn node(script: &str, input: &str) -> String {
        use std::io::Write as _;
        let mut child = std::process::Command::new("node")
            .args(["-e", script])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("node runs");
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
        let output = child.wait_with_output().unwrap();
        assert!(output.status.success(), "node failed");
        String::from_utf8(output.stdout).unwrap()
    }

    /// Claude Code's side in node: the array, JSON.stringify, crypto's ed25519.
    const NODE_PAYLOAD: &str = "const payload = (e) => Buffer.from(JSON.stringify(['claude-team-lead-entry-v1', e.msg_id, e.from, e.timestamp, e.text, e.summary ?? null, e.color ?? null, e.from_plugin ?? null]), 'utf8');";

    #[test]
    fn node_signs_and_swarm_verifies() {
        if !skip::require("node") {
            return;
        }
        let script = format!(
            "{NODE_PAYLOAD}
const crypto = require('crypto');
const entry = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const {{ publicKey, privateKey }} = crypto.generateKeyPairSync('ed25519');
entry.lead_sig = crypto.sign(null, payload(entry), privateKey).toString('base64url');
const key = Date.now() + '.' + publicKey.export({{ type: 'spki', format: 'der' }}).toString('base64url');
process.stdout.write(JSON.stringify({{ key, entry }}));"
        );
        let mut entry = message("team-lead", TRICKY);
        entry.set_field("from_plugin", "plug".into());
        let out: Value =
            serde_json::from_str(&node(&script, &serde_json::to_string(&entry).unwrap())).unwrap();
        let key = VerifyKey::parse(out["key"].as_str().unwrap()).unwrap();
        let signed = InboxMessage::from_value(out["entry"].clone()).unwrap();
        assert_eq!(key.check(&signed), Verdict::Verified);
        let mut changed = signed.clone();
        changed.set_field("text", "changed".into());
        assert!(key.check(&changed).is_forged());
    }

    #[test]
    fn swarm_signs_and_node_verifies() {
        if !skip::require("node") {
            return;
        }
        let script = format!(
            "{NODE_PAYLOAD}
const crypto = require('crypto');
const {{ key, entry, tampered }} = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const der = Buffer.from(key.slice(key.indexOf('.') + 1), 'base64url');
const publicKey = crypto.createPublicKey({{ key: der, format: 'der', type: 'spki' }});
const check = (e) => crypto.verify(null, payload(e), publicKey, Buffer.from(e.lead_sig, 'base64url'));
process.stdout.write(JSON.stringify([check(entry), check(tampered)]));"
        );
        let pair = KeyPair::generate(clock::now_ms());
        for (summary, color) in [(Some("sum é"), Some("blue")), (None, None)] {
            let mut entry = InboxMessage::new("user", TRICKY, summary, color);
            seal(&pair, &mut entry);
            let mut tampered = entry.clone();
            tampered.set_field("summary", "other".into());
            let input = serde_json::json!({
                "key": pair.public().encode(),
                "entry": entry,
                "tampered": tampered,
            });
            assert_eq!(node(&script, &input.to_string()), "[true,false]");
        }
    }

    #[test]
    fn verify_keys_round_trip_and_bad_ones_are_refused() {
        let pair = KeyPair::generate(1_767_225_600_000);
        let encoded = pair.public().encode();
        assert!(
            encoded.starts_with("1767225600000.MCowBQYDK2VwAyEA"),
            "{encoded}"
        );
        assert!(!encoded.contains('='));
        assert_eq!(VerifyKey::parse(&encoded).unwrap(), *pair.public());
        for bad in ["", "123", "x.MCow", "1.!!!", "1.AAAA"] {
            assert!(VerifyKey::parse(bad).is_err(), "{bad}");
        }
    }
}
