//! Text for people: one-line previews, counts.

/// `1 member`, `2 members`, `0 members`: a count with its noun in the number it takes.
pub(crate) fn count(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {many}")
    }
}

/// A one-line preview: the first non-empty line, whitespace collapsed, at most 60 characters.
pub(crate) fn derive_summary(text: &str) -> String {
    const MAX_CHARS: usize = 60;
    let line = text
        .lines()
        .map(str::trim)
        .find(|line| !line.is_empty())
        .unwrap_or("");
    let collapsed = line.split_whitespace().collect::<Vec<_>>().join(" ");
    if collapsed.chars().count() <= MAX_CHARS {
        collapsed
    } else {
        let cut: String = collapsed.chars().take(MAX_CHARS - 1).collect();
        format!("{}…", cut.trim_end())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_read_right() {
        assert_eq!(count(1, "pane", "panes"), "1 pane");
        assert_eq!(count(2, "member", "members"), "2 members");
        assert_eq!(count(0, "entry", "entries"), "0 entries");
    }

    #[test]
    fn summaries_are_one_short_line() {
        assert_eq!(derive_summary("\n  fix   the\tbug \nmore"), "fix the bug");
        let long = derive_summary(&"word ".repeat(40));
        assert!(long.ends_with('…') && long.chars().count() <= 60, "{long}");
    }
}
