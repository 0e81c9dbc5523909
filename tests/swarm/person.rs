//! The person at the keyboard receives replies: `user` has an inbox in every team, which a member
//! reaches with `swarm send user` and the person reads outside every pane; `uds:user` reaches the
//! person's terminal running `swarm listen` without a label, or else that inbox; and every `uds:`
//! message is signed with a name it can be answered at, never a socket path.

use std::time::Duration;

use nix::sys::signal::Signal;
use serde_json::Value;

use crate::harness::{Sandbox, TmuxServer, bin, eventually, watches};
use crate::peers::listen;

/// Lines of a `--json` stream until one has `text`, which is returned.
#[track_caller]
fn until_text(next: impl Fn() -> Value, text: &str) -> Value {
    loop {
        let line = next();
        if line["text"] == text {
            return line;
        }
    }
}

/// A member answers the person with `swarm send user` and `swarm send uds:user`, without `join`;
/// the person reads it with `inbox`, `watch` and `recv` outside every pane, and answers back at
/// the name the member signed with.
#[test]
fn a_member_answers_the_person_who_reads_outside_every_pane() {
    let sandbox = Sandbox::new();
    let server = TmuxServer::start(&sandbox);
    let file = sandbox.write(
        "pr.toml",
        format!(
            "name = \"pr\"\n[lead]\ncommand = [\"sleep\", \"1000\"]\n\
             [[member]]\nname = \"bob\"\n\
             command = [\"sh\", \"-c\", \"\\\"$0\\\" send user 'done: 42' && sleep 1000\", \"{bin}\"]\n\
             [[member]]\nname = \"sh\"\ncommand = [\"bash\", \"--norc\", \"--noprofile\"]\n\
             env = {{ SW = \"{bin}\", PS1 = \"$ \" }}\n",
            bin = bin()
        ),
    );
    sandbox
        .swarm()
        .arg("up")
        .arg(&file)
        .arg("--socket")
        .arg(server.socket())
        .run()
        .success();
    assert!(
        sandbox.inbox_path("pr", "user").exists(),
        "every team has user's inbox"
    );
    let roster: Vec<Value> = sandbox.config("pr")["members"].as_array().unwrap().clone();
    assert!(roster.iter().all(|m| m["name"] != "user"), "{roster:#?}");

    // bob, in its pane, answers the person without `swarm join`.
    eventually("bob's answer", || !sandbox.inbox("pr", "user").is_empty());
    sandbox
        .swarm()
        .arg("inbox")
        .team("pr")
        .run()
        .success()
        .stdout_is(&format!(
            "{}  bob  done: 42\n",
            sandbox.inbox("pr", "user")[0]["msg_id"].as_str().unwrap()
        ));

    // The person follows their inbox; what a member says reaches it as it arrives.
    let watch = sandbox.swarm().args(["watch", "--json"]).team("pr").spawn();
    let inboxes = sandbox.team_dir("pr").join("inboxes");
    eventually("watch to be armed", || watches(watch.pid(), &inboxes));
    let typed = |keys: &str| {
        sandbox
            .swarm()
            .args(["type", "sh", keys])
            .team("pr")
            .run()
            .success();
    };
    typed("$SW send user 'from bash'");
    let seen = until_text(|| watch.next_json(), "from bash");
    assert_eq!((&seen["from"], &seen["to"]), (&"sh".into(), &"user".into()));

    // Nobody listens as uds:user: the message waits in the same inbox, and the sender is told.
    typed("$SW send uds:user 'nobody listens' 2> told");
    let seen = until_text(|| watch.next_json(), "nobody listens");
    assert_eq!(seen["from"], "sh");
    eventually("the sender to be told", || {
        std::fs::read_to_string(sandbox.work().join("told")).is_ok_and(|told| {
            told.contains(
                "no terminal listens as uds:user; the message waits in user's inbox of team pr",
            )
        })
    });

    // With a terminal listening, uds:user reaches it, signed with a name that answers the member.
    let (listener, socket) = listen(&sandbox, &["--json"]);
    typed("$SW send uds:user 'to your terminal'");
    let got = listener.next_json();
    assert_eq!(got["text"], "to your terminal");
    assert_eq!(got["from"], "sh@pr");
    sandbox
        .swarm()
        .args([
            "send",
            &format!("uds:{}", got["from"].as_str().unwrap()),
            "thanks",
        ])
        .run()
        .success();
    // From the listener's terminal, the member sees uds:user, which reaches that terminal back.
    sandbox
        .swarm()
        .args(["send", "uds:sh@pr", "from my terminal"])
        .env("SWARM_SOCKET", &socket)
        .run()
        .success();
    let sh = sandbox.inbox("pr", "sh");
    let from: Vec<(&str, &str)> = sh
        .iter()
        .map(|m| (m["from"].as_str().unwrap(), m["text"].as_str().unwrap()))
        .collect();
    assert_eq!(
        from,
        [("user", "thanks"), ("uds:user", "from my terminal")],
        "{sh:#?}"
    );

    // recv outside every pane takes what waits for the person, oldest first.
    let taken = sandbox
        .swarm()
        .args(["recv", "--json"])
        .team("pr")
        .run()
        .success()
        .json();
    let texts: Vec<&str> = taken
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts, ["done: 42", "from bash", "nobody listens"]);
    assert!(sandbox.inbox("pr", "user").is_empty());
    drop(watch);
    sandbox
        .swarm()
        .args(["down", "pr", "--force"])
        .run()
        .success();
}

