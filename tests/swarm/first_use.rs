//! What a new user runs into in a first hour with swarm: commands that wait without a word, names
//! given in the forms swarm itself shows, and the team a command picks.

use std::fs;
use std::path::PathBuf;

use crate::harness::{Sandbox, TmuxServer, bin, eventually};

/// Runs `swarm ARGS` in a new window of `server`, with the window's terminal on its stdin, and
/// returns its exit status and what it printed; `None` if it is still running at the harness's
/// patience (it waits on the terminal), after which it is ended.
fn in_a_terminal(sandbox: &Sandbox, server: &TmuxServer, args: &str) -> (i32, String) {
    let tag = sandbox.root().join(format!("t{}", args.len()));
    let out = PathBuf::from(format!("{}.out", tag.display()));
    let status = PathBuf::from(format!("{}.status", tag.display()));
    let line = format!(
        "{} {args} >{out} 2>&1; echo $? >{status}.tmp; mv {status}.tmp {status}",
        bin(),
        out = out.display(),
        status = status.display()
    );
    server.run(&["new-window", "-d", "-t", "fixture", "sh", "-c", &line]);
    eventually(
        &format!("`swarm {args}` with a terminal on stdin to finish"),
        || status.exists(),
    );
    (
        fs::read_to_string(&status).unwrap().trim().parse().unwrap(),
        fs::read_to_string(&out).unwrap(),
    )
}

/// `send NAME` with no text reads the message from stdin: from a terminal it would wait for a
/// message the person does not know is asked for, so it is refused; an empty one is never sent.
#[test]
fn send_without_text_refuses_a_terminal_and_an_empty_message() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    let server = TmuxServer::start(&sandbox);
    let (code, said) = in_a_terminal(&sandbox, &server, "send --team t bob");
    assert_eq!(code, 2, "send with a terminal on stdin:\n{said}");
    assert!(
        said.starts_with("swarm: ") && said.contains("stdin is a terminal"),
        "{said}"
    );
    let (code, said) = in_a_terminal(&sandbox, &server, "type --team t bob");
    assert_eq!(code, 2, "type with a terminal on stdin:\n{said}");
    assert!(said.contains("stdin is a terminal"), "{said}");

    // Nothing on stdin (/dev/null, an empty pipe), or only blanks.
    for stdin in [None, Some(""), Some(" \n\n")] {
        let mut run = sandbox.swarm().args(["send", "bob"]).team("t");
        if let Some(text) = stdin {
            run = run.stdin(text);
        }
        run.run().refused(2, "empty");
    }
    sandbox
        .swarm()
        .args(["send", "bob", ""])
        .team("t")
        .run()
        .refused(2, "empty");
    assert!(
        !sandbox.inbox_path("t", "bob").exists() || sandbox.inbox("t", "bob").is_empty(),
        "an empty message was sent: {:?}",
        sandbox.inbox("t", "bob")
    );
}
