//! What members spend (docs/ARCHITECTURE.md, "Costs and budgets"): the tokens of one model reply
//! as a line of the team's usage ledger, where they are read from in Claude Code's transcripts,
//! Codex's rollouts and Gemini CLI's session files, and what they cost at a model's prices. Data
//! and its rules only; no file is read here.

use std::collections::BTreeMap;
use std::ops::{Add, AddAssign};

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Tokens of the four kinds a vendor prices apart.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tokens {
    /// Input read at the full price (not from the cache, not written to it).
    #[serde(default)]
    pub input: u64,
    #[serde(default)]
    pub output: u64,
    /// Input written to the prompt cache.
    #[serde(default)]
    pub cache_write: u64,
    /// Input read from the prompt cache.
    #[serde(default)]
    pub cache_read: u64,
}

impl Tokens {
    pub fn total(&self) -> u64 {
        self.input + self.output + self.cache_write + self.cache_read
    }

    pub fn is_zero(&self) -> bool {
        self.total() == 0
    }
}

impl Add for Tokens {
    type Output = Self;
    fn add(self, other: Self) -> Self {
        Self {
            input: self.input + other.input,
            output: self.output + other.output,
            cache_write: self.cache_write + other.cache_write,
            cache_read: self.cache_read + other.cache_read,
        }
    }
}

impl AddAssign for Tokens {
    fn add_assign(&mut self, other: Self) {
        *self = *self + other;
    }
}

/// Where a usage line's figures were read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Source {
    /// A Claude Code transcript, followed by the member's supervisor.
    Claude,
    /// A Codex rollout, followed by the member's supervisor.
    Codex,
    /// A Gemini CLI session file, followed by the member's supervisor.
    Gemini,
    /// `swarm usage add`.
    Added,
}

/// Where in a followed file a usage line's reply was read: the file and the offset just past it,
/// so a supervisor started again reads on from there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Place {
    pub file: String,
    pub through: u64,
}

/// One line of `usage.jsonl`: one model reply, or one `swarm usage add`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UsageLine {
    /// RFC 3339, milliseconds, UTC: when swarm counted it.
    pub at: String,
    pub member: String,
    /// The model the reply named; none when `usage add` was not told.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(flatten)]
    pub tokens: Tokens,
    pub source: Source,
    /// The reply's id (Claude's `message.id`, Codex's `response_id`, Gemini CLI's message `id`):
    /// a reply is counted once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub place: Option<Place>,
}

/// The usage one assistant entry of a Claude Code transcript reports: its `message.id`, model
/// and tokens. Claude Code writes one entry per content block of a reply, each with the reply's
/// whole usage, so the caller counts an id once. Other entries, and replies Claude Code made up
/// itself (model `<synthetic>`, no tokens), give none.
pub fn claude_reply(line: &[u8]) -> Option<(String, String, Tokens)> {
    let entry: Value = serde_json::from_slice(line).ok()?;
    if entry.get("type")?.as_str()? != "assistant" {
        return None;
    }
    let message = entry.get("message")?;
    let id = message.get("id")?.as_str()?.to_owned();
    let model = message.get("model")?.as_str()?.to_owned();
    let usage = message.get("usage")?;
    let count = |field: &str| usage.get(field).and_then(Value::as_u64).unwrap_or(0);
    let tokens = Tokens {
        input: count("input_tokens"),
        output: count("output_tokens"),
        cache_write: count("cache_creation_input_tokens"),
        cache_read: count("cache_read_input_tokens"),
    };
    (!tokens.is_zero()).then_some((id, model, tokens))
}

/// What one line of a Codex 0.169.0 rollout tells of usage. Codex writes two records per model
/// response: a `token_usage_record` with the response's id and usage, and an `event_msg`
/// `token_count` with the thread's running total and the same usage again but no id; only the
/// first is taken, once per `response_id`. Neither names the model: the `turn_context` of the
/// response's turn does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodexLine {
    /// A turn began with `model`.
    Turn { turn: String, model: String },
    /// A model response used `tokens`.
    Reply {
        id: String,
        turn: Option<String>,
        tokens: Tokens,
    },
}

