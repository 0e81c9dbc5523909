//! The import graph of `src/`, held to docs/ARCHITECTURE.md ("Layers"): each file imports only
//! from its own layer or those below it, no command imports another command, nothing below the
//! command line imports it, and no two files import each other, however indirectly.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::harness::repo;

/// Bottom to top. `error.rs` sits below them all.
const LAYERS: [&str; 10] = [
    "error", "base", "format", "store", "policy", "protocol", "peer", "launch", "member", "cli",
];

/// Every source file but the crate root, by its path under `src/`.
fn sources() -> BTreeMap<PathBuf, String> {
    fn walk(dir: &Path, root: &Path, out: &mut BTreeMap<PathBuf, String>) {
        for entry in fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, root, out);
            } else if path.extension().is_some_and(|ext| ext == "rs") {
                let relative = path.strip_prefix(root).unwrap().to_path_buf();
                if relative != Path::new("lib.rs") && relative != Path::new("main.rs") {
                    out.insert(relative, fs::read_to_string(&path).unwrap());
                }
            }
        }
    }
    let root = repo().join("src");
    let mut out = BTreeMap::new();
    walk(&root, &root, &mut out);
    out
}

/// The module path of a file: `store/paths.rs` → [store, paths]; `member/supervisor/mod.rs` →
/// [member, supervisor].
fn module_of(file: &Path) -> Vec<String> {
    let mut parts: Vec<String> = file
        .with_extension("")
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|last| last == "mod") {
        parts.pop();
    }
    parts
}

/// The file that holds module `path`, following it as deep as files go.
fn file_of(path: &[String], files: &BTreeMap<PathBuf, String>) -> Option<PathBuf> {
    let mut found = None;
    for depth in 1..=path.len() {
        let joined: PathBuf = path[..depth].iter().collect();
        let as_file = joined.with_extension("rs");
        let as_dir = joined.join("mod.rs");
        if files.contains_key(&as_file) {
            found = Some(as_file);
        } else if files.contains_key(&as_dir) {
            found = Some(as_dir);
        } else {
            break;
        }
    }
    found
}

/// Module paths a file refers to: `crate::a::b`, `super::x`, `self::x`, and a child module by its
/// bare name. A group `crate::a::{b::X, c}` yields each member.
fn references(file: &Path, text: &str) -> Vec<Vec<String>> {
    let module = module_of(file);
    let code: String = text
        .lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n");
    let children: Vec<String> = code
        .lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = line
                .strip_prefix("mod ")
                .or_else(|| line.split_once(") mod ").map(|(_, rest)| rest))
                .or_else(|| line.strip_prefix("pub mod "))?;
            rest.strip_suffix(';').map(str::to_owned)
        })
        .collect();
    let mut found = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < code.len() {
        if !code.is_char_boundary(i) {
            i += 1;
            continue;
        }
        let at = &code[i..];
        let preceded_by_path = i >= 2 && &bytes[i - 2..i] == b"::";
        let word_start = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        if word_start && !preceded_by_path {
            let (base, rest): (Vec<String>, &str) = if let Some(rest) = at.strip_prefix("crate::") {
                (Vec::new(), rest)
            } else if let Some(rest) = at.strip_prefix("super::") {
                let mut parent = module.clone();
                // A `mod.rs` is its module; `super` from it is the parent's parent.
                parent.pop();
                (parent, rest)
            } else if let Some(rest) = at.strip_prefix("self::") {
                (module.clone(), rest)
            } else if let Some(child) = children.iter().find(|c| at.starts_with(&format!("{c}::")))
            {
                let mut base = module.clone();
                base.push(child.clone());
                (base, &at[child.len() + 2..])
            } else {
                i += 1;
                continue;
            };
            for tail in expand(rest) {
                let mut path = base.clone();
                path.extend(tail);
                found.push(path);
            }
        }
        i += 1;
    }
    found
}

