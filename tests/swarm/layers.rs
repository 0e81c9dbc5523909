//! The import graph of the layers, held to docs/ARCHITECTURE.md ("Layers"). Between crates the
//! compiler holds it: a crate sees only those below it. Within a crate this test does: each file
//! imports only from its own layer or those below it, no command imports another command, the
//! commands reach other hosts only through the seam, and no two files import each other, however
//! indirectly. It also holds the crates to the layers' order.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

use crate::harness::repo;

/// Bottom to top. `error.rs` sits below them all.
const LAYERS: [&str; 12] = [
    "error",
    "base",
    "format",
    "store",
    "policy",
    "protocol",
    "peer",
    "launch",
    "member",
    "cluster",
    "dashboard",
    "cli",
];

/// The crates' roots, bottom to top: the workspace's three, then the binary's own.
const CRATE_ROOTS: [&str; 4] = [
    "crates/core/src",
    "crates/team/src",
    "crates/cluster/src",
    "src",
];

/// Every source file but the crates' roots, by its path under its crate's `src/`: the layers are
/// one tree of modules, whichever crate holds each (every crate root re-exports those below it).
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
    let mut out = BTreeMap::new();
    for root in CRATE_ROOTS {
        let root = repo().join(root);
        walk(&root, &root, &mut out);
    }
    out
}

/// The crates' roots as one text: what each re-exports, with the crate it comes from left out.
fn crate_roots() -> String {
    CRATE_ROOTS
        .iter()
        .map(|root| fs::read_to_string(repo().join(root).join("lib.rs")).unwrap())
        .collect::<Vec<_>>()
        .join("\n")
        .replace("swarm_core::", "")
        .replace("swarm_team::", "")
        .replace("swarm_cluster::", "")
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

/// Source text with comments, string and character literals blanked out (newlines kept), so
/// only code is read: a path in a comment or a message is no import.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let start = i;
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if (c == 'r' || (c == 'b' && next == Some('r')))
            && (i == 0 || !ident(chars[i - 1]))
            && {
                let mut j = i + if c == 'b' { 2 } else { 1 };
                while chars.get(j) == Some(&'#') {
                    j += 1;
                }
                chars.get(j) == Some(&'"')
            }
        {
            // A raw string: r"…", r#"…"#, br#"…"#.
            i += if c == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while chars[i] == '#' {
                hashes += 1;
                i += 1;
            }
            i += 1;
            while i < chars.len() {
                if chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#')) {
                    i += 1 + hashes;
                    break;
                }
                i += 1;
            }
        } else if c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A character literal; a lifetime (`'a`) has no closing quote.
            i += 1;
            while i < chars.len() && chars[i] != '\'' {
                i += if chars[i] == '\\' { 2 } else { 1 };
            }
            i += 1;
        } else {
            out.push(c);
            i += 1;
            continue;
        }
        let end = i.min(chars.len());
        out.extend(chars[start..end].iter().map(|c| blank(*c)));
        i = end;
    }
    out
}

/// A word or one piece of punctuation (`::` is one).
fn tokens(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let chars: Vec<char> = code.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c.is_alphanumeric() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            out.push(chars[start..i].iter().collect());
        } else if c == ':' && chars.get(i + 1) == Some(&':') {
            out.push("::".to_owned());
            i += 2;
        } else {
            out.push(c.to_string());
            i += 1;
        }
    }
    out
}

/// A path as written, with the name it binds (its last segment, or what `as` renames it to).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Written {
    path: Vec<String>,
    binds: String,
}

/// The path tree at `tokens[at..]`: `a::b::C`, `a::{b::X, c::{d, e}, self}`, `a::*`,
/// `a::b as c`. Returns every path it names and where it ends.
fn tree(tokens: &[String], mut at: usize, prefix: &[String]) -> (Vec<Written>, usize) {
    let mut path = prefix.to_vec();
    loop {
        match tokens.get(at).map(String::as_str) {
            Some("{") => {
                let mut found = Vec::new();
                at += 1;
                while let Some(token) = tokens.get(at) {
                    match token.as_str() {
                        "}" => return (found, at + 1),
                        "," => at += 1,
                        "self" => {
                            let binds = path.last().cloned().unwrap_or_default();
                            found.push(Written {
                                path: path.clone(),
                                binds,
                            });
                            at += 1;
                        }
                        _ => {
                            let (inner, next) = tree(tokens, at, &path);
                            found.extend(inner);
                            // Whatever the inner tree could not read is skipped.
                            at = next.max(at + 1);
                        }
                    }
                }
                return (found, at);
            }
            Some("*") => {
                return (
                    vec![Written {
                        path,
                        binds: "*".into(),
                    }],
                    at + 1,
                );
            }
            Some(word) if is_word(word) => {
                path.push(word.to_owned());
                at += 1;
                let mut binds = word.to_owned();
                if tokens.get(at).map(String::as_str) == Some("as") {
                    binds = tokens.get(at + 1).cloned().unwrap_or_default();
                    at += 2;
                }
                if tokens.get(at).map(String::as_str) == Some("::") {
                    at += 1;
                    continue;
                }
                return (vec![Written { path, binds }], at);
            }
            _ => {
                let binds = path.last().cloned().unwrap_or_default();
                return (vec![Written { path, binds }], at);
            }
        }
    }
}