/// The usage a line of a Codex rollout tells, if any. Codex's `input_tokens` includes the cached
/// input and what was written to the cache; its `output_tokens` includes the reasoning.
pub fn codex_line(line: &[u8]) -> Option<CodexLine> {
    let entry: Value = serde_json::from_slice(line).ok()?;
    let payload = entry.get("payload")?;
    let text = |value: &Value, field: &str| value.get(field)?.as_str().map(str::to_owned);
    match entry.get("type")?.as_str()? {
        "turn_context" => Some(CodexLine::Turn {
            turn: text(payload, "turn_id")?,
            model: text(payload, "model")?,
        }),
        "token_usage_record" => {
            let usage = payload.get("usage")?;
            let count = |field: &str| usage.get(field).and_then(Value::as_u64).unwrap_or(0);
            let cache_read = count("cached_input_tokens");
            let cache_write = count("cache_write_input_tokens");
            let tokens = Tokens {
                input: count("input_tokens").saturating_sub(cache_read + cache_write),
                output: count("output_tokens"),
                cache_write,
                cache_read,
            };
            (!tokens.is_zero()).then_some(CodexLine::Reply {
                id: text(payload, "response_id")?,
                turn: text(payload, "turn_id"),
                tokens,
            })
        }
        _ => None,
    }
}

/// The usage one line of a Gemini CLI 0.61.0 session file (`chats/session-*.jsonl`) reports: a
/// model message of its own (`type` `gemini`, with `id`, `model` and `tokens`). Gemini CLI writes
/// a message again as it gains tool calls, so the caller counts an id once; the `$set` records
/// that rewrite the whole history on a resume are not counted (their older messages have lost
/// their tokens). Its `input` includes the cached input; `thoughts` are billed as output and
/// `tool` (tool-use prompt) as input.
pub fn gemini_reply(line: &[u8]) -> Option<(String, String, Tokens)> {
    let entry: Value = serde_json::from_slice(line).ok()?;
    if entry.get("type")?.as_str()? != "gemini" {
        return None;
    }
    let id = entry.get("id")?.as_str()?.to_owned();
    let model = entry.get("model")?.as_str()?.to_owned();
    let usage = entry.get("tokens")?;
    let count = |field: &str| usage.get(field).and_then(Value::as_u64).unwrap_or(0);
    let cache_read = count("cached");
    let tokens = Tokens {
        input: (count("input") + count("tool")).saturating_sub(cache_read),
        output: count("output") + count("thoughts"),
        cache_write: 0,
        cache_read,
    };
    (!tokens.is_zero()).then_some((id, model, tokens))
}

/// A count of tokens as a float, for money and shares: exact below 2^53 tokens, far beyond any
/// budget.
#[allow(clippy::cast_precision_loss)]
fn as_f64(tokens: u64) -> f64 {
    tokens as f64
}

/// A model's prices, US dollars per million tokens of each kind.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub struct Price {
    pub input: f64,
    pub output: f64,
    pub cache_write: f64,
    pub cache_read: f64,
}

impl Price {
    /// What `tokens` cost at these prices, in US dollars.
    pub fn of(&self, tokens: &Tokens) -> f64 {
        let million = 1_000_000.0;
        (as_f64(tokens.input) * self.input
            + as_f64(tokens.output) * self.output
            + as_f64(tokens.cache_write) * self.cache_write
            + as_f64(tokens.cache_read) * self.cache_read)
            / million
    }
}

/// Prices by model name.
pub type Prices = BTreeMap<String, Price>;

/// The price list swarm ships (`crates/core/prices.toml`): per model, with the date the
/// figures were checked and where.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceList {
    pub checked: String,
    pub source: Vec<String>,
    pub models: Prices,
}

