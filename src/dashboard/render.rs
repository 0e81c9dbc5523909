//! Drawing the dashboard at whatever size the terminal has: the header with the totals, the
//! members' table, the selected pane, the pending decisions, the feed, the bottom line, and over
//! them the help or, instead of pane and feed, the task board. Columns drop in order of
//! importance as the width shrinks (docs/ARCHITECTURE.md, "Dashboard").

use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style, Stylize};
use ratatui::text::{Line, Span, Text};
use ratatui::widgets::{
    Block, Borders, Cell, Clear, Paragraph, Row as TableRow, Table, TableState,
};

use crate::base::clock;
use crate::format::event::Activity;
use crate::format::task::Status;

use super::decisions::Kind;
use super::feed::Feed;
use super::snapshot::{Phase, Row, Snapshot};
use super::view::{Mode, View};

/// The keys, as `?` lists them.
pub(crate) const KEYS: [(&str, &str); 14] = [
    ("↑/↓ j/k", "select a member"),
    (
        "Enter",
        "go to its pane (outside tmux: print how to attach, and quit)",
    ),
    ("s", "send the selected member a message"),
    ("S", "send every member a message"),
    (
        "a",
        "approve a plan, allow an ask (the selected member's first)",
    ),
    (
        "A",
        "allow the permission ask always (keep the rules it suggests)",
    ),
    ("r", "reject or deny it, saying why"),
    ("x", "stop the selected member, after you confirm"),
    ("t", "the task board, and back"),
    ("/", "filter the feed (empty: show everything)"),
    ("?", "this help"),
    ("q", "quit"),
    ("Esc", "close what is open"),
    ("Ctrl-C", "quit"),
];

/// A column of the members' table.
#[derive(Clone, Copy)]
struct Column {
    title: &'static str,
    /// Its width, or its least when it fills what is left.
    width: u16,
    fill: bool,
    /// Lower keeps it longer as the width shrinks.
    rank: u8,
}

/// In the order they are shown; `rank` is the order they are kept. HOST, only in a team across
/// hosts, goes right after the state: where a member runs decides what can be done with it.
/// TOKENS and COST go first when the width shrinks: they are there to be glanced at, and the
/// header has the team's total.
const COLUMNS: [Column; 13] = [
    column("NAME", 0, 0, false),
    column(HOST, 0, 2, false),
    column("PROGRAM", 10, 8, false),
    column("MODEL", 12, 9, false),
    column("STATE", 11, 1, false),
    column("ACTIVITY", 13, 3, false),
    column("ELAPSED", 12, 6, false),
    column("UNREAD", 6, 4, false),
    column("LAST IN/OUT", 11, 7, false),
    column("TOKENS", 7, 12, false),
    column("COST", 9, 11, false),
    column("TASK", 14, 5, true),
    column("WORKTREE", 24, 10, false),
];

const HOST: &str = "HOST";

const fn column(title: &'static str, width: u16, rank: u8, fill: bool) -> Column {
    Column {
        title,
        width,
        fill,
        rank,
    }
}

/// Draws everything.
pub(crate) fn draw(frame: &mut Frame<'_>, snapshot: &Snapshot, feed: &Feed, view: &View) {
    let area = frame.area();
    let [header, table, body, footer] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(table_height(snapshot, area.height)),
        Constraint::Min(3),
        Constraint::Length(1),
    ])
    .areas(area);
    draw_header(frame, header, snapshot, view);
    draw_members(frame, table, snapshot, view);
    if view.board {
        draw_board(frame, body, snapshot);
    } else {
        draw_body(frame, body, snapshot, feed, view);
    }
    draw_footer(frame, footer, view);
    if view.help {
        draw_help(frame, area);
    }
}

/// The members' table: every row and warning when it fits, else about half the screen, scrolled.
fn table_height(snapshot: &Snapshot, height: u16) -> u16 {
    let lines = snapshot.rows.len()
        + snapshot.rows.iter().filter(|r| r.warning.is_some()).count()
        + snapshot.warnings.len()
        + 3;
    let most = (height.saturating_sub(2) / 2).max(5);
    u16::try_from(lines).unwrap_or(u16::MAX).clamp(4, most)
}

