//! The committed man pages match the code, and completion scripts work in their shells.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

use crate::harness::{Sandbox, repo};

fn pages(dir: &Path) -> BTreeMap<String, String> {
    fs::read_dir(dir)
        .unwrap()
        .map(|entry| {
            let entry = entry.unwrap();
            (
                entry.file_name().into_string().unwrap(),
                fs::read_to_string(entry.path()).unwrap(),
            )
        })
        .collect()
}

#[test]
fn committed_man_pages_match_the_command_line() {
    let sandbox = Sandbox::new();
    let fresh = sandbox.root().join("man");
    sandbox.swarm().arg("man").arg(&fresh).run().success();
    let generated = pages(&fresh);
    let committed = pages(&repo().join("man"));
    let names = |pages: &BTreeMap<String, String>| pages.keys().cloned().collect::<Vec<_>>();
    assert_eq!(
        names(&committed),
        names(&generated),
        "run `cargo run -- man man` and commit the result"
    );
    for (name, page) in &generated {
        assert_eq!(
            &committed[name], page,
            "man/{name} is stale: run `cargo run -- man man` and commit the result"
        );
    }
}

/// Every command's page says what its `--json` prints, and the top page the rules they all follow.
#[test]
fn every_page_documents_its_json_output() {
    let pages = pages(&repo().join("man"));
    for (name, page) in &pages {
        // A completion script is a script, with --json or without; the supervisor prints into
        // its pane.
        if name == "swarm-completions.1" || name == "swarm-run.1" {
            continue;
        }
        // swarm-team(5) is the team file's format, no command's.
        if name.ends_with(".5") {
            continue;
        }
        // A command with subcommands is documented on their pages.
        if page.contains(".SH SUBCOMMANDS") && name != "swarm.1" {
            continue;
        }
        assert!(
            page.contains(".SH \"JSON OUTPUT\""),
            "{name} does not document its JSON output"
        );
    }
    let top = pages["swarm.1"].replace("\\-", "-");
    for rule in ["RFC 3339", "createdAtMs", "\"structured\"", "\"hint\""] {
        assert!(top.contains(rule), "swarm.1 lacks {rule}");
    }
}

/// The section `title` of a man page, roff's dash escapes undone, up to the next section.
fn section<'a>(page: &'a str, title: &str) -> Option<&'a str> {
    let start = page
        .find(&format!(".SH \"{title}\"\n"))
        .or_else(|| page.find(&format!(".SH {title}\n")))?;
    let body = &page[start..];
    let body = &body[body.find('\n')? + 1..];
    Some(body.find("\n.SH ").map_or(body, |end| &body[..end]))
}

/// The streams swarm(1) lists are those docs/ARCHITECTURE.md lists, and each one's own page says
/// its --json prints a line at a time (with the flag that makes it stream), and no other page
/// says so.
#[test]
fn the_streams_are_the_same_everywhere_they_are_named() {
    let pages: BTreeMap<String, String> = pages(&repo().join("man"))
        .into_iter()
        .map(|(name, page)| (name, page.replace("\\-", "-")))
        .collect();
    let rules = section(&pages["swarm.1"], "JSON OUTPUT").unwrap();
    let (_, after) = rules.split_once("reports as it goes (").unwrap();
    let streams: Vec<&str> = after[..after.find(')').unwrap()].split(", ").collect();
    assert!(streams.len() > 3, "{streams:?}");
    let architecture = fs::read_to_string(repo().join("docs/ARCHITECTURE.md")).unwrap();
    let architecture = architecture
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let listed = streams
        .iter()
        .map(|stream| format!("`{stream}`"))
        .collect::<Vec<_>>()
        .join(", ");
    assert!(
        architecture.contains(&format!("one object per line, flushed: {listed}.")),
        "docs/ARCHITECTURE.md, \"JSON output\", must list the streams as swarm(1) does: {listed}"
    );
    let by_line = |text: &str| {
        let text = text.to_lowercase();
        text.contains("one line per") || text.contains("per line")
    };
    for (name, page) in &pages {
        let Some(json) = section(page, "JSON OUTPUT") else {
            continue;
        };
        let Some(command) = name
            .strip_prefix("swarm-")
            .and_then(|rest| rest.strip_suffix(".1"))
        else {
            continue;
        };
        let stream = streams
            .iter()
            .find(|stream| stream.split(' ').next() == Some(command));
        match stream.map(|stream| stream.split_once(' ')) {
            Some(Some((_, flag))) => assert!(
                json.split(&format!("With {flag},"))
                    .skip(1)
                    .any(|said| { by_line(&said[..said.find(['.', ':']).unwrap_or(said.len())]) }),
                "{name} must say that with {flag} its --json prints a line at a time:\n{json}"
            ),
            Some(None) => assert!(
                by_line(json.lines().next().unwrap_or_default()),
                "{name} must say its --json prints a line at a time:\n{json}"
            ),
            None => assert!(
                !json.lines().any(by_line),
                "{name} is no stream in swarm(1), yet its --json prints a line at a time:\n{json}"
            ),
        }
    }
}