/// The price list swarm ships.
pub fn shipped_prices() -> &'static PriceList {
    static LIST: std::sync::OnceLock<PriceList> = std::sync::OnceLock::new();
    LIST.get_or_init(|| {
        toml::from_str(include_str!("../../prices.toml"))
            .unwrap_or_else(|err| panic!("the shipped prices.toml does not parse: {err}"))
    })
}

/// The price of `model`: the team's own (`[prices]` in its team file) before the shipped list;
/// none for a model neither knows (shown as `?`, never guessed).
pub fn price_of<'a>(model: &str, team: &'a Prices) -> Option<&'a Price> {
    team.get(model)
        .or_else(|| shipped_prices().models.get(model))
}

/// What `tokens` of `model` cost, or none when the model has no known price (or is not known).
pub fn cost_of(model: Option<&str>, tokens: &Tokens, team: &Prices) -> Option<f64> {
    price_of(model?, team).map(|price| price.of(tokens))
}

/// What a member or the team may spend: dollars, tokens, or both (the first reached counts).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limit {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
}

impl Limit {
    /// How much of the limit `spend` has used, as a fraction (1.0: all of it); none without a
    /// limit. Unpriced tokens count toward `tokens` only.
    pub fn used(&self, spend: &Spend) -> Option<f64> {
        let by_usd = self.usd.map(|usd| {
            if usd > 0.0 {
                spend.usd / usd
            } else {
                f64::INFINITY
            }
        });
        let by_tokens = self.tokens.map(|tokens| {
            if tokens > 0 {
                as_f64(spend.tokens.total()) / as_f64(tokens)
            } else {
                f64::INFINITY
            }
        });
        match (by_usd, by_tokens) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        }
    }

    /// `$20.00`, `5.0M tokens`, or both.
    pub fn describe(&self) -> String {
        let parts: Vec<String> = self
            .usd
            .map(dollars)
            .into_iter()
            .chain(self.tokens.map(|t| format!("{} tokens", token_count(t))))
            .collect();
        parts.join(" or ")
    }
}

/// What happens when a budget is spent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnExceed {
    /// The member is asked to shut down, then stopped as `swarm stop` does.
    #[default]
    Stop,
    /// Only an alert.
    Notify,
}

/// A team's `[budget]`: the team's limit, each member's, and what happens when one is spent.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budget {
    #[serde(flatten)]
    pub team: Limit,
    #[serde(default)]
    pub on_exceed: OnExceed,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub members: BTreeMap<String, Limit>,
}

/// The share of a budget at which an alert is given, in percent.
pub const ALERT_PERCENT: u32 = 80;

/// Tokens by model (none: `usage add` without `--model`).
pub type ByModel = BTreeMap<Option<String>, Tokens>;

/// What some tokens cost: the dollars of those whose model has a price, and whether any had
/// none (then the money shown is `?`, or a floor `$1.20+?`, never a guess).
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Spend {
    pub tokens: Tokens,
    pub usd: f64,
    pub unpriced: bool,
}

impl Spend {
    /// What `by_model` cost at `prices` (the team's, over the shipped list).
    pub fn of(by_model: &ByModel, prices: &Prices) -> Self {
        by_model
            .iter()
            .map(|(model, tokens)| Self::of_model(model.as_deref(), *tokens, prices))
            .fold(Self::default(), Self::add)
    }

    pub fn of_model(model: Option<&str>, tokens: Tokens, prices: &Prices) -> Self {
        let cost = cost_of(model, &tokens, prices);
        Self {
            tokens,
            usd: cost.unwrap_or(0.0),
            unpriced: cost.is_none() && !tokens.is_zero(),
        }
    }

    /// The money, for a person: `$0.0123`, `$1.20+?` (some tokens unpriced), `?` (none priced).
    pub fn money(&self) -> String {
        match (self.unpriced, self.usd > 0.0 || self.tokens.is_zero()) {
            (false, _) => dollars(self.usd),
            (true, true) => format!("{}+?", dollars(self.usd)),
            (true, false) => "?".to_owned(),
        }
    }
}