fn draw_header(frame: &mut Frame<'_>, area: Rect, snapshot: &Snapshot, view: &View) {
    let phase = snapshot.phase();
    let phase_style = match phase {
        Phase::Running => Style::new().green().bold(),
        Phase::Ended | Phase::Gone => Style::new().yellow().bold(),
        Phase::NotStarted => Style::new().bold(),
    };
    let mut spans = vec![
        Span::styled(" swarm top ", Style::new().reversed().bold()),
        Span::raw(" team "),
        Span::styled(snapshot.team.clone(), Style::new().bold()),
        Span::raw(" · "),
        Span::styled(phase.as_str(), phase_style),
    ];
    if !snapshot.decisions.is_empty() {
        spans.push(Span::raw(" · "));
        spans.push(Span::styled(
            format!("{} to decide", snapshot.decisions.len()),
            Style::new().magenta().bold(),
        ));
    }
    if let Some(here) = &snapshot.disconnected {
        spans.push(Span::raw(" · "));
        spans.push(Span::styled(
            format!("! {here} is disconnected: no node or no NATS"),
            Style::new().red().bold(),
        ));
    }
    let rate = format!(" · {} msg/min", view.rate);
    let tasks = snapshot
        .task_counts()
        .map(|[pending, in_progress, completed]| {
            format!(" · tasks {pending} pending, {in_progress} in progress, {completed} done")
        });
    // A member that was never launched (a lead with no program, one added by init or join) shows
    // `-` in its row; in a sentence, that says nothing.
    // What the running members are doing, who needs the person first, in place of how many run;
    // then the other states.
    let doing: Vec<String> = snapshot
        .by_activity()
        .into_iter()
        .filter(|(_, n)| *n > 0)
        .map(|(state, n)| format!("{n} {}", state.as_str()))
        .collect();
    let states: Vec<String> = doing
        .iter()
        .cloned()
        .chain(
            snapshot
                .by_state()
                .iter()
                .filter(|(state, _)| doing.is_empty() || state != "running")
                .map(|(state, n)| match state.as_str() {
                    "-" => format!("{n} not started"),
                    state => format!("{n} {state}"),
                }),
        )
        .collect();
    let states = (!states.is_empty()).then(|| format!(" · {}", states.join(", ")));
    // What each member is matters most: when the line is too long, the rate goes, then the task
    // counts (`t` shows the board).
    let width = |parts: &[Option<&String>]| {
        Line::from(spans.clone()).width()
            + parts
                .iter()
                .flatten()
                .map(|part| part.chars().count())
                .sum::<usize>()
    };
    // The team's total last: what it is doing comes first; the rate and the task counts go
    // before it does.
    let cost = snapshot.cost.as_ref().map(|cost| format!(" · {cost}"));
    let fits = |parts: &[Option<&String>]| width(parts) <= usize::from(area.width);
    let (rate, tasks) = if fits(&[Some(&rate), tasks.as_ref(), states.as_ref(), cost.as_ref()]) {
        (Some(rate), tasks)
    } else if fits(&[tasks.as_ref(), states.as_ref(), cost.as_ref()]) {
        (None, tasks)
    } else {
        (None, None)
    };
    spans.extend(
        [rate, tasks, states, cost]
            .into_iter()
            .flatten()
            .map(Span::raw),
    );
    frame.render_widget(Paragraph::new(Line::from(spans)), area);
}

/// The columns that fit in `width`, in the order shown; HOST only when `host_width` is given.
fn columns(width: u16, name_width: u16, host_width: Option<u16>) -> Vec<(usize, Column)> {
    let mut kept: Vec<(usize, Column)> = COLUMNS
        .iter()
        .copied()
        .enumerate()
        .filter_map(|(at, mut column)| {
            if at == 0 {
                column.width = name_width;
            }
            if column.title == HOST {
                column.width = host_width?;
            }
            Some((at, column))
        })
        .collect();
    // Two for the borders, one between columns, two for the selection mark.
    let needed = |kept: &[(usize, Column)]| -> u16 {
        kept.iter().map(|(_, c)| c.width + 1).sum::<u16>() + 4
    };
    while needed(&kept) > width && kept.len() > 1 {
        let dropped = kept
            .iter()
            .enumerate()
            .max_by_key(|(_, (_, column))| column.rank)
            .map(|(at, _)| at)
            .unwrap_or_default();
        kept.remove(dropped);
    }
    kept
}

/// The widest of `texts`, in characters, within `least..=most`.
fn widest<'a>(texts: impl Iterator<Item = &'a str>, least: u16, most: u16) -> u16 {
    texts
        .map(|text| u16::try_from(text.chars().count()).unwrap_or(u16::MAX))
        .max()
        .unwrap_or(least)
        .clamp(least, most)
}