/// `a::b::C;` → [[a, b, C]]; `a::{b::X, c}` → [[a, b, X], [a, c]].
fn expand(rest: &str) -> Vec<Vec<String>> {
    let mut head = Vec::new();
    let mut chars = rest;
    loop {
        if let Some(group) = chars.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            return group[..end]
                .split(',')
                .map(str::trim)
                .filter(|item| !item.is_empty())
                .map(|item| {
                    let mut path = head.clone();
                    path.extend(
                        item.split("::")
                            .map(|seg| seg.split_whitespace().next().unwrap_or("").to_owned()),
                    );
                    path
                })
                .collect();
        }
        let end = chars
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(chars.len());
        if end == 0 {
            return vec![head];
        }
        head.push(chars[..end].to_owned());
        chars = &chars[end..];
        match chars.strip_prefix("::") {
            Some(next) => chars = next,
            None => return vec![head],
        }
    }
}

fn graph() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let files = sources();
    files
        .iter()
        .map(|(file, text)| {
            let targets = references(file, text)
                .iter()
                .filter_map(|path| file_of(path, &files))
                .filter(|target| target != file)
                // A module's own `mod.rs` declares it; naming a sibling through it is no import.
                .filter(|target| !is_declaring_parent(target, file))
                .collect();
            (file.clone(), targets)
        })
        .collect()
}

/// Whether `parent` is a `mod.rs` that only declares `file`'s module (a layer's `mod.rs`).
fn is_declaring_parent(parent: &Path, file: &Path) -> bool {
    parent.file_name().is_some_and(|name| name == "mod.rs")
        && file.starts_with(parent.parent().unwrap())
        && module_of(parent).len() == 1
}

fn layer_of(file: &Path) -> usize {
    let top = module_of(file)[0].clone();
    LAYERS
        .iter()
        .position(|layer| *layer == top)
        .unwrap_or_else(|| panic!("{} is in no layer; add it to LAYERS", file.display()))
}

#[test]
fn every_file_imports_only_its_own_layer_or_lower() {
    let mut wrong = Vec::new();
    for (file, targets) in graph() {
        for target in targets {
            if layer_of(&target) > layer_of(&file) {
                wrong.push(format!("{} imports {}", file.display(), target.display()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layers:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn no_command_imports_another() {
    let commands = Path::new("cli/commands");
    let mut wrong = Vec::new();
    for (file, targets) in graph() {
        if !file.starts_with(commands) {
            continue;
        }
        for target in targets.iter().filter(|t| t.starts_with(commands)) {
            wrong.push(format!("{} imports {}", file.display(), target.display()));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

// Depth-first search for a back edge; report the circle it closes.
fn visit(
    file: &Path,
    graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
    path: &mut Vec<PathBuf>,
    done: &mut BTreeSet<PathBuf>,
) -> Option<Vec<PathBuf>> {
    if let Some(start) = path.iter().position(|p| p == file) {
        let mut circle = path[start..].to_vec();
        circle.push(file.to_path_buf());
        return Some(circle);
    }
    if done.contains(file) {
        return None;
    }
    path.push(file.to_path_buf());
    for next in graph.get(file).into_iter().flatten() {
        if let Some(circle) = visit(next, graph, path, done) {
            return Some(circle);
        }
    }
    path.pop();
    done.insert(file.to_path_buf());
    None
}

#[test]
fn no_two_files_import_each_other() {
    let graph = graph();
    let mut done = BTreeSet::new();
    for file in graph.keys() {
        if let Some(circle) = visit(file, &graph, &mut Vec::new(), &mut done) {
            let shown: Vec<String> = circle.iter().map(|p| p.display().to_string()).collect();
            panic!("import circle: {}", shown.join(" → "));
        }
    }
}

#[test]
fn the_graph_sees_imports() {
    // Guards the parser: known edges must be found, or the tests above would pass vacuously.
    let graph = graph();
    let edge = |from: &str, to: &str| graph[Path::new(from)].contains(Path::new(to));
    assert!(edge("store/mailbox.rs", "store/lock.rs"));
    assert!(edge("cli/commands/send.rs", "protocol/rules.rs"));
    assert!(edge(
        "member/supervisor/mod.rs",
        "member/supervisor/child.rs"
    ));
    assert!(edge("cli/mod.rs", "cli/commands/up.rs"));
    assert_eq!(
        expand("a::{b::X, c}"),
        [vec!["a", "b", "X"], vec!["a", "c"]]
    );
}
