//! Inline Markdown for [`super::md2html`]: backslash escapes, code spans, emphasis, links,
//! autolinks and bare URLs, character references and `<br>`; everything else escaped.

use super::esc;
use std::fmt::Write as _;

fn is_punct(c: char) -> bool {
    c.is_ascii_punctuation()
}

/// Backslash escapes resolved (for info strings).
pub(super) fn unescape_text(s: &str) -> String {
    let mut o = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' && chars.peek().is_some_and(|n| is_punct(*n)) {
            o.push(chars.next().expect("peeked"));
        } else {
            o.push(c);
        }
    }
    o
}

/// The length of a character reference at the start of `s` (`&amp;`, `&#42;`, `&#x2A;`).
fn entity_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    if b.first() != Some(&b'&') {
        return None;
    }
    let end = s.find(';')?;
    let inner = &s[1..end];
    let ok = if let Some(num) = inner.strip_prefix('#') {
        if let Some(hex) = num.strip_prefix(['x', 'X']) {
            (1..=6).contains(&hex.len()) && hex.chars().all(|c| c.is_ascii_hexdigit())
        } else {
            (1..=7).contains(&num.len()) && num.chars().all(|c| c.is_ascii_digit())
        }
    } else {
        (2..=32).contains(&inner.len())
            && inner
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic())
            && inner.chars().all(|c| c.is_ascii_alphanumeric())
    };
    ok.then_some(end + 1)
}

/// A code span at the start of `s` (which starts with a backtick): (html, length).
fn code_span(s: &str) -> Option<(String, usize)> {
    let n = s.chars().take_while(|&c| c == '`').count();
    let body = &s[n..];
    let mut from = 0;
    while let Some(p) = body[from..].find('`') {
        let at = from + p;
        let run = body[at..].chars().take_while(|&c| c == '`').count();
        if run == n {
            let mut content = body[..at].replace('\n', " ");
            if content.len() >= 2
                && content.starts_with(' ')
                && content.ends_with(' ')
                && !content.trim().is_empty()
            {
                content = content[1..content.len() - 1].to_string();
            }
            return Some((format!("<code>{}</code>", esc(&content)), n + at + run));
        }
        from = at + run;
    }
    None
}

/// The end (exclusive) of the first unescaped `delim` in `s` from `from`, skipping escapes
/// and code spans.
fn find_closing(s: &str, from: usize, delim: &str) -> Option<usize> {
    let mut i = from;
    while i < s.len() {
        let rest = &s[i..];
        if let Some(after) = rest.strip_prefix('\\') {
            i += 1 + after.chars().next().map_or(0, char::len_utf8);
            continue;
        }
        if rest.starts_with('`') {
            if let Some((_, len)) = code_span(rest) {
                i += len;
                continue;
            }
            i += rest.chars().take_while(|&c| c == '`').count();
            continue;
        }
        if rest.starts_with(delim) {
            return Some(i);
        }
        i += rest.chars().next().map_or(1, char::len_utf8);
    }
    None
}

/// A URL kept in a link: http(s), mailto or relative; `None` for other schemes.
fn safe_url(url: &str) -> Option<String> {
    let u = url.trim();
    let lower = u.to_ascii_lowercase();
    let scheme_end = lower.find(':');
    let first_sep = lower.find(['/', '?', '#']).unwrap_or(lower.len());
    let relative = scheme_end.is_none_or(|c| c > first_sep);
    let ok = relative
        || lower.starts_with("http://")
        || lower.starts_with("https://")
        || lower.starts_with("mailto:");
    ok.then(|| unescape_text(u))
}

/// A `[text](url)` link at the start of `s`: (html, length).
fn link(s: &str) -> Option<(String, usize)> {
    // The text: up to the matching `]`.
    let mut depth = 0usize;
    let mut i = 0;
    let close = loop {
        let rest = s.get(i..)?;
        let c = rest.chars().next()?;
        match c {
            '\\' => i += 1 + rest[1..].chars().next().map_or(0, char::len_utf8),
            '`' => match code_span(rest) {
                Some((_, len)) => i += len,
                None => i += 1,
            },
            '[' => {
                depth += 1;
                i += 1;
            }
            ']' => {
                depth -= 1;
                if depth == 0 {
                    break i;
                }
                i += 1;
            }
            c => i += c.len_utf8(),
        }
    };
    let after = &s[close + 1..];
    if !after.starts_with('(') {
        return None;
    }
    let mut depth = 0usize;
    let mut end = None;
    for (k, c) in after.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    end = Some(k);
                    break;
                }
            }
            _ => {}
        }
    }
    let end = end?;
    let target = after[1..end].trim();
    // An optional title after the destination is dropped.
    let dest = match target.find(" \"") {
        Some(p) => &target[..p],
        None => target,
    };
    let dest = dest
        .strip_prefix('<')
        .and_then(|d| d.strip_suffix('>'))
        .unwrap_or(dest);
    let text = inline(&s[1..close]);
    let html = match safe_url(dest) {
        Some(u) => format!("<a href=\"{}\">{text}</a>", esc(&u)),
        None => text,
    };
    Some((html, close + 1 + end + 1))
}