fn draw_members(frame: &mut Frame<'_>, area: Rect, snapshot: &Snapshot, view: &View) {
    let names: Vec<String> = snapshot.rows.iter().map(shown_name).collect();
    let name_width = widest(names.iter().map(String::as_str), 4, 20);
    let host_width = snapshot.hosts.then(|| {
        widest(
            snapshot.rows.iter().filter_map(|row| row.host.as_deref()),
            4,
            16,
        )
    });
    let columns = columns(area.width, name_width, host_width);
    let header = TableRow::new(columns.iter().map(|(_, c)| Cell::from(c.title)))
        .style(Style::new().bold().underlined());
    let mut lines = Vec::new();
    let mut warnings = Vec::new();
    let mut selected_line = None;
    let selected = view.index(snapshot);
    for (at, row) in snapshot.rows.iter().enumerate() {
        if Some(at) == selected {
            selected_line = Some(lines.len());
        }
        lines.push(TableRow::new(
            columns
                .iter()
                .map(|(index, _)| cell(*index, row, snapshot.now_ms)),
        ));
        // Why it needs the person, or why it is stalled, on a line of its own below it.
        if let Some(doing) = row
            .activity
            .as_ref()
            .filter(|d| matches!(d.state, Activity::NeedsYou | Activity::Stalled))
        {
            let said = match doing.state {
                Activity::NeedsYou => "needs you",
                _ => "is stalled",
            };
            let why = doing.why.as_deref().unwrap_or("-");
            let style = activity_style(doing.state).not_reversed();
            warnings.push((lines.len(), format!("» {} {said}: {why}", row.name), style));
            lines.push(TableRow::new([Cell::from("")]));
        }
        if let Some(warning) = &row.warning {
            let style = Style::new().yellow();
            warnings.push((lines.len(), format!("! {}: {warning}", row.name), style));
            lines.push(TableRow::new([Cell::from("")]));
        }
    }
    for warning in &snapshot.warnings {
        warnings.push((lines.len(), format!("! {warning}"), Style::new().yellow()));
        lines.push(TableRow::new([Cell::from("")]));
    }
    if snapshot.rows.is_empty() {
        let why = match snapshot.phase() {
            Phase::Gone => "the team was removed",
            _ => "no members",
        };
        lines.push(TableRow::new([Cell::from(why).italic()]));
    }
    let widths: Vec<Constraint> = columns
        .iter()
        .map(|(_, c)| {
            if c.fill {
                Constraint::Min(c.width)
            } else {
                Constraint::Length(c.width)
            }
        })
        .collect();
    let title = format!(" members {} ", snapshot.rows.len());
    let block = Block::new().borders(Borders::ALL).title(title);
    let inner = block.inner(area);
    let table = Table::new(lines, widths)
        .header(header)
        .block(block)
        .row_highlight_style(Style::new().reversed())
        .highlight_symbol("▶ ");
    let mut state = TableState::default().with_selected(selected_line);
    frame.render_stateful_widget(table, area, &mut state);
    // A warning is a row of its own, across every column.
    let first = state.offset();
    for (line, text, style) in warnings {
        let Some(shown) = line.checked_sub(first) else {
            continue;
        };
        let y = inner.y + 1 + u16::try_from(shown).unwrap_or(u16::MAX);
        if y >= inner.bottom() {
            continue;
        }
        let at = Rect {
            x: inner.x + 2,
            y,
            width: inner.width.saturating_sub(2),
            height: 1,
        };
        frame.render_widget(Paragraph::new(text).style(style), at);
    }
}

/// A member's name, and `[fenced]` after a fenced member's ("Fencing members"; `status` has the
/// column).
fn shown_name(row: &Row) -> String {
    match row.fenced {
        Some(_) => format!("{} [fenced]", row.name),
        None => row.name.clone(),
    }
}