#[test]
fn the_top_page_documents_exit_statuses_environment_files_and_examples() {
    // roff escapes every dash.
    let page = fs::read_to_string(repo().join("man/swarm.1"))
        .unwrap()
        .replace("\\-", "-");
    for section in ["EXIT STATUS", "ENVIRONMENT", "FILES", "EXAMPLES"] {
        assert!(
            page.contains(&format!(".SH \"{section}\""))
                || page.contains(&format!(".SH {section}")),
            "no {section} section"
        );
    }
    for needle in [
        "SWARM_HOME",
        "SWARM_AGENT",
        "inboxes/<name>.json",
        "history/<name>.jsonl",
        "swarm up teams/demo.toml --wait",
    ] {
        assert!(page.contains(needle), "the top page lacks {needle}");
    }
    for command in [
        "send",
        "recv",
        "up",
        "down",
        "listen",
        "peers",
        "shutdown-request",
        "plan-submit",
    ] {
        assert!(
            repo().join(format!("man/swarm-{command}.1")).exists(),
            "no page for {command}"
        );
    }
}

#[test]
fn bash_completion_completes_commands_and_flags() {
    let sandbox = Sandbox::new();
    let script = sandbox
        .swarm()
        .args(["completions", "bash"])
        .run()
        .success()
        .stdout;
    let file = sandbox.write("swarm.bash", &script);
    let probe = format!(
        "source {}; complete -p swarm; COMP_WORDS=(swarm sh); COMP_CWORD=1; _swarm swarm sh swarm; echo \"${{COMPREPLY[@]}}\"; \
         COMP_WORDS=(swarm up --d); COMP_CWORD=2; _swarm swarm --d up; echo \"${{COMPREPLY[@]}}\"",
        file.display()
    );
    let output = sandbox
        .command("bash")
        .args(["--norc", "-c", &probe])
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{said}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(said.contains("-F _swarm swarm"), "{said}");
    assert!(said.contains("shutdown"), "commands complete: {said}");
    assert!(
        said.contains("--dry-run") && said.contains("--detach"),
        "flags complete: {said}"
    );
}