fn is_word(token: &str) -> bool {
    token.chars().all(|c| c.is_alphanumeric() || c == '_')
}

/// What resolving paths needs beyond the file itself.
#[derive(Debug, Default)]
struct Crate {
    /// `pub use` at the crate root: the name `crate::NAME` means, by what it leads to.
    reexports: BTreeMap<String, Vec<String>>,
    /// `macro_rules! NAME`: the file that defines it.
    macros: BTreeMap<String, PathBuf>,
}

impl Crate {
    fn read(root: &str, files: &BTreeMap<PathBuf, String>) -> Self {
        let mut reexports = BTreeMap::new();
        let root_tokens = tokens(&code_only(root));
        for (at, token) in root_tokens.iter().enumerate() {
            if token == "use" {
                for written in tree(&root_tokens, at + 1, &[]).0 {
                    reexports.insert(written.binds, written.path);
                }
            }
        }
        let mut macros = BTreeMap::new();
        for (file, text) in files {
            let tokens = tokens(&code_only(text));
            for at in 0..tokens.len().saturating_sub(2) {
                if tokens[at] == "macro_rules" && tokens[at + 1] == "!" {
                    macros.insert(tokens[at + 2].clone(), file.clone());
                }
            }
        }
        Self { reexports, macros }
    }
}

/// A reference from one file to another part of the crate.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Reference {
    /// A module path, from the crate root.
    Path(Vec<String>),
    /// A macro defined in that file.
    Macro(PathBuf),
}

/// What a file refers to: every path from `crate::`, `$crate::`, `super::` (as many as there
/// are), `self::` or a child module, in `use` or anywhere in the code, through groups however
/// nested; names the crate root re-exports; and macros defined in other files. Inline modules
/// (`mod tests { … }`) move `self` and `super` as the compiler does. Comments and literals are
/// not code.
fn references(file: &Path, text: &str, krate: &Crate) -> Vec<Reference> {
    let module = module_of(file);
    let tokens = tokens(&code_only(text));
    let children: Vec<&str> = (0..tokens.len().saturating_sub(2))
        .filter(|&at| tokens[at] == "mod" && tokens[at + 2] == ";")
        .map(|at| tokens[at + 1].as_str())
        .collect();
    let mut found = Vec::new();
    // Inline modules open here: name and the brace depth inside them.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0;
    let mut opening = None;
    let mut at = 0;
    while at < tokens.len() {
        let token = tokens[at].as_str();
        match token {
            "{" => {
                depth += 1;
                if let Some(name) = opening.take() {
                    inline.push((name, depth));
                }
                at += 1;
                continue;
            }
            "}" => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth -= 1;
                at += 1;
                continue;
            }
            "mod" => {
                opening = tokens.get(at + 1).cloned();
                at += 1;
                continue;
            }
            ";" => opening = None,
            _ => {}
        }
        if tokens.get(at + 1).map(String::as_str) == Some("!")
            && tokens.get(at + 2).map(String::as_str) != Some("=")
            && let Some(defined) = krate.macros.get(token)
            && defined != file
        {
            found.push(Reference::Macro(defined.clone()));
        }
        let after_path = at > 0 && (tokens[at - 1] == "::" || tokens[at - 1] == "$");
        let followed = |by: usize| tokens.get(at + by).map(String::as_str) == Some("::");
        let starts = (matches!(token, "crate" | "super" | "self") || children.contains(&token))
            && followed(1);
        let dollar_crate =
            token == "$" && tokens.get(at + 1).map(String::as_str) == Some("crate") && followed(2);
        if !((starts && !after_path) || dollar_crate) {
            at += 1;
            continue;
        }
        let first = if dollar_crate { at + 1 } else { at };
        let (written, end) = tree(&tokens, first, &[]);
        let here: Vec<String> = module
            .iter()
            .cloned()
            .chain(inline.iter().map(|(name, _)| name.clone()))
            .collect();
        for Written { path, .. } in written {
            let mut segments = path.into_iter().peekable();
            let mut base = match segments.next().as_deref() {
                Some("crate") => Vec::new(),
                Some("self") => here.clone(),
                Some("super") => {
                    let mut base = here.clone();
                    base.pop();
                    base
                }
                Some(child) => {
                    let mut base = module.clone();
                    base.push(child.to_owned());
                    base
                }
                None => continue,
            };
            while segments.peek().map(String::as_str) == Some("super") {
                segments.next();
                base.pop();
            }
            let mut path: Vec<String> = base.into_iter().chain(segments).collect();
            // `crate::run` is what the crate root re-exports under that name.
            if let Some(reexported) = path
                .first()
                .filter(|name| !LAYERS.contains(&name.as_str()))
                .and_then(|name| krate.reexports.get(name))
            {
                path.splice(..1, reexported.iter().cloned());
            }
            if let Some(defined) = path
                .last()
                .filter(|_| tokens.get(end).map(String::as_str) == Some("!"))
                .and_then(|name| krate.macros.get(name))
            {
                found.push(Reference::Macro(defined.clone()));
            }
            found.push(Reference::Path(path));
        }
        at = end.max(at + 1);
    }
    found
}