fn cell(column: usize, row: &Row, now_ms: u64) -> Cell<'static> {
    match column {
        0 => Cell::from(Span::styled(shown_name(row), name_style(row))),
        1 => Cell::from(row.host.clone().unwrap_or_else(|| "-".to_owned())),
        2 => Cell::from(row.program.clone()),
        3 => Cell::from(row.model.clone().unwrap_or_else(|| "-".to_owned())),
        4 => Cell::from(Span::styled(row.state.clone(), state_style(&row.state))),
        5 => Cell::from(match &row.activity {
            Some(doing) => {
                let held = age(Some(doing.since_ms), now_ms);
                Span::styled(
                    format!("{} {held}", doing.state.as_str()),
                    activity_style(doing.state),
                )
            }
            None => Span::raw("-"),
        }),
        6 => Cell::from(elapsed(row, now_ms)),
        7 => {
            let unread = row.unread.to_string();
            // A member on another host reads its inbox there.
            Cell::from(if row.remote {
                Span::raw("-")
            } else if row.unread > 0 {
                Span::styled(unread, Style::new().bold())
            } else {
                Span::raw(unread)
            })
        }
        8 => Cell::from(format!(
            "{}/{}",
            age(row.last_in_ms, now_ms),
            age(row.last_out_ms, now_ms)
        )),
        9 => Cell::from(row.tokens.clone()),
        10 => Cell::from(row.cost.clone()),
        11 => Cell::from(row.task.clone().unwrap_or_else(|| "-".to_owned())),
        _ => Cell::from(row.worktree.as_ref().map_or_else(
            || "-".to_owned(),
            |(branch, added, removed)| format!("{branch} +{added}/-{removed}"),
        )),
    }
}

fn name_style(row: &Row) -> Style {
    let style = Style::new().bold();
    match row.color {
        Some(color) => style.fg(Color::from(color.ansi())),
        None => style,
    }
}

/// Who needs the person stands out most, then who is stalled.
fn activity_style(state: Activity) -> Style {
    match state {
        Activity::NeedsYou => Style::new().magenta().bold().reversed(),
        Activity::Stalled => Style::new().yellow().bold(),
        Activity::Working => Style::new().green(),
        Activity::Idle => Style::new().dim(),
        Activity::Starting => Style::new().cyan(),
    }
}

/// A terminal colour as ratatui names it.
fn state_style(state: &str) -> Style {
    match state {
        "running" => Style::new().green(),
        "idle" => Style::new().yellow(),
        "queued" | "starting" | "restarting" => Style::new().cyan(),
        "exited" => Style::new().dim(),
        "-" => Style::new(),
        // failed, killed, vanished, orphaned, pane-gone, unreachable
        _ => Style::new().red(),
    }
}

/// How long it has run (or ran), against its timeout: `3m05s/30m`.
fn elapsed(row: &Row, now_ms: u64) -> String {
    let Some(started) = row.started_ms else {
        return "-".to_owned();
    };
    let until = row.ended_ms.unwrap_or(now_ms);
    let ran = short(until.saturating_sub(started) / 1000);
    match row.timeout_s {
        Some(limit) => format!("{ran}/{}", short(limit)),
        None => ran,
    }
}

/// `42s`, `3m05s`, `1h02m`, `3d04h`.
fn short(secs: u64) -> String {
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m{:02}s", secs / 60, secs % 60),
        3600..86_400 => format!("{}h{:02}m", secs / 3600, secs % 3600 / 60),
        _ => format!("{}d{:02}h", secs / 86_400, secs % 86_400 / 3600),
    }
}

/// How long ago, briefly: `5s`, `3m`; `-` for never.
fn age(then: Option<u64>, now_ms: u64) -> String {
    then.map_or_else(
        || "-".to_owned(),
        |then| {
            let ago = clock::ago(then, now_ms);
            ago.strip_suffix(" ago").unwrap_or(&ago).to_owned()
        },
    )
}

fn draw_body(frame: &mut Frame<'_>, area: Rect, snapshot: &Snapshot, feed: &Feed, view: &View) {
    let [pane, right] =
        Layout::horizontal([Constraint::Percentage(50), Constraint::Percentage(50)]).areas(area);
    draw_pane(frame, pane, snapshot, view);
    let decisions = u16::try_from(snapshot.decisions.len()).unwrap_or(u16::MAX);
    if decisions == 0 {
        draw_feed(frame, right, snapshot, feed, view);
        return;
    }
    let [top, bottom] = Layout::vertical([
        Constraint::Length((decisions + 2).min(right.height / 2).max(3)),
        Constraint::Min(3),
    ])
    .areas(right);
    draw_decisions(frame, top, snapshot, view);
    draw_feed(frame, bottom, snapshot, feed, view);
}