#[test]
fn zsh_and_fish_completions_are_generated() {
    let sandbox = Sandbox::new();
    for (shell, marker, checker) in [
        ("zsh", "#compdef swarm", "zsh"),
        ("fish", "complete -c swarm", "fish"),
    ] {
        let script = sandbox
            .swarm()
            .args(["completions", shell])
            .run()
            .success()
            .stdout;
        assert!(
            script.contains(marker),
            "{shell}: {}",
            &script[..script.len().min(200)]
        );
        for command in ["listen", "shutdown", "spawn"] {
            assert!(script.contains(command), "{shell} completes {command}");
        }
        // Where the shell is installed, the script must at least parse.
        if let Ok(output) = sandbox
            .command(checker)
            .arg("-n")
            .arg(sandbox.write(&format!("swarm.{shell}"), &script))
            .output()
        {
            assert!(
                output.status.success(),
                "{shell} -n: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
    sandbox.swarm().args(["completions", "tcsh"]).run().code(2);
}

/// The commands README's "Completions and man pages" shows, each line run exactly as written in
/// a fresh home: they make the folders they write into, and what they install completes.
#[test]
fn the_readme_completion_and_man_commands_work_in_a_fresh_home() {
    let sandbox = Sandbox::new();
    let readme = fs::read_to_string(repo().join("README.md")).unwrap();
    let section = &readme[readme.find("## Completions and man pages").unwrap()..];
    let section = &section[..section[1..]
        .find("\n## ")
        .map_or(section.len(), |end| end + 1)];
    let mut lines = Vec::new();
    let mut in_block = false;
    for line in section.lines() {
        match (in_block, line.trim()) {
            (false, "```sh") => in_block = true,
            (true, "```") => in_block = false,
            (true, "") => {}
            (true, command) => lines.push(command),
            _ => {}
        }
    }
    assert!(lines.len() >= 7, "{lines:?}");
    let user = sandbox.root().join("user");
    assert!(
        fs::read_dir(&user).unwrap().next().is_none(),
        "a fresh home"
    );
    // `swarm` on the PATH, as `cargo install` puts it there.
    let path = sandbox.path_with_swarm();
    let bash = |script: &str| {
        let output = sandbox
            .command("bash")
            .args(["--norc", "--noprofile", "-c", script])
            .env("PATH", &path)
            .output()
            .unwrap();
        let (stdout, stderr) = (
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        );
        assert!(
            output.status.success() && stderr.is_empty(),
            "{script}\n{stdout}{stderr}"
        );
        stdout
    };
    for line in &lines {
        bash(line);
    }
    for file in [
        ".local/share/bash-completion/completions/swarm",
        ".zfunc/_swarm",
        ".config/fish/completions/swarm.fish",
        ".local/share/man/man1/swarm.1",
        ".local/share/man/man1/swarm-attach.1",
        ".bashrc",
        ".zshrc",
        ".config/fish/config.fish",
    ] {
        let made = fs::metadata(user.join(file));
        assert!(made.is_ok_and(|m| m.len() > 0), "{file} was not written");
    }

    // bash loads what was installed: the script completes commands; the dynamic completion
    // sourced from ~/.bashrc completes a team's members too.
    sandbox.team("t", &["bob"]);
    let said = bash(
        "source ~/.local/share/bash-completion/completions/swarm; complete -p swarm; \
         COMP_WORDS=(swarm att); COMP_CWORD=1; _swarm swarm att swarm; echo \"${COMPREPLY[@]}\"",
    );
    assert!(
        said.contains("-F _swarm swarm") && said.contains("attach"),
        "{said}"
    );
    let said = bash(
        "source ~/.bashrc; complete -p swarm; \
         COMP_WORDS=(swarm attach t b); COMP_CWORD=3; _clap_complete_swarm swarm b t; \
         echo \"${COMPREPLY[@]}\"",
    );
    assert!(said.contains("-F _clap_complete_swarm swarm"), "{said}");
    assert_eq!(said.lines().last(), Some("bob"), "{said}");
}

/// Every file swarm keeps, named as swarm(1)'s FILES section and docs/ARCHITECTURE.md ("On disk")
/// name it: the home's, the runtime directory's and a repository's.
const KEPT_FILES: &[&str] = &[
    "<home>/teams/<team>/config.json",
    ".config.flock",
    ".config.wait.flock",
    "config.lock",
    "config.json.lock",
    "<home>/teams/<team>/.launch.flock",
    "inboxes/<name>.json",
    "inboxes/.<name>.flock",
    "inboxes/.<name>.wait.flock",
    "inboxes/.<name>.consume.flock",
    "inboxes/<name>.lock",
    "inboxes/<name>.json.lock",
    "inboxes/.spool/<name>/<ns>-<pid>-<id>.json",
    "<name>.json.corrupt-<ms>",
    "<name>.json.invalid-<ms>",
    "history/<name>.jsonl",
    "logs/<name>.log",
    "<name>.log.1",
    "<home>/node/node.json",
    "<home>/node/hosts.json",
    "<home>/peers/<pid>.json",
    ".<file>.<pid>.<random>.tmp",
    ".<file>.lock.swarm-<pid>",
    "<runtime>/<pid>.sock",
    "<runtime>/fence-<pid>.sock",
    "<runtime>/fence-<pid>-net.sock",
    "<repo>/.swarm/worktrees/<team>/<name>",
    "info/exclude",
    "swarm-worktrees.lock",
];

#[test]
fn files_sections_name_every_file_swarm_keeps() {
    // roff escapes every dash.
    let page = fs::read_to_string(repo().join("man/swarm.1"))
        .unwrap()
        .replace("\\-", "-");
    let files = &page[page.find(".SH FILES").unwrap()..];
    let files = &files[..files[1..].find(".SH").map_or(files.len(), |end| end + 1)];
    let architecture = fs::read_to_string(repo().join("docs/ARCHITECTURE.md")).unwrap();
    let on_disk = &architecture[architecture.find("## On disk").unwrap()..];
    let on_disk = &on_disk[..on_disk.find("\n## ").unwrap()];
    for file in KEPT_FILES {
        assert!(files.contains(file), "swarm(1) FILES lacks {file}");
        assert!(
            on_disk.contains(file),
            "ARCHITECTURE.md, On disk, lacks {file}"
        );
    }
}

/// Every key the README's team file and `teams/*.toml` use is in swarm-team(5), in its section:
/// the page is written from the parser's own table, and the examples are real team files.
#[test]
fn the_team_page_documents_every_key_the_examples_use() {
    let page = fs::read_to_string(repo().join("man/swarm-team.5")).unwrap();
    let section = |title: &str, next: &str| -> String {
        let start = page.find(title).unwrap_or_else(|| panic!("no {title}"));
        let end = start + page[start..].find(next).unwrap();
        page[start..end].to_owned()
    };
    let team = section(".SH \"TEAM KEYS\"", ".SH \"LEAD KEYS\"");
    let lead = section(".SH \"LEAD KEYS\"", ".SH \"MEMBER KEYS\"");
    let member = section(".SH \"MEMBER KEYS\"", ".SH EXAMPLE");
    let readme = fs::read_to_string(repo().join("README.md")).unwrap();
    let example = readme
        .split("```toml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("README has a team file");
    let mut files = vec![("README.md".to_owned(), example.to_owned())];
    for entry in fs::read_dir(repo().join("teams")).unwrap() {
        let path = entry.unwrap().path();
        files.push((
            path.display().to_string(),
            fs::read_to_string(&path).unwrap(),
        ));
    }
    let listed = |part: &str, key: &str| part.contains(&format!(".TP\n\\fB{key}\\fR\n"));
    for (name, text) in files {
        let file: toml::Table = toml::from_str(&text).unwrap_or_else(|err| panic!("{name}: {err}"));
        for (key, value) in &file {
            assert!(
                listed(&team, key),
                "{name}: {key} is not a team key in swarm-team(5)"
            );
            let tables: Vec<&toml::Table> = match (key.as_str(), value) {
                ("lead", toml::Value::Table(table)) => vec![table],
                ("member", toml::Value::Array(members)) => {
                    members.iter().filter_map(toml::Value::as_table).collect()
                }
                _ => continue,
            };
            let part = if key == "lead" { &lead } else { &member };
            for table in tables {
                for inner in table.keys() {
                    assert!(
                        listed(part, inner),
                        "{name}: {key}.{inner} is not in swarm-team(5)"
                    );
                }
            }
        }
    }
}