fn graph() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let files = sources();
    let krate = Crate::read(&crate_roots(), &files);
    files
        .iter()
        .map(|(file, text)| {
            let targets = references(file, text, &krate)
                .into_iter()
                .filter_map(|reference| match reference {
                    Reference::Path(path) => file_of(&path, &files),
                    Reference::Macro(defined) => Some(defined),
                })
                .filter(|target| target != file)
                // A module's own `mod.rs` declares it; naming a sibling through it is no import.
                .filter(|target| !is_declaring_parent(target, file))
                .collect();
            (file.clone(), targets)
        })
        .collect()
}

/// Whether `parent` is the `mod.rs` that declares `file`'s module: a layer's `mod.rs`, or one
/// like `cluster/node/mod.rs` whose children are its services and use what it shares with them.
fn is_declaring_parent(parent: &Path, file: &Path) -> bool {
    parent.file_name().is_some_and(|name| name == "mod.rs")
        && file.starts_with(parent.parent().unwrap())
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

/// The crate root's doc and docs/ARCHITECTURE.md's table name the layers this test enforces, in
/// its order.
#[test]
fn the_layers_are_named_alike_everywhere() {
    let root = fs::read_to_string(repo().join("src/lib.rs")).unwrap();
    let doc: String = root
        .lines()
        .filter_map(|line| line.strip_prefix("//!"))
        .collect::<Vec<_>>()
        .join(" ");
    let named: Vec<&str> = doc
        .split('`')
        .skip(1)
        .step_by(2)
        .filter(|word| LAYERS.contains(word))
        .collect();
    assert_eq!(
        named,
        LAYERS[1..],
        "src/lib.rs's doc must list the layers bottom to top"
    );
    let design = fs::read_to_string(repo().join("docs/ARCHITECTURE.md")).unwrap();
    let table: Vec<&str> = design
        .lines()
        .skip_while(|line| !line.starts_with("| layer | folder |"))
        .skip(2)
        .take_while(|line| line.starts_with('|'))
        .filter_map(|line| line.split('|').nth(1))
        .map(str::trim)
        .collect();
    let words = |layers: &[&str]| {
        layers
            .iter()
            .map(|layer| if *layer == "error" { "errors" } else { layer })
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        table,
        words(&LAYERS),
        "docs/ARCHITECTURE.md, \"Layers\", bottom to top"
    );
}

/// Each crate declares a run of the layers, and the runs follow one another bottom to top.
#[test]
fn the_crates_hold_the_layers_in_order() {
    let position = |layer: &String| LAYERS.iter().position(|known| known == layer);
    let declared: Vec<String> = CRATE_ROOTS
        .iter()
        .flat_map(|root| {
            let text = fs::read_to_string(repo().join(root).join("lib.rs")).unwrap();
            let tokens = tokens(&code_only(&text));
            let mut layers: Vec<String> = (0..tokens.len().saturating_sub(2))
                .filter(|&at| tokens[at] == "mod" && tokens[at + 2] == ";")
                .map(|at| tokens[at + 1].clone())
                .collect();
            layers.sort_by_key(position);
            layers
        })
        .collect();
    assert_eq!(declared, LAYERS, "the crates' modules, bottom to top");
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

/// The files of `cluster/` that are its seam (docs/ARCHITECTURE.md, "Across hosts, one seam"):
/// `Fleet` and what it hands out.
const SEAM: [&str; 4] = [
    "cluster/fleet.rs",
    "cluster/logs.rs",
    "cluster/spread.rs",
    "cluster/tasks.rs",
];

#[test]
fn commands_and_the_dashboard_reach_other_hosts_only_through_the_seam() {
    // `swarm node` is this host's part of a team across hosts: it is the cluster's own command.
    let node = Path::new("cli/commands/node.rs");
    let mut wrong = Vec::new();
    for (file, targets) in graph() {
        if !(file.starts_with("cli") || file.starts_with("dashboard")) || file == node {
            continue;
        }
        for target in &targets {
            if target.starts_with("cluster") && !SEAM.iter().any(|seam| target == Path::new(seam)) {
                wrong.push(format!("{} imports {}", file.display(), target.display()));
            }
        }
    }
    for (file, text) in sources() {
        if file.starts_with("cli/commands") && code_only(&text).contains("spans_hosts") {
            wrong.push(format!(
                "{} asks whether a team spans hosts",
                file.display()
            ));
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
}

/// The paths `text`, as file `file`, refers to, in a crate whose root re-exports `cli::run` and
/// whose `base/names.rs` defines macro `name_rule!`.
fn referred(file: &str, text: &str) -> Vec<String> {
    let krate = Crate {
        reexports: BTreeMap::from([("run".to_owned(), vec!["cli".into(), "run".into()])]),
        macros: BTreeMap::from([("name_rule".to_owned(), PathBuf::from("base/names.rs"))]),
    };
    references(Path::new(file), text, &krate)
        .into_iter()
        .map(|reference| match reference {
            Reference::Path(path) => path.join("::"),
            Reference::Macro(file) => format!("macro in {}", file.display()),
        })
        .collect()
}

#[test]
fn the_parser_reads_every_way_a_path_is_written() {
    // Groups, nested and over lines, with `self` and renames.
    assert_eq!(
        referred(
            "store/a.rs",
            "use crate::{cli::x, member::{self, stop::{stop as halt, Y}},\n    peer};"
        ),
        [
            "cli::x",
            "member",
            "member::stop::stop",
            "member::stop::Y",
            "peer"
        ]
    );
    // Paths in expressions, types and attributes, not only in `use`.
    assert_eq!(
        referred(
            "store/a.rs",
            "fn f() -> crate::cli::Out { let x: Vec<crate::launch::T> = crate::member::stop::stop(1); }"
        ),
        ["cli::Out", "launch::T", "member::stop::stop"]
    );
    // `super` as many times as written, out of a layer; `self`; a child module by its name.
    assert_eq!(
        referred(
            "member/supervisor/queue.rs",
            "mod inner;\nuse super::super::super::cli::x; use super::seat::S; use self::inner::Z; inner::f();"
        ),
        [
            "cli::x",
            "member::supervisor::seat::S",
            "member::supervisor::queue::inner::Z",
            "member::supervisor::queue::inner::f"
        ]
    );
    // An inline module moves `super` and `self`.
    assert_eq!(
        referred(
            "store/a.rs",
            "mod tests { use super::*; use super::super::super::cli::y; fn f() { self::g(); } }\nuse super::z;"
        ),
        ["store::a", "cli::y", "store::a::tests::g", "store::z"]
    );
    // Macros: `$crate` paths in their bodies, and invoking one defined in another file.
    assert_eq!(
        referred(
            "store/a.rs",
            "macro_rules! m { () => { $crate::cli::x() }; }\nname_rule!(x); crate::name_rule!(y); a != b;"
        ),
        [
            "cli::x",
            "macro in base/names.rs",
            "macro in base/names.rs",
            "name_rule"
        ]
    );
    // What the crate root re-exports is what it leads to.
    assert_eq!(referred("store/a.rs", "crate::run();"), ["cli::run"]);
    // Comments and literals are not code.
    assert!(
        referred(
            "store/a.rs",
            "// crate::cli::a\n/* crate::cli::b /* nested */ crate::cli::c */\nlet s = \"crate::cli::d\"; let r = r#\"crate::cli::e\"#; let c = '\"'; let l: &'static str = \"\";"
        )
        .is_empty()
    );
}