/// `uds:user` reaches the newest listener without a label; with none, the sender's team's inbox
/// for `user`; with no team either, nothing (exit 3).
#[test]
fn uds_user_reaches_the_newest_listener_without_a_label_else_the_inbox() {
    let sandbox = Sandbox::new();
    sandbox
        .swarm()
        .args(["send", "uds:user", "to nobody"])
        .run()
        .refused(3, "no terminal listens as uds:user");

    sandbox.team("t", &["bob"]);
    let fallback = sandbox
        .swarm()
        .args(["send", "uds:user", "waits", "--json"])
        .run()
        .success()
        .stderr_is(
            "swarm: no terminal listens as uds:user; the message waits in user's inbox of team t \
             (swarm inbox --team t)\n",
        );
    let said = fallback.json();
    assert_eq!(said["delivered"], "inbox");
    assert_eq!(said["team"], "t");
    let inbox = sandbox.inbox("t", "user");
    assert_eq!(inbox.len(), 1);
    assert_eq!(inbox[0]["text"], "waits");
    assert_eq!(inbox[0]["msg_id"], said["msg_id"]);

    let (laptop, _) = listen(&sandbox, &["--label", "laptop"]);
    let (first, _) = listen(&sandbox, &[]);
    let (second, _) = listen(&sandbox, &[]);
    let sent = sandbox
        .swarm()
        .args(["send", "uds:user", "to the newest", "--json"])
        .run()
        .success()
        .json();
    assert_eq!(sent["delivered"], "peer");
    assert_eq!(second.next_line(), "[from user] to the newest");
    second.signal(Signal::SIGINT);
    let (status, stderr) = second.finish();
    assert!(status.success());
    assert!(
        stderr.starts_with("swarm: listening as uds:user on "),
        "{stderr}"
    );
    sandbox
        .swarm()
        .args(["send", "uds:user", "to the one left"])
        .run()
        .success();
    assert_eq!(first.next_line(), "[from user] to the one left");
    assert!(
        laptop
            .lines
            .next_within(Duration::from_millis(300))
            .is_none(),
        "a labelled listener is not uds:user"
    );
    assert_eq!(sandbox.inbox("t", "user").len(), 1, "nothing more waits");
    sandbox
        .swarm()
        .args(["listen", "--label", "user"])
        .run()
        .refused(2, "--label user is taken");
}

/// What a terminal with a listener sends is signed with the name that listener answers to,
/// `uds:<label>` or `uds:user`, never its socket; copying `from` answers it.
#[test]
fn a_listeners_sends_are_signed_with_a_name_that_answers_it() {
    let sandbox = Sandbox::new();
    let (plain, plain_socket) = listen(&sandbox, &["--json"]);
    let (laptop, laptop_socket) = listen(&sandbox, &["--label", "laptop", "--json"]);
    let sent = sandbox
        .swarm()
        .args(["send", "uds:laptop", "hi", "--json"])
        .env("SWARM_SOCKET", &plain_socket)
        .run()
        .success()
        .json();
    assert_eq!(sent["from"], "uds:user");
    let got = laptop.next_json();
    assert_eq!(got["from"], "uds:user");
    sandbox
        .swarm()
        .args(["send", got["from"].as_str().unwrap(), "hello back"])
        .env("SWARM_SOCKET", &laptop_socket)
        .run()
        .success();
    let back = plain.next_json();
    assert_eq!(
        (&back["from"], &back["text"]),
        (&"uds:laptop".into(), &"hello back".into())
    );
    // A socket path names the listener, and the name it answers to is what is shown.
    sandbox
        .swarm()
        .arg("send")
        .arg(format!("uds:{}", plain_socket.display()))
        .arg("by path")
        .env("SWARM_SOCKET", &laptop_socket)
        .run()
        .success();
    assert_eq!(plain.next_json()["from"], "uds:laptop");
    laptop.signal(Signal::SIGINT);
    let (_, stderr) = laptop.finish();
    assert!(
        stderr.starts_with(&format!(
            "swarm: listening as uds:laptop on {}\n",
            laptop_socket.display()
        )),
        "{stderr}"
    );
}

/// `user` takes plain messages only: a protocol message goes to a member on the roster, and a
/// broadcast reaches the roster, which `user` is on only once it has joined.
#[test]
fn user_takes_plain_messages_only_and_no_broadcast_until_it_joins() {
    let sandbox = Sandbox::new();
    sandbox.team("t", &["bob"]);
    let idle = serde_json::json!({"type": "idle_notification", "from": "bob", "timestamp": "t"});
    sandbox
        .swarm()
        .args(["send", "user", &idle.to_string()])
        .team("t")
        .as_("bob")
        .run()
        .refused_exactly(
            2,
            "swarm: user is not on team t's roster: team-lead, bob\n\
             hint: user takes plain messages only; idle_notification and the other protocol \
             messages go to members\n",
        );
    sandbox
        .swarm()
        .args(["send", "*", "standup"])
        .team("t")
        .as_("bob")
        .run()
        .success();
    assert!(sandbox.inbox("t", "user").is_empty());
    sandbox
        .swarm()
        .args(["join", "user"])
        .team("t")
        .run()
        .success();
    sandbox
        .swarm()
        .args(["send", "*", "standup again"])
        .team("t")
        .as_("bob")
        .run()
        .success();
    assert_eq!(sandbox.inbox("t", "user")[0]["text"], "standup again");
}