fn draw_pane(frame: &mut Frame<'_>, area: Rect, snapshot: &Snapshot, view: &View) {
    let row = view.row(snapshot);
    let title = match row {
        Some(row) if row.remote => format!(
            " {} · on {} ",
            row.name,
            row.host.as_deref().unwrap_or("another host")
        ),
        Some(row) => format!(
            " {} · {} ",
            row.name,
            row.pane.as_deref().unwrap_or("no pane")
        ),
        None => " pane ".to_owned(),
    };
    let block = Block::new().borders(Borders::ALL).title(title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let shown = row.is_some_and(|row| row.name == view.pane.member) && !view.pane.gone;
    if !shown || view.pane.lines.is_empty() {
        let why = match row {
            Some(row) if row.remote => "its pane is on its host",
            Some(row) if row.pane.is_none() => "it has no pane",
            Some(_) if view.pane.gone => "its pane is closed",
            Some(_) => "",
            None => "no member selected",
        };
        frame.render_widget(Paragraph::new(why).italic(), inner);
        return;
    }
    let lines = &view.pane.lines;
    let from = lines.len().saturating_sub(usize::from(inner.height));
    frame.render_widget(Paragraph::new(Text::from(lines[from..].to_vec())), inner);
}

fn draw_decisions(frame: &mut Frame<'_>, area: Rect, snapshot: &Snapshot, view: &View) {
    let chosen = view.decision(snapshot);
    let lines: Vec<Line<'_>> = snapshot
        .decisions
        .iter()
        .map(|decision| {
            let mark = if Some(decision) == chosen {
                "▶ "
            } else {
                "  "
            };
            let (kind, hint) = match decision.kind {
                Kind::Plan => ("plan", String::new()),
                Kind::Shutdown => ("shutdown", format!(" ({} answers)", decision.answerer)),
                Kind::Permission => ("ask", String::new()),
            };
            Line::from(vec![
                Span::raw(mark),
                Span::styled(format!("{kind:<8} "), Style::new().magenta().bold()),
                Span::raw(decision.words.clone()),
                Span::styled(hint, Style::new().dim()),
            ])
        })
        .collect();
    let title = format!(
        " waiting for a decision {} · a/A approve · r reject ",
        snapshot.decisions.len()
    );
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::new()
                .borders(Borders::ALL)
                .title(title)
                .border_style(Style::new().magenta()),
        ),
        area,
    );
}

fn draw_feed(frame: &mut Frame<'_>, area: Rect, snapshot: &Snapshot, feed: &Feed, view: &View) {
    let title = if view.filter.is_empty() {
        " messages ".to_owned()
    } else {
        format!(" messages matching {:?} ", view.filter)
    };
    let block = Block::new().borders(Borders::ALL).title(title);
    let inner = block.inner(area);
    frame.render_widget(block, area);
    let color_of = |name: &str| {
        snapshot
            .rows
            .iter()
            .find(|row| row.name == name)
            .map_or_else(|| Style::new().bold(), name_style)
    };
    let mut shown: Vec<Line<'_>> = feed
        .lines()
        .rev()
        .filter(|line| view.filter.is_empty() || line.matches(&view.filter))
        .take(usize::from(inner.height))
        .map(|line| {
            let words = if line.structured {
                Span::styled(line.words.clone(), Style::new().cyan())
            } else {
                Span::raw(line.words.clone())
            };
            Line::from(vec![
                Span::styled(format!("{} ", line.time), Style::new().dim()),
                Span::styled(line.from.clone(), color_of(&line.from)),
                Span::raw(" → "),
                Span::styled(line.to.clone(), color_of(&line.to)),
                Span::raw("  "),
                words,
            ])
        })
        .collect();
    shown.reverse();
    frame.render_widget(Paragraph::new(shown), inner);
}

fn draw_board(frame: &mut Frame<'_>, area: Rect, snapshot: &Snapshot) {
    let block = Block::new()
        .borders(Borders::ALL)
        .title(" task board · t to close ");
    let Some(tasks) = snapshot.tasks.as_ref().filter(|tasks| !tasks.is_empty()) else {
        frame.render_widget(
            Paragraph::new("the team has no tasks yet")
                .italic()
                .block(block),
            area,
        );
        return;
    };
    let rows = tasks.iter().map(|task| {
        let status = match task.status {
            Status::Pending => Span::raw("pending"),
            Status::InProgress => Span::styled("in progress", Style::new().green()),
            Status::Completed => Span::styled("completed", Style::new().dim()),
        };
        let blocked: Vec<String> = task.blocked_by.iter().map(u64::to_string).collect();
        TableRow::new([
            Cell::from(task.id.to_string()),
            Cell::from(status),
            Cell::from(task.owner.clone().unwrap_or_else(|| "-".to_owned())),
            Cell::from(task.subject.clone()),
            Cell::from(if blocked.is_empty() {
                "-".to_owned()
            } else {
                blocked.join(",")
            }),
        ])
    });
    let table = Table::new(
        rows,
        [
            Constraint::Length(4),
            Constraint::Length(12),
            Constraint::Length(12),
            Constraint::Min(10),
            Constraint::Length(10),
        ],
    )
    .header(
        TableRow::new(["ID", "STATUS", "OWNER", "SUBJECT", "BLOCKED BY"])
            .style(Style::new().bold().underlined()),
    )
    .block(block);
    frame.render_widget(table, area);
}

