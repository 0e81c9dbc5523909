//! The `--json` flag is read in one place (docs/ARCHITECTURE.md, "JSON output"): each command
//! builds one report and hands it to `cli/output.rs`'s `Printer`, which prints it as text or JSON.
//! A command that asked `--json` itself would print its result twice over, once per form.

use std::fs;
use std::path::Path;

use crate::harness::repo;

/// Where the flag may be read: the parsed options hand it to the printer, and the printer's
/// methods look at it.
const READERS: [(&str, &str); 2] = [
    ("cli/mod.rs", "global.json"),
    ("cli/output.rs", "self.json"),
];

/// Every read of a `json` field in `src/`: `x.json` not called as a method, by file and line.
fn json_field_reads(root: &Path) -> Vec<(String, usize, String)> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, usize, String)>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, root, out);
                continue;
            }
            if path.extension().is_none_or(|ext| ext != "rs") {
                continue;
            }
            let file = path
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .into_owned();
            for (number, line) in fs::read_to_string(&path).unwrap().lines().enumerate() {
                let code = line.split("//").next().unwrap_or_default();
                for read in reads_in(code) {
                    out.push((file.clone(), number + 1, read));
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out
}

/// `owner.json` in a line of code, where `owner` is an identifier and no `(` follows.
fn reads_in(code: &str) -> Vec<String> {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut reads = Vec::new();
    for (at, _) in code.match_indices(".json") {
        let after = &code[at + ".json".len()..];
        if after.starts_with(is_ident) || after.trim_start().starts_with('(') {
            continue;
        }
        let owner: String = code[..at]
            .chars()
            .rev()
            .take_while(|c| is_ident(*c))
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        // A file name in a string ("config.json", "node/node.json") is not code: an odd number
        // of quotes before it, or a path's separator before the name.
        let in_string = code[..at].matches('"').count() % 2 == 1
            || code[..at - owner.len()].ends_with(['/', '-', '.']);
        if !owner.is_empty() && !in_string {
            reads.push(format!("{owner}.json"));
        }
    }
    reads
}

#[test]
fn only_the_printer_reads_the_json_flag() {
    let reads = json_field_reads(&repo().join("src"));
    let stray: Vec<String> = reads
        .iter()
        .filter(|(file, _, read)| !READERS.contains(&(file.as_str(), read.as_str())))
        .map(|(file, line, read)| format!("src/{file}:{line}: {read}"))
        .collect();
    assert!(
        stray.is_empty(),
        "--json is read outside cli/output.rs's Printer; build a report and hand it to \
         ctx.report or ctx.event instead:\n{}",
        stray.join("\n")
    );
    // The printer does read it: the check above still looks where it should.
    assert!(
        reads
            .iter()
            .any(|(file, _, read)| file == "cli/output.rs" && read == "self.json"),
        "found no read of the flag in cli/output.rs: {reads:?}"
    );
}

#[test]
fn a_read_is_told_from_a_call_and_a_file_name() {
    assert_eq!(reads_in("    if ctx.json {"), ["ctx.json"]);
    assert_eq!(reads_in("let json = ctx.json;"), ["ctx.json"]);
    assert!(reads_in("output::json(&value)").is_empty());
    assert!(reads_in("team.json (x)").is_empty());
    assert!(reads_in(r#"let name = "config.json";"#).is_empty());
    assert!(reads_in("ctx.jsonish").is_empty());
    assert!(reads_in("state is in <home>/node/node.json; `swarm status`").is_empty());
}
