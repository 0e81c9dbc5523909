//! `swarm mcp`: swarm's messages, task list and decisions as MCP tools, served over stdio to the
//! agent that runs it (docs/ARCHITECTURE.md, "MCP"). Each tool call runs the swarm command it
//! stands for, as a child of this server: the same code, the same permission policy and the same
//! errors as at the command line, and the same identity, which comes from where the process runs
//! (the member whose pane runs the agent), never from an argument.

use std::process::Stdio;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncWriteExt;

use crate::cli::context::Context;
use crate::error::{Error, Result};

/// What the tools are, for the help and the man page.
const TOOLS_HELP: &str = "\
Tools: send (to, text, summary), inbox, receive (wait seconds, max), team, task_list (status,
owner, available), task_add (subject, description, owner, blocked_by), task_claim (id),
task_update (id, status, subject, description, owner), task_done (id, note), plan_submit (plan,
timeout; waits for the lead), permission_ask (tool, input, description, timeout; waits),
shutdown_answer (request_id, approve, reason).

Each call runs the swarm command it stands for, with --json: its answer is that command's JSON
output on one line, its error the line the command prints (\"swarm: ...\", and a hint). The
server acts as the member whose pane runs it, as every command does; no argument names who
calls. The team file's `mcp = true` registers it with Claude Code, Codex and Gemini CLI
(swarm-team(5)).";

#[derive(Debug, clap::Args)]
#[command(after_long_help = TOOLS_HELP)]
pub(crate) struct Args {}

/// The tools, as `tools/list` gives them: names and descriptions kept short, for every prompt
/// carries them (README, "Agents that speak MCP"; `tests/swarm/mcp.rs` bounds their size).
pub(crate) const TOOLS: &str = r#"[
{"name":"send","description":"Send a message to a member, '*' (all), 'user', or a uds: peer","inputSchema":{"type":"object","properties":{"to":{"type":"string"},"text":{"type":"string"},"summary":{"type":"string"}},"required":["to","text"]}},
{"name":"inbox","description":"Your unread messages, left unread","inputSchema":{"type":"object","properties":{}}},
{"name":"receive","description":"Take your unread messages; wait up to N seconds for one","inputSchema":{"type":"object","properties":{"wait":{"type":"number"},"max":{"type":"integer"}}}},
{"name":"team","description":"Members with state, activity and task","inputSchema":{"type":"object","properties":{}}},
{"name":"task_list","description":"The team's tasks","inputSchema":{"type":"object","properties":{"status":{"type":"string","enum":["pending","in-progress","completed"]},"owner":{"type":"string"},"available":{"type":"boolean"}}}},
{"name":"task_add","description":"Add a task","inputSchema":{"type":"object","properties":{"subject":{"type":"string"},"description":{"type":"string"},"owner":{"type":"string"},"blocked_by":{"type":"array","items":{"type":"string"}}},"required":["subject"]}},
{"name":"task_claim","description":"Claim a task (default: first available)","inputSchema":{"type":"object","properties":{"id":{"type":"string"}}}},
{"name":"task_update","description":"Change a task","inputSchema":{"type":"object","properties":{"id":{"type":"string"},"status":{"type":"string","enum":["pending","in-progress","completed"]},"subject":{"type":"string"},"description":{"type":"string"},"owner":{"type":"string"}},"required":["id"]}},
{"name":"task_done","description":"Mark a task completed","inputSchema":{"type":"object","properties":{"id":{"type":"string"},"note":{"type":"string"}},"required":["id"]}},
{"name":"plan_submit","description":"Submit a plan to the lead; waits for the answer","inputSchema":{"type":"object","properties":{"plan":{"type":"string"},"timeout":{"type":"number"}},"required":["plan"]}},
{"name":"permission_ask","description":"Ask the lead to let you use a tool; waits for the answer","inputSchema":{"type":"object","properties":{"tool":{"type":"string"},"input":{"type":"object"},"description":{"type":"string"},"timeout":{"type":"number"}},"required":["tool"]}},
{"name":"shutdown_answer","description":"Answer a shutdown request: approve (then exit) or reject with a reason","inputSchema":{"type":"object","properties":{"request_id":{"type":"string"},"approve":{"type":"boolean"},"reason":{"type":"string"}},"required":["request_id","approve"]}}
]"#;

