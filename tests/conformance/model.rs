//! A loopback stand-in for the model API that the conformance tests own: an HTTP/1.1 server on
//! 127.0.0.1 answering `POST /v1/messages` as the Messages API does, streaming (SSE), from a
//! script of tool calls, and recording every request so a test can assert what the model saw.
//!
//! The script is a list of chains (`Model::on`): a chain starts when a main request matches its
//! trigger (say, a teammate-message with a given text arrives), answers it with its first step,
//! and answers each follow-up that carries the results of its last step's tool calls with its
//! next step. A step with no tool call, or a follow-up after the last step, ends the chain. A main
//! request no chain takes gets a short text and `end_turn`, so Claude Code goes idle.
//!
//! Side requests (no tools offered: a session title, a summary) are answered harmlessly and take
//! no step. Every response has its own `msg_…` id and every tool call its own `toolu_…` id:
//! Claude Code groups its transcript by message id and matches results by tool id.

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::{self, JoinHandle};
use std::time::Instant;

use serde_json::{Value, json};
use tiny_http::{Header, Method, Response, Server};

use crate::harness::PATIENCE;

/// What a main request no chain takes is answered with.
pub(crate) const IDLE_TEXT: &str = "OK.";

/// One block of a scripted answer.
#[derive(Debug, Clone)]
pub(crate) enum Block {
    Text(String),
    ToolUse { name: String, input: Value },
}

/// A text block.
pub(crate) fn text(text: impl Into<String>) -> Block {
    Block::Text(text.into())
}

/// A tool call.
pub(crate) fn tool(name: &str, input: Value) -> Block {
    Block::ToolUse {
        name: name.to_owned(),
        input,
    }
}

/// The ToolSearch call that loads deferred tools (SendMessage, the Task tools, MCP tools) into
/// the session: Claude Code lists them by name only until then, and a direct call fails.
pub(crate) fn load_tools(names: &[&str]) -> Block {
    tool(
        "ToolSearch",
        json!({ "query": format!("select:{}", names.join(",")) }),
    )
}

/// A plain SendMessage.
pub(crate) fn send_message(to: &str, message: &str) -> Block {
    tool(
        "SendMessage",
        json!({ "to": to, "message": message, "summary": message }),
    )
}

/// One step of a chain: the blocks it answers with, made from the request it answers.
pub(crate) type Step = Box<dyn Fn(&Request) -> Vec<Block> + Send>;

/// A step that answers with the same blocks whatever it answers.
pub(crate) fn step(blocks: Vec<Block>) -> Step {
    Box::new(move |_| blocks.clone())
}

/// The step that approves the latest shutdown request of the conversation, as Claude Code's own
/// instructions ask: SendMessage to the lead with a `shutdown_response` naming its request id.
/// (A chain loads SendMessage first, so the request is earlier than the request this answers.)
pub(crate) fn approve_shutdown() -> Step {
    Box::new(|request: &Request| {
        const KEY: &str = "\"requestId\":\"";
        let text = request.conversation_text();
        let request_id = text
            .rfind(KEY)
            .and_then(|at| text[at + KEY.len()..].split('"').next())
            .unwrap_or_else(|| panic!("no shutdown request id in the conversation: {text:?}"))
            .to_owned();
        vec![tool(
            "SendMessage",
            json!({ "to": "team-lead", "message": {
                "type": "shutdown_response", "request_id": request_id, "approve": true } }),
        )]
    })
}