fn draw_footer(frame: &mut Frame<'_>, area: Rect, view: &View) {
    let line = match &view.mode {
        Mode::Editing { purpose, editor } => {
            let prompt = purpose.prompt();
            let x = area.x
                + u16::try_from(prompt.chars().count() + editor.cursor()).unwrap_or(u16::MAX);
            frame.set_cursor_position((x.min(area.right().saturating_sub(1)), area.y));
            Line::from(vec![
                Span::styled(prompt, Style::new().bold()),
                Span::raw(editor.text().to_owned()),
            ])
        }
        Mode::ConfirmStop(name) => Line::from(Span::styled(
            format!("stop {name}? y to stop, any other key to keep it"),
            Style::new().red().bold(),
        )),
        Mode::Normal => match &view.note {
            Some(note) if note.error => {
                Line::from(Span::styled(note.text.clone(), Style::new().red()))
            }
            Some(note) => Line::from(Span::styled(note.text.clone(), Style::new().green())),
            None => Line::from(Span::styled(
                "↑↓ select · ⏎ go · s send · S all · a/r answer · x stop · t board · / filter · ? help · q quit",
                Style::new().dim(),
            )),
        },
    };
    frame.render_widget(Paragraph::new(line), area);
}

fn draw_help(frame: &mut Frame<'_>, area: Rect) {
    let width = area.width.min(76);
    // The keys, a blank line and two of notes, inside the border.
    let height = (u16::try_from(KEYS.len()).unwrap_or(u16::MAX) + 5).min(area.height);
    let popup = Rect {
        x: area.x + (area.width - width) / 2,
        y: area.y + (area.height - height) / 2,
        width,
        height,
    };
    let mut lines: Vec<Line<'_>> = KEYS
        .iter()
        .map(|(key, what)| {
            Line::from(vec![
                Span::styled(format!("{key:>9}  "), Style::new().bold()),
                Span::raw(*what),
            ])
        })
        .collect();
    lines.push(Line::from(""));
    for note in [
        "any key closes this",
        "each action runs as its `swarm` command would, with your permissions",
    ] {
        lines.push(Line::from(Span::styled(note, Style::new().dim())));
    }
    frame.render_widget(Clear, popup);
    frame.render_widget(
        Paragraph::new(lines).block(
            Block::new()
                .borders(Borders::ALL)
                .title(" swarm top · keys ")
                .add_modifier(Modifier::BOLD),
        ),
        popup,
    );
}

#[cfg(test)]
mod tests {
    use ratatui::Terminal;
    use ratatui::backend::TestBackend;

    use super::*;
    use crate::dashboard::decisions::Decision;
    use crate::dashboard::feed::Line as FeedLine;
    use crate::dashboard::snapshot::{Doing, TaskRow};
    use crate::dashboard::view::{Mode, Purpose};
    use crate::format::settings::Color as MemberColor;

    /// 2026-01-01T00:10:00Z
    const NOW: u64 = 1_767_226_200_000;

    fn row(name: &str, state: &str, color: Option<MemberColor>) -> Row {
        let live = matches!(state, "running" | "idle" | "waiting for input" | "starting");
        Row {
            name: name.to_owned(),
            host: None,
            remote: false,
            color,
            program: "claude".to_owned(),
            fenced: None,
            model: None,
            state: state.to_owned(),
            live,
            activity: match state {
                "running" => Some(Activity::Working),
                "idle" | "waiting for input" => Some(Activity::Idle),
                "starting" => Some(Activity::Starting),
                _ => None,
            }
            .map(|state| Doing {
                state,
                since_ms: NOW - 12_000,
                why: None,
            }),
            started_ms: Some(NOW - 185_000),
            ended_ms: None,
            timeout_s: None,
            unread: 0,
            last_in_ms: None,
            last_out_ms: None,
            task: None,
            worktree: None,
            pane: Some("%1".to_owned()),
            warning: None,
            tokens: "0".to_owned(),
            cost: "$0.00".to_owned(),
        }
    }