pub(crate) fn run(ctx: &Context, _args: Args) -> Result<()> {
    let tools: Vec<Tool> = serde_json::from_str(TOOLS).expect("the tools are written as JSON");
    let server = Server {
        tools: Arc::new(tools),
        globals: globals(ctx),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|err| Error::os("start the MCP server's runtime", err))?;
    runtime.block_on(async move {
        let running = server
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|err| Error::runtime(format!("MCP session did not start: {err}")))?;
        running
            .waiting()
            .await
            .map_err(|err| Error::runtime(format!("MCP session failed: {err}")))?;
        Ok(())
    })
}

/// The options every tool's command is run with: this server's home and team, so that a client
/// that hands its servers a scrubbed environment (Codex) still reaches the right team.
fn globals(ctx: &Context) -> Vec<String> {
    let mut globals = vec![
        "--json".to_owned(),
        "--home".to_owned(),
        ctx.home.root().display().to_string(),
    ];
    if let Some(team) = ctx.team_given() {
        globals.extend(["--team".to_owned(), team.to_owned()]);
    }
    globals
}

struct Server {
    tools: Arc<Vec<Tool>>,
    globals: Vec<String>,
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("swarm", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> std::result::Result<CallToolResponse, ErrorData> {
        if !self.tools.iter().any(|tool| tool.name == request.name) {
            return Err(ErrorData::invalid_params(
                format!("no tool named {}", request.name),
                None,
            ));
        }
        let arguments = request.arguments.unwrap_or_default();
        let result = match command(&request.name, &arguments) {
            Ok(call) => self.run(call).await,
            Err(err) => failure(err.message(), err.hint()),
        };
        Ok(result.into())
    }
}

/// A swarm command a tool runs: its words after the global options, and what it reads on stdin.
struct Call {
    words: Vec<String>,
    stdin: String,
}

impl Server {
    /// Runs `call` as a child and gives its JSON answer, or its error as the one line the command
    /// line prints. A call the client cancels kills its child (`kill_on_drop`).
    async fn run(&self, call: Call) -> CallToolResult {
        let exe = match std::env::current_exe() {
            Ok(exe) => exe,
            Err(err) => {
                let err = Error::os("find the swarm program", err);
                return failure(err.message(), err.hint());
            }
        };
        let child = tokio::process::Command::new(exe)
            .args(&self.globals)
            .args(&call.words)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn();
        let mut child = match child {
            Ok(child) => child,
            Err(err) => {
                let err = Error::os("run swarm", err);
                return failure(err.message(), err.hint());
            }
        };
        if let Some(mut stdin) = child.stdin.take() {
            // A command that reads nothing closes its end: not a failure of the call.
            let _ = stdin.write_all(call.stdin.as_bytes()).await;
        }
        let output = match child.wait_with_output().await {
            Ok(output) => output,
            Err(err) => {
                let err = Error::os("run swarm", err);
                return failure(err.message(), err.hint());
            }
        };
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        // With --json, an error is one JSON object on stderr's last line (cli::report).
        let error = stderr
            .lines()
            .rev()
            .find_map(|line| serde_json::from_str::<Value>(line).ok())
            .filter(|object| object.get("error").is_some());
        if let Some(error) = error {
            let message = error["error"].as_str().unwrap_or_default();
            return failure(message, error["hint"].as_str());
        }
        // A rejected plan exits 1 and says so on stdout: the answer, not a failure of the call.
        let mut content = vec![ContentBlock::text(compact(&stdout))];
        let said: Vec<&str> = stderr
            .lines()
            .filter(|line| line.starts_with("swarm: "))
            .collect();
        if !said.is_empty() {
            content.push(ContentBlock::text(said.join("\n")));
        }
        CallToolResult::success(content)
    }
}

/// A JSON document on one line: fewer tokens than the command line's pretty one.
fn compact(stdout: &str) -> String {
    serde_json::from_str::<Value>(stdout)
        .map_or_else(|_| stdout.trim().to_owned(), |v| v.to_string())
}

/// A tool's error: the line the command line prints on stderr, and its hint.
fn failure(message: &str, hint: Option<&str>) -> CallToolResult {
    let mut text = format!("swarm: {message}");
    if let Some(hint) = hint {
        text.push_str("\nhint: ");
        text.push_str(hint);
    }
    CallToolResult::error(vec![ContentBlock::text(text)])
}

/// The command a tool stands for, with its arguments. What is free text goes on stdin or after
/// `=`, so no value is ever read as an option. An argument the tool does not take is refused:
/// in particular none says who the caller is.
fn command(tool: &str, arguments: &JsonObject) -> Result<Call> {
    let mut call = Arguments {
        tool,
        given: arguments,
        taken: Vec::new(),
        words: Vec::new(),
        stdin: String::new(),
    };
    match tool {
        "send" => {
            let to = call.required("to")?;
            call.stdin = call.required("text")?;
            call.words.push("send".to_owned());
            call.option("summary", "--summary")?;
            call.words.extend(["--".to_owned(), to, "-".to_owned()]);
        }
        "inbox" => call.words.push("inbox".to_owned()),
        "receive" => {
            call.words.push("recv".to_owned());
            if let Some(wait) = call.seconds("wait")? {
                call.words
                    .extend(["--wait".to_owned(), format!("--timeout={wait}")]);
            }
            if let Some(max) = call.number("max")? {
                call.words.push(format!("--max={max}"));
            }
        }
        "team" => call.words.push("status".to_owned()),
        "task_list" => {
            call.words.extend(["task".to_owned(), "list".to_owned()]);
            call.option("status", "--status")?;
            call.option("owner", "--owner")?;
            call.flag("available", "--available")?;
        }
        "task_add" => {
            let subject = call.required("subject")?;
            call.words.extend(["task".to_owned(), "add".to_owned()]);
            call.option("owner", "--owner")?;
            if let Some(description) = call.optional("description")? {
                call.stdin = description;
                call.words.push("--description=-".to_owned());
            }
            for id in call.list("blocked_by")? {
                call.words.push(format!("--blocked-by={id}"));
            }
            call.words.extend(["--".to_owned(), subject]);
        }
        "task_claim" => {
            call.words.extend(["task".to_owned(), "claim".to_owned()]);
            if let Some(id) = call.optional("id")? {
                call.words.extend(["--".to_owned(), id]);
            }
        }
        "task_update" => {
            let id = call.required("id")?;
            call.words.extend(["task".to_owned(), "update".to_owned()]);
            call.option("status", "--status")?;
            call.option("subject", "--subject")?;
            call.option("owner", "--owner")?;
            if let Some(description) = call.optional("description")? {
                call.stdin = description;
                call.words.push("--description=-".to_owned());
            }
            call.words.extend(["--".to_owned(), id]);
        }
        "task_done" => {
            let id = call.required("id")?;
            call.words.extend(["task".to_owned(), "done".to_owned()]);
            call.option("note", "--note")?;
            call.words.extend(["--".to_owned(), id]);
        }
        "plan_submit" => {
            call.stdin = call.required("plan")?;
            call.words
                .extend(["plan".to_owned(), "submit".to_owned(), "--wait".to_owned()]);
            if let Some(timeout) = call.seconds("timeout")? {
                call.words.push(format!("--timeout={timeout}"));
            }
            call.words.extend(["--".to_owned(), "-".to_owned()]);
        }
        "permission_ask" => {
            let tool = call.required("tool")?;
            call.words
                .extend(["permission".to_owned(), "ask".to_owned()]);
            if let Some(input) = call.take("input") {
                call.stdin = input.to_string();
                call.words.push("--input=-".to_owned());
            }
            call.option("description", "--description")?;
            if let Some(timeout) = call.seconds("timeout")? {
                call.words.push(format!("--timeout={timeout}"));
            }
            call.words.extend(["--".to_owned(), tool]);
        }
        "shutdown_answer" => {
            let id = call.required("request_id")?;
            let approve = call
                .take("approve")
                .and_then(Value::as_bool)
                .ok_or_else(|| call.missing("approve", "true or false"))?;
            call.words.push("shutdown".to_owned());
            if approve {
                call.words.push("approve".to_owned());
            } else {
                call.words.push("reject".to_owned());
                call.option("reason", "--reason")?;
            }
            call.words.extend(["--".to_owned(), id]);
        }
        _ => unreachable!("only a listed tool is called"),
    }
    call.finish()
}

/// A tool call's arguments as they are turned into a command's words.
struct Arguments<'a> {
    tool: &'a str,
    given: &'a JsonObject,
    taken: Vec<&'static str>,
    words: Vec<String>,
    stdin: String,
}