/// A bare URL at the start of `s`: its length (trailing punctuation left out).
fn bare_url(s: &str) -> Option<usize> {
    let lower = s.get(..8)?.to_ascii_lowercase();
    if !lower.starts_with("http://") && !lower.starts_with("https://") {
        return None;
    }
    let mut end = s
        .find(|c: char| c.is_whitespace() || c == '<' || c == '`')
        .unwrap_or(s.len());
    loop {
        let u = &s[..end];
        let last = u.chars().last()?;
        if ".,;:!?*_'\"".contains(last) {
            end -= last.len_utf8();
        } else if last == ')' && u.matches('(').count() < u.matches(')').count() {
            end -= 1;
        } else {
            break;
        }
    }
    (end > "https://".len()).then_some(end)
}

/// Renders inline Markdown; everything not markup is escaped.
pub(super) fn inline(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 16);
    let mut i = 0;
    let mut prev: Option<char> = None;
    while i < s.len() {
        let rest = &s[i..];
        let c = rest.chars().next().expect("non-empty");
        match c {
            '\\' => {
                if let Some(n) = rest[1..].chars().next().filter(|n| is_punct(*n)) {
                    o.push_str(&esc(&n.to_string()));
                    i += 1 + n.len_utf8();
                    prev = Some(n);
                    continue;
                }
            }
            '`' => {
                if let Some((html, len)) = code_span(rest) {
                    o.push_str(&html);
                    i += len;
                    prev = Some('`');
                    continue;
                }
                let n = rest.chars().take_while(|&c| c == '`').count();
                o.push_str(&rest[..n]);
                i += n;
                prev = Some('`');
                continue;
            }
            '&' => {
                if let Some(len) = entity_len(rest) {
                    o.push_str(&rest[..len]);
                    i += len;
                    prev = Some(';');
                    continue;
                }
            }
            '<' => {
                let lower = rest.get(..6).unwrap_or(rest).to_ascii_lowercase();
                if let Some(len) = ["<br>", "<br/>", "<br />"]
                    .iter()
                    .find(|t| lower.starts_with(**t))
                    .map(|t| t.len())
                {
                    o.push_str("<br/>");
                    i += len;
                    prev = Some('>');
                    continue;
                }
                if let Some(end) = rest.find('>') {
                    let inner = &rest[1..end];
                    if !inner.contains(char::is_whitespace)
                        && (inner.starts_with("http://") || inner.starts_with("https://"))
                    {
                        let _ = write!(o, "<a href=\"{u}\">{u}</a>", u = esc(inner));
                        i += end + 1;
                        prev = Some('>');
                        continue;
                    }
                }
            }
            '[' => {
                if let Some((html, len)) = link(rest) {
                    o.push_str(&html);
                    i += len;
                    prev = Some(')');
                    continue;
                }
            }
            'h' | 'H' if prev.is_none_or(|p| !p.is_alphanumeric()) => {
                if let Some(len) = bare_url(rest) {
                    // Escapes inside the URL are resolved first, as in GFM.
                    let u = unescape_text(&rest[..len]);
                    let _ = write!(o, "<a href=\"{u}\">{u}</a>", u = esc(&u));
                    i += len;
                    prev = u.chars().last();
                    continue;
                }
            }
            '*' | '_' => {
                let double = rest[1..].starts_with(c);
                let delim = if double { &rest[..2] } else { &rest[..1] };
                let next = rest[delim.len()..].chars().next();
                let opens = next.is_some_and(|n| !n.is_whitespace())
                    && (c == '*' || prev.is_none_or(|p| !p.is_alphanumeric()));
                if opens
                    && let Some(end) = find_closing(s, i + delim.len(), delim)
                    && end > i + delim.len()
                {
                    let inner = &s[i + delim.len()..end];
                    let after = s[end + delim.len()..].chars().next();
                    let closes = !inner.ends_with(char::is_whitespace)
                        && (c == '*' || after.is_none_or(|a| !a.is_alphanumeric()));
                    if closes {
                        let tag = if double { "strong" } else { "em" };
                        let _ = write!(o, "<{tag}>{}</{tag}>", inline(inner));
                        i = end + delim.len();
                        prev = Some(c);
                        continue;
                    }
                }
                o.push_str(delim);
                i += delim.len();
                prev = Some(c);
                continue;
            }
            _ => {}
        }
        o.push_str(&esc(&c.to_string()));
        i += c.len_utf8();
        prev = Some(c);
    }
    o
}