impl Add for Spend {
    type Output = Self;
    fn add(self, other: Self) -> Self {
        Self {
            tokens: self.tokens + other.tokens,
            usd: self.usd + other.usd,
            unpriced: self.unpriced || other.unpriced,
        }
    }
}

/// Dollars for a person: cents once there are some, four places below a cent.
pub fn dollars(usd: f64) -> String {
    if usd >= 0.01 || usd == 0.0 {
        format!("${usd:.2}")
    } else {
        format!("${usd:.4}")
    }
}

/// A count of tokens for a person: `950`, `12.3k`, `4.5M`.
pub fn token_count(tokens: u64) -> String {
    match tokens {
        0..1_000 => tokens.to_string(),
        1_000..1_000_000 => format!("{:.1}k", as_f64(tokens) / 1e3),
        _ => format!("{:.1}M", as_f64(tokens) / 1e6),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An assistant entry of a real Claude Code 2.1.332 transcript, the first block of a reply
    /// of text and two tool calls , copied whole.
    const REPLY: &str = r#"{"parentUuid":"916471c6-cbb6-4b6b-b28f-b7baf0eba4b3","isSidechain":false,"message":{"id":"msg_00000000000000386b07ec1f","type":"message","role":"assistant","model":"claude-opus-5-5","content":[{"type":"text","text":"Running two commands."}],"stop_reason":"tool_use","stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":5,"output_tokens_details":{"thinking_tokens":0},"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":0},"inference_geo":"","iterations":[],"speed":"standard","fallback_credit":null},"stop_details":null},"apiBlockIndex":0,"requestId":"req_00000000000000396b07ec1f","requestRef":"4e7cb6ae-0f76-4ff4-8635-02259ff80a7b","requestedModel":"claude-opus-5-5","promptCacheRequested":"5m","type":"assistant","uuid":"44ebdd07-5191-48cf-9393-53151eeea9dc","timestamp":"2026-11-26T08:21:51.326Z","effort":"medium","perTurnEffort":"medium","madeBy":"model","userType":"external","entrypoint":"sdk-cli","cwd":"/tmp/research-26/A","sessionId":"cccccccc-cccc-4ccc-8ccc-cccccccccccc","version":"2.1.332","gitBranch":"HEAD"}"#;

    /// A subagent's entry of a real transcript (`<session>/subagents/agent-*.jsonl`).
    const SIDECHAIN: &str = r#"{"parentUuid":"8bcd8296-7d70-44c1-95d4-9e84b4ccbd84","isSidechain":true,"agentId":"a55e70c3153868a55","message":{"id":"msg_00000000000000566b07ed08","type":"message","role":"assistant","model":"claude-opus-5-5","content":[{"type":"text","text":"OK."}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":10,"cache_creation_input_tokens":7,"cache_read_input_tokens":3,"output_tokens":5,"output_tokens_details":{"thinking_tokens":0},"server_tool_use":{"web_search_requests":0,"web_fetch_requests":0},"service_tier":"standard","cache_creation":{"ephemeral_1h_input_tokens":0,"ephemeral_5m_input_tokens":7},"inference_geo":"","iterations":[],"speed":"standard","fallback_credit":null},"stop_details":null},"apiBlockIndex":0,"requestId":"req_00000000000000576b07ed08","type":"assistant","uuid":"445e3491-480a-443f-a71a-a3918635cc66","timestamp":"2026-11-26T08:25:44.513Z","cwd":"/tmp/research-26/A","sessionId":"f0f0f0f0-f0f0-4f0f-8f0f-f0f0f0f0f0f0","version":"2.1.332"}"#;

    #[test]
    fn an_assistant_entry_gives_its_reply_id_model_and_four_kinds_of_tokens() {
        let (id, model, tokens) = claude_reply(REPLY.as_bytes()).unwrap();
        assert_eq!(id, "msg_00000000000000386b07ec1f");
        assert_eq!(model, "claude-opus-5-5");
        assert_eq!(
            tokens,
            Tokens {
                input: 10,
                output: 5,
                cache_write: 0,
                cache_read: 0
            }
        );
        let (_, _, side) = claude_reply(SIDECHAIN.as_bytes()).unwrap();
        assert_eq!((side.cache_write, side.cache_read), (7, 3));
    }

    #[test]
    fn other_entries_and_made_up_replies_give_no_usage() {
        let user = r#"{"type":"user","message":{"role":"user","content":"hi"},"uuid":"u"}"#;
        let cost =
            r#"{"type":"cost-state","sessionId":"s","totalCostUSD":0.00028,"modelUsage":{}}"#;
        let synthetic = r#"{"type":"assistant","message":{"id":"x","model":"<synthetic>","usage":{"input_tokens":0,"output_tokens":0,"cache_creation_input_tokens":0,"cache_read_input_tokens":0}}}"#;
        for line in [user, cost, synthetic, "not json", ""] {
            assert_eq!(claude_reply(line.as_bytes()), None, "{line}");
        }
    }

    /// A model response in a real Codex 0.169.0 rollout: its turn's `turn_context` (trimmed to
    /// the fields read), then its two usage records, copied whole.
    const CODEX_TURN: &str = r#"{"timestamp":"2026-11-26T08:17:21.279Z","ordinal":5,"type":"turn_context","payload":{"turn_id":"01a216ee-3b1d-78e2-8bc9-3ccf425d93cb","root_turn_id":"01a216ee-3b1d-78e2-8bc9-3ccf425d93cb","cwd":"/tmp/research-26/cxA","approval_policy":"never","model":"gpt-5.1-codex"}}"#;
    const CODEX_USAGE: &str = r#"{"timestamp":"2026-11-26T08:17:21.406Z","ordinal":11,"type":"token_usage_record","payload":{"thread_id":"01a216ee-3a62-7de2-ac13-c2e50d8c3cd8","turn_id":"01a216ee-3b1d-78e2-8bc9-3ccf425d93cb","session_id":"01a216ee-3a62-7de2-ac13-c2e50d8c3cd8","root_turn_id":"01a216ee-3b1d-78e2-8bc9-3ccf425d93cb","response_id":"resp_8f66599c1017407b8480d81e","usage":{"input_tokens":1200,"cached_input_tokens":200,"cache_write_input_tokens":0,"output_tokens":34,"reasoning_output_tokens":5,"total_tokens":1234},"turn_token_usage":{"input_tokens":1200,"cached_input_tokens":200,"cache_write_input_tokens":0,"output_tokens":34,"reasoning_output_tokens":5,"total_tokens":1234},"thread_token_usage":{"input_tokens":1200,"cached_input_tokens":200,"cache_write_input_tokens":0,"output_tokens":34,"reasoning_output_tokens":5,"total_tokens":1234}}}"#;
    const CODEX_COUNT: &str = r#"{"timestamp":"2026-11-26T08:17:21.407Z","ordinal":12,"type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":1200,"cached_input_tokens":200,"cache_write_input_tokens":0,"output_tokens":34,"reasoning_output_tokens":5,"total_tokens":1234},"last_token_usage":{"input_tokens":1200,"cached_input_tokens":200,"cache_write_input_tokens":0,"output_tokens":34,"reasoning_output_tokens":5,"total_tokens":1234},"last_usage_includes_reasoning":false,"model_context_window":258400},"rate_limits":{"limit_id":"codex","limit_name":null,"primary":null,"secondary":null,"credits":null,"individual_limit":null,"spend_control_reached":null,"plan_type":null,"rate_limit_reached_type":null}}}"#;

    #[test]
    fn a_codex_response_is_its_token_usage_record_and_its_model_its_turns() {
        assert_eq!(
            codex_line(CODEX_TURN.as_bytes()),
            Some(CodexLine::Turn {
                turn: "01a216ee-3b1d-78e2-8bc9-3ccf425d93cb".into(),
                model: "gpt-5.1-codex".into()
            })
        );
        // 1200 input of which 200 cached; 34 output with the reasoning: 1234 in all.
        let tokens = Tokens {
            input: 1000,
            output: 34,
            cache_write: 0,
            cache_read: 200,
        };
        assert_eq!(tokens.total(), 1234);
        assert_eq!(
            codex_line(CODEX_USAGE.as_bytes()),
            Some(CodexLine::Reply {
                id: "resp_8f66599c1017407b8480d81e".into(),
                turn: Some("01a216ee-3b1d-78e2-8bc9-3ccf425d93cb".into()),
                tokens
            })
        );
        // The running total that follows tells the same response again, without its id.
        assert_eq!(codex_line(CODEX_COUNT.as_bytes()), None);
        assert_eq!(
            codex_line(b"{\"type\":\"session_meta\",\"payload\":{}}"),
            None
        );
    }

    /// Lines of a real Gemini CLI 0.61.0 session file, copied whole: a model message, the same
    /// message written again with its tool call, and a `$set` of the history.
    const GEMINI_REPLY: &str = r#"{"id":"6727b466-02f2-498a-9ab1-50b9a483a008","timestamp":"2026-11-25T22:11:23.279Z","type":"gemini","content":"","thoughts":[],"tokens":{"input":1500,"output":40,"cached":300,"thoughts":12,"tool":0,"total":1552},"model":"gemini-3.8-flash"}"#;
    const GEMINI_AGAIN: &str = r#"{"id":"6727b466-02f2-498a-9ab1-50b9a483a008","timestamp":"2026-11-25T22:11:23.279Z","type":"gemini","content":"","thoughts":[],"tokens":{"input":1500,"output":40,"cached":300,"thoughts":12,"tool":0,"total":1552},"model":"gemini-3.8-flash","toolCalls":[{"id":"run_shell_command__run_shell_command_1795644683150_0","name":"run_shell_command","args":{"command":"echo from-gemini > made_by_gemini.txt","description":"make file"},"result":[{"functionResponse":{"id":"run_shell_command__run_shell_command_1795644683150_0","name":"run_shell_command","response":{"output":"<untrusted_context>\nOutput: (empty)\nProcess Group PGID: 12943\n</untrusted_context>"}}}],"status":"success","timestamp":"2026-11-25T22:11:24.282Z","resultDisplay":"","description":"echo from-gemini > made_by_gemini.txt","displayName":"Shell","renderOutputAsMarkdown":false}]}"#;
    const GEMINI_SET: &str = r#"{"$set":{"messages":[{"id":"d04923d38bb0f6017037e74183378ef4","timestamp":"2026-11-25T22:11:21.231Z","type":"user","content":[{"text":"<session_context>\nThis is the Gemini CLI. We are setting up the context for our chat.\nToday's date is Wednesday, November 25, 2026 (formatted according to the user's locale).\nMy operating system is: linux\nThe project's temporary directory is: /tmp/cg-research/g1/home/.gemini/tmp/proj\n- **Workspace Directories:**\n  - /tmp/cg-research/g1/proj\n- **Directory Structure:**\n\nShowing up to 200 items (files + folders). Folders or files indicated with ... contain more items not shown, were ignored, or the display limit (200 items) was reached.\n\n/tmp/cg-research/g1/proj/\n└───.git/...\n\n\n</session_context>"}]}],"lastUpdated":"2026-11-25T22:11:21.231Z"}}"#;

    #[test]
    fn a_gemini_message_gives_its_id_model_and_tokens_and_a_history_rewrite_none() {
        let (id, model, tokens) = gemini_reply(GEMINI_REPLY.as_bytes()).unwrap();
        assert_eq!(id, "6727b466-02f2-498a-9ab1-50b9a483a008");
        assert_eq!(model, "gemini-3.8-flash");
        // input 1500 of which 300 cached; output 40 and 12 of thought: 1552 in all.
        assert_eq!(
            tokens,
            Tokens {
                input: 1200,
                output: 52,
                cache_write: 0,
                cache_read: 300
            }
        );
        assert_eq!(tokens.total(), 1552);
        assert_eq!(gemini_reply(GEMINI_AGAIN.as_bytes()).unwrap().0, id);
        assert_eq!(gemini_reply(GEMINI_SET.as_bytes()), None);
        let user = r#"{"id":"u","type":"user","content":[{"text":"hi"}]}"#;
        assert_eq!(gemini_reply(user.as_bytes()), None);
    }

    #[test]
    fn a_price_is_per_million_tokens_of_each_kind() {
        let price = Price {
            input: 4.0,
            output: 20.0,
            cache_write: 5.0,
            cache_read: 0.2,
        };
        // Claude Code's own figure for two replies of (10 in, 5 out) on claude-opus-5-5.
        let tokens = Tokens {
            input: 20,
            output: 10,
            ..Tokens::default()
        };
        assert!((price.of(&tokens) - 0.00028).abs() < 1e-12);
        let cached = Tokens {
            cache_write: 1_000_000,
            cache_read: 1_000_000,
            ..Tokens::default()
        };
        assert!((price.of(&cached) - 5.2).abs() < 1e-9);
    }

    #[test]
    fn the_shipped_list_parses_and_an_unknown_model_has_no_price() {
        let list = shipped_prices();
        assert!(!list.models.is_empty());
        assert!(!list.source.is_empty());
        let team = Prices::new();
        assert_eq!(
            cost_of(Some("no-such-model"), &Tokens::default(), &team),
            None
        );
        assert_eq!(cost_of(None, &Tokens::default(), &team), None);
        let mut own = Prices::new();
        own.insert(
            "no-such-model".into(),
            Price {
                input: 1.0,
                output: 1.0,
                cache_write: 1.0,
                cache_read: 1.0,
            },
        );
        let tokens = Tokens {
            input: 1_000_000,
            ..Tokens::default()
        };
        assert_eq!(cost_of(Some("no-such-model"), &tokens, &own), Some(1.0));
    }

    #[test]
    fn money_is_shown_as_far_as_it_is_known() {
        let known = Tokens {
            input: 1_000_000,
            ..Tokens::default()
        };
        let mut by_model = ByModel::new();
        by_model.insert(Some("claude-opus-5-5".into()), known);
        let spend = Spend::of(&by_model, &Prices::new());
        assert_eq!(spend.money(), "$4.00");
        by_model.insert(Some("no-such-model".into()), known);
        let partial = Spend::of(&by_model, &Prices::new());
        assert_eq!(partial.money(), "$4.00+?");
        assert_eq!(partial.tokens.input, 2_000_000);
        let unknown = Spend::of_model(None, known, &Prices::new());
        assert_eq!(unknown.money(), "?");
        assert_eq!(Spend::default().money(), "$0.00");
        assert_eq!(dollars(0.00028), "$0.0003");
        assert_eq!(token_count(12_345), "12.3k");
    }

    #[test]
    fn a_usage_line_is_one_flat_json_object() {
        let line = UsageLine {
            at: "2026-11-26T08:00:00.000Z".into(),
            member: "bob".into(),
            model: Some("claude-opus-5-5".into()),
            tokens: Tokens {
                input: 10,
                output: 5,
                cache_write: 1,
                cache_read: 2,
            },
            source: Source::Claude,
            id: Some("msg_1".into()),
            place: Some(Place {
                file: "/t/s.jsonl".into(),
                through: 99,
            }),
        };
        let text = serde_json::to_string(&line).unwrap();
        assert_eq!(
            text,
            r#"{"at":"2026-11-26T08:00:00.000Z","member":"bob","model":"claude-opus-5-5","input":10,"output":5,"cacheWrite":1,"cacheRead":2,"source":"claude","id":"msg_1","place":{"file":"/t/s.jsonl","through":99}}"#
        );
        assert_eq!(serde_json::from_str::<UsageLine>(&text).unwrap(), line);
    }
}