    fn team() -> (Snapshot, Feed, View) {
        let mut lead = row("team-lead", "running", None);
        lead.program = "bash".to_owned();
        lead.last_in_ms = Some(NOW - 4_000);
        let mut alice = row("alice", "running", Some(MemberColor::Blue));
        alice.activity = Some(Doing {
            state: Activity::NeedsYou,
            since_ms: NOW - 40_000,
            why: Some("plan".to_owned()),
        });
        alice.model = Some("opus".to_owned());
        alice.unread = 2;
        alice.tokens = "12.3k".to_owned();
        alice.cost = "$0.42".to_owned();
        alice.timeout_s = Some(1800);
        alice.task = Some("1 Write the parser".to_owned());
        alice.worktree = Some(("swarm/demo/alice".to_owned(), 120, 8));
        alice.last_out_ms = Some(NOW - 30_000);
        let mut bob = row("bob", "exited", Some(MemberColor::Green));
        bob.ended_ms = Some(NOW - 60_000);
        bob.pane = None;
        let mut carol = row("carol", "running", Some(MemberColor::Yellow));
        carol.program = "codex".to_owned();
        carol.activity = Some(Doing {
            state: Activity::Stalled,
            since_ms: NOW - 700_000,
            why: Some("quiet 10m and holds a task".to_owned()),
        });
        carol.warning =
            Some("corrupt inbox file moved aside to inboxes/carol.json.corrupt-1".to_owned());
        let dave = row("dave", "queued", Some(MemberColor::Purple));
        let mut erin = row("erin", "killed", Some(MemberColor::Red));
        erin.ended_ms = Some(NOW - 5_000);
        let snapshot = Snapshot {
            team: "demo".to_owned(),
            lead: "team-lead".to_owned(),
            phase: Some(Phase::Running),
            cost: Some("$0.42 · 12.3k tokens".to_owned()),
            rows: vec![lead, alice, bob, carol, dave, erin],
            decisions: vec![
                Decision {
                    kind: Kind::Plan,
                    request_id: "plan_approval-1@alice@demo".to_owned(),
                    asker: "alice".to_owned(),
                    answerer: "team-lead".to_owned(),
                    words: "alice asks to approve a plan: Parse first, then print".to_owned(),
                    tool: None,
                },
                Decision {
                    kind: Kind::Shutdown,
                    request_id: "shutdown-2@carol".to_owned(),
                    asker: "team-lead".to_owned(),
                    answerer: "carol".to_owned(),
                    words: "team-lead asks carol to shut down: done".to_owned(),
                    tool: None,
                },
                Decision {
                    kind: Kind::Permission,
                    request_id: "perm-3-bob".to_owned(),
                    asker: "bob".to_owned(),
                    answerer: "team-lead".to_owned(),
                    words: "bob asks to use Bash: cargo test".to_owned(),
                    tool: Some("Bash".to_owned()),
                },
            ],
            tasks: Some(vec![
                TaskRow {
                    id: 1,
                    status: Status::InProgress,
                    owner: Some("alice".to_owned()),
                    subject: "Write the parser".to_owned(),
                    blocked_by: Vec::new(),
                },
                TaskRow {
                    id: 2,
                    status: Status::Pending,
                    owner: None,
                    subject: "Review the parser".to_owned(),
                    blocked_by: vec![1],
                },
                TaskRow {
                    id: 3,
                    status: Status::Completed,
                    owner: Some("bob".to_owned()),
                    subject: "Set up the repository".to_owned(),
                    blocked_by: Vec::new(),
                },
            ]),
            warnings: Vec::new(),
            hosts: false,
            disconnected: None,
            socket: None,
            now_ms: NOW,
        };
        let line = |time: &str, from: &str, to: &str, words: &str, structured| FeedLine {
            id: String::new(),
            time: time.to_owned(),
            from: from.to_owned(),
            to: to.to_owned(),
            words: words.to_owned(),
            structured,
        };
        let feed = Feed::of_lines(vec![
            line(
                "00:07:01",
                "team-lead",
                "*",
                "Kick-off: read the README first",
                false,
            ),
            line(
                "00:07:30",
                "alice",
                "team-lead",
                "alice asks to approve a plan: Parse first, then print",
                true,
            ),
            line(
                "00:08:02",
                "bob",
                "team-lead",
                "bob is idle: set up the repository",
                true,
            ),
            line(
                "00:08:40",
                "team-lead",
                "bob",
                "team-lead asks bob to shut down",
                true,
            ),
            line(
                "00:08:41",
                "bob",
                "team-lead",
                "bob approved shutdown",
                true,
            ),
            line(
                "00:09:15",
                "team-lead",
                "carol",
                "please look at the flaky test",
                false,
            ),
        ]);
        let view = View {
            selected: Some("alice".to_owned()),
            rate: 6,
            pane: crate::dashboard::view::PaneView {
                member: "alice".to_owned(),
                lines: crate::dashboard::pane::styled(
                    "\u{1b}[1m● alice\u{1b}[0m working on the parser\n  \u{1b}[32m✓\u{1b}[0m tests pass\n> ",
                ),
                gone: false,
            },
            ..View::default()
        };
        (snapshot, feed, view)
    }