impl Arguments<'_> {
    fn take(&mut self, key: &'static str) -> Option<&Value> {
        self.taken.push(key);
        self.given.get(key).filter(|value| !value.is_null())
    }

    fn missing(&self, key: &str, what: &str) -> Error {
        Error::usage(format!("{} needs {key}: {what}", self.tool))
    }

    fn optional(&mut self, key: &'static str) -> Result<Option<String>> {
        let tool = self.tool;
        match self.take(key) {
            None => Ok(None),
            Some(Value::String(text)) => Ok(Some(text.clone())),
            Some(Value::Number(number)) => Ok(Some(number.to_string())),
            Some(_) => Err(Error::usage(format!("{tool}: {key} is text"))),
        }
    }

    fn required(&mut self, key: &'static str) -> Result<String> {
        self.optional(key)?.ok_or_else(|| self.missing(key, "text"))
    }

    /// `key`, given to the command as `flag=VALUE`.
    fn option(&mut self, key: &'static str, flag: &str) -> Result<()> {
        if let Some(value) = self.optional(key)? {
            self.words.push(format!("{flag}={value}"));
        }
        Ok(())
    }

    fn flag(&mut self, key: &'static str, flag: &str) -> Result<()> {
        let tool = self.tool;
        match self.take(key) {
            None | Some(Value::Bool(false)) => {}
            Some(Value::Bool(true)) => self.words.push(flag.to_owned()),
            Some(_) => return Err(Error::usage(format!("{tool}: {key} is true or false"))),
        }
        Ok(())
    }

    fn number(&mut self, key: &'static str) -> Result<Option<String>> {
        let tool = self.tool;
        match self.take(key) {
            None => Ok(None),
            Some(Value::Number(number)) => Ok(Some(number.to_string())),
            Some(_) => Err(Error::usage(format!("{tool}: {key} is a number"))),
        }
    }

    /// A number of seconds, in the syntax of the commands' --timeout.
    fn seconds(&mut self, key: &'static str) -> Result<Option<String>> {
        self.number(key)
    }

    fn list(&mut self, key: &'static str) -> Result<Vec<String>> {
        let tool = self.tool;
        match self.take(key) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::String(text) => Ok(text.clone()),
                    Value::Number(number) => Ok(number.to_string()),
                    _ => Err(Error::usage(format!("{tool}: {key} is a list of ids"))),
                })
                .collect(),
            Some(_) => Err(Error::usage(format!("{tool}: {key} is a list of ids"))),
        }
    }

    /// The command, once every argument given was one the tool takes.
    fn finish(self) -> Result<Call> {
        if let Some(unknown) = self
            .given
            .keys()
            .find(|key| !self.taken.contains(&key.as_str()))
        {
            let takes = if self.taken.is_empty() {
                "no arguments".to_owned()
            } else {
                self.taken.join(", ")
            };
            return Err(Error::usage(format!(
                "{} takes no argument {unknown} (it takes {takes})",
                self.tool
            )));
        }
        Ok(Call {
            words: self.words,
            stdin: self.stdin,
        })
    }
}