/// Whether the request brings a teammate-message containing `needle`.
pub(crate) fn brings(needle: &'static str) -> impl Fn(&Request) -> bool + Send + 'static {
    move |request: &Request| {
        request
            .teammate_messages()
            .iter()
            .any(|m| m.body.contains(needle))
    }
}

/// Whether the request's fresh messages mention `needle` anywhere: a message Claude Code queued
/// from its socket (`<cross-session-message …>`), a tool result.
pub(crate) fn mentions(needle: &'static str) -> impl Fn(&Request) -> bool + Send + 'static {
    move |request: &Request| request.fresh_text().contains(needle)
}

/// Which chain `Model::on` added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ChainId(usize);

/// One tool call a chain made, with its result once the follow-up brought it.
#[derive(Debug, Clone)]
pub(crate) struct Call {
    pub(crate) tool: String,
    pub(crate) id: String,
    /// Shown when a test fails.
    #[allow(dead_code)]
    pub(crate) input: Value,
    /// The result's text, `None` until it arrives.
    pub(crate) result: Option<String>,
    pub(crate) is_error: bool,
}

/// One request the stand-in answered, as it came, with what it answered.
#[derive(Debug, Clone)]
pub(crate) struct Request {
    pub(crate) method: String,
    pub(crate) path: String,
    /// `X-Claude-Code-Session-Id`.
    pub(crate) session: Option<String>,
    pub(crate) body: Value,
    /// The content blocks answered, with the ids they were given.
    pub(crate) reply: Vec<Value>,
    /// The chain that answered it, if one did.
    pub(crate) chain: Option<ChainId>,
}

impl Request {
    /// A request of the main loop: it offers tools. Side requests offer none.
    pub(crate) fn is_main(&self) -> bool {
        self.path.starts_with("/v1/messages")
            && !self.path.starts_with("/v1/messages/count_tokens")
            && self.body["tools"].as_array().is_some_and(|t| !t.is_empty())
    }

    /// The messages after the model's last answer: what is new to it in this request.
    pub(crate) fn fresh(&self) -> &[Value] {
        let messages = self.body["messages"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        let start = messages
            .iter()
            .rposition(|m| m["role"] == "assistant")
            .map_or(0, |at| at + 1);
        &messages[start..]
    }

    /// The text of the fresh messages, tool results included, one block a line.
    pub(crate) fn fresh_text(&self) -> String {
        let mut out = String::new();
        for message in self.fresh() {
            push_text(&mut out, &message["content"]);
        }
        out
    }

    /// The text of every message of the conversation so far.
    pub(crate) fn conversation_text(&self) -> String {
        let mut out = String::new();
        for message in self.body["messages"].as_array().into_iter().flatten() {
            push_text(&mut out, &message["content"]);
        }
        out
    }

    /// The `<teammate-message …>` elements among the fresh messages, as Claude Code shows a
    /// mailbox message to its model.
    pub(crate) fn teammate_messages(&self) -> Vec<TeammateMessage> {
        let text = self.fresh_text();
        let mut found = Vec::new();
        let mut rest = text.as_str();
        while let Some(at) = rest.find("<teammate-message") {
            rest = &rest[at..];
            let Some(open_end) = rest.find('>') else {
                break;
            };
            let open = rest[..=open_end].to_owned();
            let body_and_more = &rest[open_end + 1..];
            let close = body_and_more
                .find("</teammate-message>")
                .unwrap_or(body_and_more.len());
            found.push(TeammateMessage {
                open,
                body: body_and_more[..close].trim().to_owned(),
            });
            rest = &body_and_more[close..];
        }
        found
    }

    /// The result of tool call `id` among the fresh messages: its text and whether it is an
    /// error.
    fn tool_result(&self, id: &str) -> Option<(String, bool)> {
        self.fresh()
            .iter()
            .filter_map(|message| message["content"].as_array())
            .flatten()
            .find(|block| block["type"] == "tool_result" && block["tool_use_id"] == id)
            .map(|block| {
                let mut text = String::new();
                push_text(&mut text, &block["content"]);
                (text, block["is_error"] == true)
            })
    }
}

/// A mailbox message as the model sees it.
#[derive(Debug, Clone)]
pub(crate) struct TeammateMessage {
    /// The opening tag with its attributes: `teammate_id`, `color`, `summary`, `verified`.
    pub(crate) open: String,
    pub(crate) body: String,
}

impl TeammateMessage {
    /// The value of attribute `name` of the opening tag.
    pub(crate) fn attribute(&self, name: &str) -> Option<&str> {
        let needle = format!(" {name}=\"");
        let start = self.open.find(&needle)? + needle.len();
        let len = self.open[start..].find('"')?;
        Some(&self.open[start..start + len])
    }
}

fn push_text(out: &mut String, content: &Value) {
    match content {
        Value::String(text) => {
            out.push_str(text);
            out.push('\n');
        }
        Value::Array(blocks) => {
            for block in blocks {
                match block["type"].as_str() {
                    Some("text") => push_text(out, &block["text"]),
                    Some("tool_result") => push_text(out, &block["content"]),
                    _ => {
                        out.push_str(&block.to_string());
                        out.push('\n');
                    }
                }
            }
        }
        Value::Null => {}
        other => {
            out.push_str(&other.to_string());
            out.push('\n');
        }
    }
}

struct Chain {
    trigger: Box<dyn Fn(&Request) -> bool + Send>,
    steps: VecDeque<Step>,
    started: bool,
    done: bool,
    /// The tool calls of the step answered last, whose results the next step waits for.
    awaiting: Vec<String>,
    calls: Vec<Call>,
}

#[derive(Default)]
struct State {
    chains: Vec<Chain>,
    requests: Vec<Request>,
    /// Why a step panicked while answering.
    failures: Vec<String>,
}

/// The stand-in: serves until dropped.
pub(crate) struct Model {
    url: String,
    server: Arc<Server>,
    shared: Arc<(Mutex<State>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Model {
    pub(crate) fn start() -> Self {
        let server = Arc::new(Server::http("127.0.0.1:0").expect("a loopback port"));
        let port = server.server_addr().to_ip().expect("an IP listener").port();
        let shared = Arc::new((Mutex::new(State::default()), Condvar::new()));
        let thread = {
            let server = Arc::clone(&server);
            let shared = Arc::clone(&shared);
            thread::spawn(move || {
                for request in server.incoming_requests() {
                    // A step that panics fails the test that waits, not the server.
                    let served = panic::catch_unwind(AssertUnwindSafe(|| serve(&shared, request)));
                    if let Err(panic) = served {
                        let why = panic
                            .downcast_ref::<String>()
                            .cloned()
                            .or_else(|| panic.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                            .unwrap_or_default();
                        let (state, changed) = &*shared;
                        lock(state).failures.push(why);
                        changed.notify_all();
                    }
                }
            })
        };
        Self {
            url: format!("http://127.0.0.1:{port}"),
            server,
            shared,
            thread: Some(thread),
        }
    }

    /// What `ANTHROPIC_BASE_URL` points at.
    pub(crate) fn url(&self) -> &str {
        &self.url
    }

    /// Adds a chain: the first main request `trigger` accepts gets `steps[0]`, and each follow-up
    /// with the results of a step's tool calls the next step.
    pub(crate) fn on(
        &self,
        trigger: impl Fn(&Request) -> bool + Send + 'static,
        steps: Vec<Step>,
    ) -> ChainId {
        let mut state = self.lock();
        state.chains.push(Chain {
            trigger: Box::new(trigger),
            steps: steps.into(),
            started: false,
            done: false,
            awaiting: Vec::new(),
            calls: Vec::new(),
        });
        ChainId(state.chains.len() - 1)
    }

    /// Waits for chain `id` to end, and returns its tool calls with their results.
    #[track_caller]
    pub(crate) fn finished(&self, id: ChainId) -> Vec<Call> {
        let state = self.wait(&format!("chain {} to end", id.0), |state| {
            state.chains[id.0].done
        });
        state.chains[id.0].calls.clone()
    }

    /// Chain `id`'s tool calls so far, with the results that came back; for a chain whose last
    /// call may get no follow-up (an approved shutdown ends the session).
    pub(crate) fn calls(&self, id: ChainId) -> Vec<Call> {
        self.lock().chains[id.0].calls.clone()
    }

    /// Every request answered so far, in order.
    pub(crate) fn requests(&self) -> Vec<Request> {
        self.lock().requests.clone()
    }

    /// Waits for a request `matches` accepts, and returns the first such.
    #[track_caller]
    pub(crate) fn request(&self, what: &str, matches: impl Fn(&Request) -> bool) -> Request {
        let state = self.wait(what, |state| state.requests.iter().any(&matches));
        state.requests.iter().find(|r| matches(r)).cloned().unwrap()
    }

    /// Waits for the first main request whose fresh messages hold a teammate-message containing
    /// `needle`, and returns that message as the model saw it.
    #[track_caller]
    pub(crate) fn teammate_message(&self, needle: &str) -> TeammateMessage {
        let found = |request: &Request| {
            request
                .teammate_messages()
                .into_iter()
                .find(|m| m.body.contains(needle))
        };
        let request = self.request(&format!("a teammate-message with {needle:?}"), |r| {
            r.is_main() && found(r).is_some()
        });
        found(&request).unwrap()
    }

    #[track_caller]
    fn wait(&self, what: &str, mut done: impl FnMut(&State) -> bool) -> MutexGuard<'_, State> {
        let deadline = Instant::now() + PATIENCE;
        let (_, changed) = &*self.shared;
        let mut state = self.lock();
        while !done(&state) {
            assert!(
                state.failures.is_empty(),
                "the stand-in failed: {:?}",
                state.failures
            );
            let left = deadline.saturating_duration_since(Instant::now());
            assert!(
                !left.is_zero(),
                "timed out waiting for {what}; the model saw:\n{}",
                describe(&state.requests)
            );
            state = changed
                .wait_timeout(state, left)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        state
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        lock(&self.shared.0)
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        self.server.unblock();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The requests, one line each, for a failure message.
fn describe(requests: &[Request]) -> String {
    requests
        .iter()
        .map(|r| {
            let fresh: String = r.fresh_text().chars().take(300).collect();
            format!(
                "- {} {} main={} chain={:?} reply={} fresh={fresh:?}",
                r.method,
                r.path,
                r.is_main(),
                r.chain.map(|c| c.0),
                Value::Array(r.reply.clone())
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn serve(shared: &(Mutex<State>, Condvar), mut incoming: tiny_http::Request) {
    let mut raw = Vec::new();
    let _ = incoming.as_reader().read_to_end(&mut raw);
    let body: Value = serde_json::from_slice(&raw).unwrap_or(Value::Null);
    let path = incoming.url().to_owned();
    let session = incoming
        .headers()
        .iter()
        .find(|h| h.field.equiv("x-claude-code-session-id"))
        .map(|h| h.value.as_str().to_owned());
    let mut request = Request {
        method: incoming.method().to_string(),
        path: path.clone(),
        session,
        body,
        reply: Vec::new(),
        chain: None,
    };
    let route = path.split('?').next().unwrap_or_default().to_owned();
    let response = if *incoming.method() == Method::Post && route == "/v1/messages" {
        let content = {
            let mut state = lock(&shared.0);
            answer(&mut state, &mut request)
        };
        request.reply.clone_from(&content);
        let model = request.body["model"]
            .as_str()
            .unwrap_or("claude-stand-in")
            .to_owned();
        if request.body["stream"] == true {
            sse(&model, &content)
        } else {
            json_response(&message(&model, &content, true))
        }
    } else if route == "/v1/messages/count_tokens" {
        json_response(&json!({ "input_tokens": raw.len() / 4 + 1 }))
    } else if route.starts_with("/v1/models") {
        json_response(&json!({
            "data": [{ "type": "model", "id": "claude-stand-in", "display_name": "stand-in",
                       "created_at": "2026-01-01T00:00:00Z" }],
            "has_more": false, "first_id": "claude-stand-in", "last_id": "claude-stand-in"
        }))
    } else {
        json_response(&json!({}))
    };
    let _ = incoming.respond(response);
    let (state, changed) = shared;
    lock(state).requests.push(request);
    changed.notify_all();
}

/// The state, also after a step panicked holding it.
fn lock(state: &Mutex<State>) -> MutexGuard<'_, State> {
    state.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The content that answers a `/v1/messages` request, stepping the chain that takes it.
fn answer(state: &mut State, request: &mut Request) -> Vec<Value> {
    if !request.is_main() {
        return vec![side_answer(&request.body)];
    }
    // A follow-up of a chain first: the results of its last tool calls are here.
    let follow_up = state.chains.iter().position(|chain| {
        !chain.done
            && !chain.awaiting.is_empty()
            && chain
                .awaiting
                .iter()
                .all(|id| request.tool_result(id).is_some())
    });
    let chosen = follow_up.or_else(|| {
        state
            .chains
            .iter()
            .position(|chain| !chain.started && (chain.trigger)(request))
    });
    let Some(index) = chosen else {
        return vec![text_content(IDLE_TEXT)];
    };
    request.chain = Some(ChainId(index));
    let chain = &mut state.chains[index];
    for call in &mut chain.calls {
        if chain.awaiting.contains(&call.id)
            && let Some((result, is_error)) = request.tool_result(&call.id)
        {
            call.result = Some(result);
            call.is_error = is_error;
        }
    }
    chain.started = true;
    chain.awaiting.clear();
    let Some(step) = chain.steps.pop_front() else {
        chain.done = true;
        return vec![text_content(IDLE_TEXT)];
    };
    let blocks = step(request);
    if !blocks.iter().any(|b| matches!(b, Block::ToolUse { .. })) {
        chain.done = true;
    }
    blocks
        .into_iter()
        .map(|block| match block {
            Block::Text(text) => text_content(&text),
            Block::ToolUse { name, input } => {
                let id = fresh_id("toolu");
                chain.awaiting.push(id.clone());
                chain.calls.push(Call {
                    tool: name.clone(),
                    id: id.clone(),
                    input: input.clone(),
                    result: None,
                    is_error: false,
                });
                json!({ "type": "tool_use", "id": id, "name": name, "input": input })
            }
        })
        .collect()
}

fn text_content(text: &str) -> Value {
    json!({ "type": "text", "text": text })
}

/// A side request (a session title, a summary) gets a harmless answer: an object filling the
/// JSON schema it asks for, else a word.
fn side_answer(body: &Value) -> Value {
    let format = &body["output_config"]["format"];
    if format["type"] == "json_schema" {
        text_content(&fill_schema(&format["schema"]).to_string())
    } else {
        text_content("Untitled")
    }
}

fn fill_schema(schema: &Value) -> Value {
    match schema["type"].as_str() {
        Some("object") => {
            let required: Vec<&str> = schema["required"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let properties = schema["properties"].as_object();
            Value::Object(
                properties
                    .into_iter()
                    .flatten()
                    .filter(|(name, _)| required.is_empty() || required.contains(&name.as_str()))
                    .map(|(name, schema)| (name.clone(), fill_schema(schema)))
                    .collect(),
            )
        }
        Some("array") => json!([]),
        Some("integer" | "number") => json!(0),
        Some("boolean") => json!(false),
        _ => schema["enum"]
            .as_array()
            .and_then(|values| values.first().cloned())
            .unwrap_or_else(|| json!("Untitled")),
    }
}

/// `msg_…`, `toolu_…`, `req_…`: unique in the test process.
fn fresh_id(prefix: &str) -> String {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    format!(
        "{prefix}_standin{:016}{}",
        NEXT.fetch_add(1, Ordering::Relaxed),
        std::process::id()
    )
}

fn stop_reason(content: &[Value]) -> &'static str {
    if content.iter().any(|b| b["type"] == "tool_use") {
        "tool_use"
    } else {
        "end_turn"
    }
}

/// The input tokens every answer reports; its output tokens are [`OUTPUT_TOKENS`] once it ends.
pub(crate) const INPUT_TOKENS: u64 = 10;
pub(crate) const OUTPUT_TOKENS: u64 = 5;

fn usage(output_tokens: u64) -> Value {
    json!({ "input_tokens": INPUT_TOKENS, "output_tokens": output_tokens,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0 })
}

fn message(model: &str, content: &[Value], finished: bool) -> Value {
    json!({
        "id": fresh_id("msg"), "type": "message", "role": "assistant", "model": model,
        "content": if finished { Value::Array(content.to_vec()) } else { json!([]) },
        "stop_reason": if finished { Value::from(stop_reason(content)) } else { Value::Null },
        "stop_sequence": null,
        "usage": usage(if finished { OUTPUT_TOKENS } else { 1 }),
    })
}

fn header(name: &str, value: &str) -> Header {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).unwrap()
}

fn json_response(value: &Value) -> Response<std::io::Cursor<Vec<u8>>> {
    Response::from_data(value.to_string().into_bytes())
        .with_header(header("content-type", "application/json"))
        .with_header(header("request-id", &fresh_id("req")))
}

/// The event stream of one answer, as the Messages API streams it: message_start, ping, each
/// block (start, deltas, stop), message_delta with the stop reason, message_stop.
fn sse(model: &str, content: &[Value]) -> Response<std::io::Cursor<Vec<u8>>> {
    let mut out = String::new();
    let mut event = |name: &str, data: Value| {
        let _ = write!(out, "event: {name}\ndata: {data}\n\n");
    };
    event(
        "message_start",
        json!({ "type": "message_start", "message": message(model, content, false) }),
    );
    event("ping", json!({ "type": "ping" }));
    for (index, block) in content.iter().enumerate() {
        if block["type"] == "tool_use" {
            event(
                "content_block_start",
                json!({ "type": "content_block_start", "index": index, "content_block": {
                    "type": "tool_use", "id": block["id"], "name": block["name"], "input": {} } }),
            );
            let input = block["input"].to_string();
            for part in chunks(&input, 25) {
                event(
                    "content_block_delta",
                    json!({ "type": "content_block_delta", "index": index,
                            "delta": { "type": "input_json_delta", "partial_json": part } }),
                );
            }
        } else {
            event(
                "content_block_start",
                json!({ "type": "content_block_start", "index": index,
                        "content_block": { "type": "text", "text": "" } }),
            );
            for part in chunks(block["text"].as_str().unwrap_or_default(), 40) {
                event(
                    "content_block_delta",
                    json!({ "type": "content_block_delta", "index": index,
                            "delta": { "type": "text_delta", "text": part } }),
                );
            }
        }
        event(
            "content_block_stop",
            json!({ "type": "content_block_stop", "index": index }),
        );
    }
    event(
        "message_delta",
        json!({ "type": "message_delta",
                "delta": { "stop_reason": stop_reason(content), "stop_sequence": null },
                "usage": { "output_tokens": OUTPUT_TOKENS } }),
    );
    event("message_stop", json!({ "type": "message_stop" }));
    Response::from_data(out.into_bytes())
        .with_header(header("content-type", "text/event-stream"))
        .with_header(header("cache-control", "no-cache"))
        .with_header(header("request-id", &fresh_id("req")))
}

/// `text` in pieces of at most `size` characters; one empty piece for an empty text.
fn chunks(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return vec![String::new()];
    }
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}