    fn drawn(width: u16, height: u16, snapshot: &Snapshot, feed: &Feed, view: &View) -> String {
        let mut terminal = Terminal::new(TestBackend::new(width, height)).unwrap();
        terminal
            .draw(|frame| draw(frame, snapshot, feed, view))
            .unwrap();
        terminal.backend().to_string()
    }

    #[test]
    fn a_team_at_120_by_40() {
        let (snapshot, feed, view) = team();
        insta::assert_snapshot!(drawn(120, 40, &snapshot, &feed, &view));
    }

    #[test]
    fn a_team_at_160_by_20_shows_each_members_tokens_and_cost() {
        let (snapshot, feed, view) = team();
        insta::assert_snapshot!(drawn(160, 20, &snapshot, &feed, &view));
    }

    #[test]
    fn a_team_at_80_by_24_drops_the_least_important_columns() {
        let (snapshot, feed, view) = team();
        insta::assert_snapshot!(drawn(80, 24, &snapshot, &feed, &view));
    }

    #[test]
    fn the_help_overlay() {
        let (snapshot, feed, mut view) = team();
        view.help = true;
        insta::assert_snapshot!(drawn(80, 24, &snapshot, &feed, &view));
    }

    #[test]
    fn the_task_board_and_the_editor() {
        let (snapshot, feed, mut view) = team();
        view.board = true;
        view.mode = Mode::Editing {
            purpose: Purpose::Send("alice".to_owned()),
            editor: crate::dashboard::editor::Editor::with("please rebase"),
        };
        insta::assert_snapshot!(drawn(100, 30, &snapshot, &feed, &view));
    }

    /// The team with team-lead, alice and bob on hosta, where the dashboard runs, and carol, dave
    /// and erin on hostb, whose node is not seen.
    fn across_hosts() -> (Snapshot, Feed, View) {
        let (mut snapshot, feed, view) = team();
        snapshot.hosts = true;
        for row in &mut snapshot.rows {
            let remote = ["carol", "dave", "erin"].contains(&row.name.as_str());
            row.host = Some(if remote { "hostb" } else { "hosta" }.to_owned());
            row.remote = remote;
            if ["carol", "dave"].contains(&row.name.as_str()) {
                "unreachable".clone_into(&mut row.state);
                row.live = true;
                row.activity = None;
            }
        }
        (snapshot, feed, view)
    }

    #[test]
    fn a_team_across_two_hosts_at_120_by_40() {
        let (snapshot, feed, view) = across_hosts();
        insta::assert_snapshot!(drawn(120, 40, &snapshot, &feed, &view));
    }

    #[test]
    fn a_disconnected_host_at_80_by_24_keeps_the_host_column() {
        let (mut snapshot, feed, mut view) = across_hosts();
        snapshot.disconnected = Some("hosta".to_owned());
        view.selected = Some("carol".to_owned());
        let screen = drawn(80, 24, &snapshot, &feed, &view);
        assert_eq!(
            screen.matches("is disconnected").count(),
            1,
            "said once: {screen}"
        );
        insta::assert_snapshot!(screen);
    }

    #[test]
    fn a_team_on_one_host_has_no_host_column() {
        let (snapshot, feed, view) = team();
        let screen = drawn(120, 40, &snapshot, &feed, &view);
        assert!(!screen.contains("HOST"), "{screen}");
        assert!(!screen.contains("disconnected"), "{screen}");
    }

    #[test]
    fn a_team_that_ended_is_shown_as_ended() {
        let (mut snapshot, feed, view) = team();
        snapshot.phase = Some(Phase::Ended);
        for row in &mut snapshot.rows {
            row.state = "exited".to_owned();
            row.live = false;
            row.activity = None;
        }
        snapshot.decisions.clear();
        let screen = drawn(120, 40, &snapshot, &feed, &view);
        assert!(screen.contains("team demo · ended · 6 msg/min"), "{screen}");
        assert!(screen.contains("6 exited"), "{screen}");
    }
}
