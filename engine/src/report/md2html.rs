//! A small Markdown-to-HTML converter for the subset a bundle's `REPORT.md` uses
//! (`mutagraph_oracles::bundle::render_report_md`), so the campaign report can link to a page
//! a browser renders rather than to raw text.
//!
//! Blocks: ATX headings, paragraphs (a line ending in two spaces or `\` breaks), bullet and
//! ordered lists (nested content indented under the item: paragraphs, fenced code, lists),
//! fenced code blocks (backticks or tildes, any length, an info string), indented code, GFM
//! tables (alignment from the delimiter row; `\|` inside a cell), block quotes, thematic
//! breaks. Inline: backslash escapes, code spans (any backtick run), `**strong**`, `*em*` and
//! `_em_`, links `[text](url)`, autolinks `<https://…>` and bare `http(s)://` URLs.
//!
//! Everything is escaped: raw HTML in the input is shown as text, except `<br>` (which
//! `REPORT.md` writes in table cells for line breaks) and character references (`&lt;`,
//! `&#42;`), which pass through. Links only keep `http`, `https` and `mailto` URLs and
//! relative ones; others render as their text.

use super::esc;
use super::md_inline::{inline, unescape_text};
use std::fmt::Write as _;

/// Renders Markdown to an HTML fragment.
pub fn to_html(md: &str) -> String {
    let text = md.replace("\r\n", "\n").replace('\t', "    ");
    let lines: Vec<&str> = text.lines().collect();
    let mut out = String::new();
    blocks(&lines, &mut out, false);
    out
}

/// A complete, self-contained page for a bundle's `REPORT.md`: the converted document under a
/// line linking back to the campaign report and to the bundle's files.
pub fn page(md: &str, id: &str, files: &[&str]) -> String {
    let body = to_html(md);
    let title = md
        .lines()
        .find_map(|l| l.strip_prefix("# "))
        .map(|t| strip_tags(&inline(t.trim())))
        .unwrap_or_else(|| esc(id));
    let mut links =
        String::from("<a href=\"./\">bundle directory</a> <a href=\"REPORT.md\">REPORT.md</a>");
    for f in files {
        let _ = write!(links, " <a href=\"{f}\">{f}</a>", f = esc(f));
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"/>\n\
         <title>{title}</title>\n<style>{PAGE_CSS}</style>\n</head>\n<body>\n\
         <p class=\"nav\"><a href=\"../../report.html\">&#8592; campaign report</a> · bundle \
         <code>{id}</code> · files: {links}</p>\n<main>\n{body}</main>\n</body>\n</html>\n",
        id = esc(id),
    )
}

const PAGE_CSS: &str = "
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:1.5em auto;max-width:1200px;padding:0 1.2em;color:#222;background:#fff;line-height:1.45}
.nav{font-size:.9em;color:#666;border-bottom:1px solid #ddd;padding-bottom:.5em}
.nav a{margin-right:.5em}
h1{font-size:1.45em}
h2{font-size:1.2em;margin-top:1.6em;border-bottom:1px solid #ddd;padding-bottom:.2em}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.9em;background:#f3f3f3;padding:0 .2em;border-radius:3px;overflow-wrap:anywhere}
pre{background:#f6f8fa;border:1px solid #e3e3e3;border-radius:4px;padding:.7em;overflow-x:auto}
pre code{background:none;padding:0;overflow-wrap:normal}
td code{white-space:nowrap;overflow-wrap:normal}
table{border-collapse:collapse;font-size:.9em;display:block;overflow-x:auto}
th,td{border:1px solid #ddd;padding:.3em .55em;text-align:left;vertical-align:top}
th{background:#f3f3f3}
blockquote{margin:0;padding-left:1em;border-left:3px solid #ddd;color:#555}
";

/// Removes tags from HTML produced here (for the page title); entities stay escaped.
fn strip_tags(html: &str) -> String {
    let mut o = String::new();
    let mut in_tag = false;
    for c in html.chars() {
        match c {
            '<' => in_tag = true,
            '>' if in_tag => in_tag = false,
            c if !in_tag => o.push(c),
            _ => {}
        }
    }
    o
}

// ---------------------------------------------------------------------------------------------
// Blocks
// ---------------------------------------------------------------------------------------------

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// An opening code fence: (indent, fence char, length, info string).
fn fence_open(line: &str) -> Option<(usize, char, usize, &str)> {
    let ind = indent_of(line);
    if ind > 3 {
        return None;
    }
    let rest = &line[ind..];
    let ch = rest.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = rest.chars().take_while(|&c| c == ch).count();
    if n < 3 {
        return None;
    }
    let info = rest[n..].trim();
    if ch == '`' && info.contains('`') {
        return None;
    }
    Some((ind, ch, n, info))
}

fn fence_close(line: &str, ch: char, n: usize) -> bool {
    let t = line.trim();
    indent_of(line) <= 3 && t.len() >= n && t.chars().all(|c| c == ch)
}

/// An ATX heading: (level, text).
fn heading(line: &str) -> Option<(usize, &str)> {
    let ind = indent_of(line);
    if ind > 3 {
        return None;
    }
    let rest = &line[ind..];
    let level = rest.chars().take_while(|&c| c == '#').count();
    if !(1..=6).contains(&level) {
        return None;
    }
    let after = &rest[level..];
    if !after.is_empty() && !after.starts_with(' ') {
        return None;
    }
    let mut text = after.trim();
    // A closing sequence of #s (preceded by a space) is not part of the text.
    let stripped = text.trim_end_matches('#');
    if stripped.is_empty() || stripped.ends_with(' ') {
        text = stripped.trim_end();
    }
    Some((level, text))
}

fn thematic_break(line: &str) -> bool {
    if indent_of(line) > 3 {
        return false;
    }
    let t: String = line.chars().filter(|c| !c.is_whitespace()).collect();
    t.len() >= 3
        && (t.chars().all(|c| c == '-')
            || t.chars().all(|c| c == '*')
            || t.chars().all(|c| c == '_'))
}

/// A list item marker: (ordered, start number, content column).
fn list_marker(line: &str) -> Option<(bool, u64, usize)> {
    let ind = indent_of(line);
    if ind > 3 {
        return None;
    }
    let rest = &line[ind..];
    let (ordered, num, width) = if rest.starts_with(['-', '*', '+']) {
        (false, 0, 1)
    } else {
        let digits = rest.chars().take_while(|c| c.is_ascii_digit()).count();
        if digits == 0 || digits > 9 {
            return None;
        }
        let d = rest[digits..].chars().next()?;
        if d != '.' && d != ')' {
            return None;
        }
        (true, rest[..digits].parse().ok()?, digits + 1)
    };
    let after = &rest[width..];
    if after.is_empty() {
        return Some((ordered, num, ind + width + 1));
    }
    if !after.starts_with(' ') {
        return None;
    }
    let spaces = indent_of(after);
    // Content indented five or more is indented code inside the item: one space counts.
    let pad = if spaces > 4 || is_blank(after) {
        1
    } else {
        spaces
    };
    Some((ordered, num, ind + width + pad))
}

/// The cells of a table row, `\|` unescaped inside them.
fn table_cells(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let mut cells = Vec::new();
    let mut cur = String::new();
    let mut chars = t.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'|') => {
                cur.push('|');
                chars.next();
            }
            '\\' => {
                cur.push('\\');
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '|' => cells.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    if !cur.trim().is_empty() || !t.ends_with('|') {
        cells.push(cur);
    }
    cells.into_iter().map(|c| c.trim().to_string()).collect()
}

/// The alignments of a table's delimiter row, or `None` when the line is not one.
fn table_delimiter(line: &str) -> Option<Vec<Option<&'static str>>> {
    if !line.contains('|') || !line.contains('-') {
        return None;
    }
    let cells = table_cells(line);
    if cells.is_empty() {
        return None;
    }
    cells
        .iter()
        .map(|c| {
            let inner = c.trim_start_matches(':').trim_end_matches(':');
            if inner.is_empty() || !inner.chars().all(|ch| ch == '-') {
                return None;
            }
            Some(match (c.starts_with(':'), c.ends_with(':')) {
                (true, true) => Some("center"),
                (false, true) => Some("right"),
                (true, false) => Some("left"),
                (false, false) => None,
            })
        })
        .collect()
}

/// Whether lines[i] starts a table (a row with `|`, then a delimiter row of as many cells).
fn table_start(lines: &[&str], i: usize) -> bool {
    i + 1 < lines.len()
        && lines[i].contains('|')
        && table_delimiter(lines[i + 1]).is_some_and(|d| d.len() == table_cells(lines[i]).len())
}

/// Whether a line starts a block that ends a paragraph.
fn interrupts(lines: &[&str], i: usize) -> bool {
    let l = lines[i];
    fence_open(l).is_some()
        || heading(l).is_some()
        || thematic_break(l)
        || l.trim_start().starts_with('>') && indent_of(l) <= 3
        || list_marker(l).is_some_and(|(ordered, n, _)| {
            let rest = l.trim_start();
            let content = rest.split_once(' ').map_or("", |x| x.1);
            !content.trim().is_empty() && (!ordered || n == 1)
        })
        || table_start(lines, i)
}

/// Renders `lines` as blocks; in a tight list item, paragraphs go without `<p>`.
fn blocks(lines: &[&str], out: &mut String, tight: bool) {
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i];
        if is_blank(line) {
            i += 1;
            continue;
        }
        if let Some((ind, ch, n, info)) = fence_open(line) {
            let mut body = Vec::new();
            i += 1;
            while i < lines.len() && !fence_close(lines[i], ch, n) {
                let l = lines[i];
                let strip = indent_of(l).min(ind);
                body.push(&l[strip..]);
                i += 1;
            }
            i += 1; // the closing fence (or the end)
            let lang = info.split_whitespace().next().unwrap_or("");
            let class = if lang.is_empty() {
                String::new()
            } else {
                format!(" class=\"language-{}\"", esc(&unescape_text(lang)))
            };
            let mut code = body.join("\n");
            if !body.is_empty() {
                code.push('\n');
            }
            let _ = writeln!(out, "<pre><code{class}>{}</code></pre>", esc(&code));
            continue;
        }
        if let Some((level, text)) = heading(line) {
            let _ = writeln!(out, "<h{level}>{}</h{level}>", inline(text));
            i += 1;
            continue;
        }
        if thematic_break(line) {
            out.push_str("<hr/>\n");
            i += 1;
            continue;
        }
        if indent_of(line) >= 4 {
            let mut body = Vec::new();
            while i < lines.len() && (indent_of(lines[i]) >= 4 || is_blank(lines[i])) {
                body.push(lines[i].get(4..).unwrap_or(""));
                i += 1;
            }
            while body.last().is_some_and(|l| is_blank(l)) {
                body.pop();
            }
            let _ = writeln!(out, "<pre><code>{}\n</code></pre>", esc(&body.join("\n")));
            continue;
        }
        if line.trim_start().starts_with('>') {
            let mut inner = Vec::new();
            while i < lines.len() && !is_blank(lines[i]) {
                let t = lines[i].trim_start();
                let t = t.strip_prefix('>').unwrap_or(t);
                inner.push(t.strip_prefix(' ').unwrap_or(t));
                i += 1;
            }
            out.push_str("<blockquote>\n");
            blocks(&inner, out, false);
            out.push_str("</blockquote>\n");
            continue;
        }
        if table_start(lines, i) {
            i = table(lines, i, out);
            continue;
        }
        if list_marker(line).is_some() {
            i = list(lines, i, out);
            continue;
        }
        // A paragraph.
        let mut para = vec![line.trim()];
        i += 1;
        while i < lines.len() && !is_blank(lines[i]) && !interrupts(lines, i) {
            para.push(lines[i]);
            i += 1;
        }
        let html = paragraph(&para);
        if tight {
            let _ = writeln!(out, "{html}");
        } else {
            let _ = writeln!(out, "<p>{html}</p>");
        }
    }
}

/// A paragraph's lines: hard breaks where a line ends in two spaces or a backslash.
fn paragraph(lines: &[&str]) -> String {
    let mut o = String::new();
    for (k, l) in lines.iter().enumerate() {
        let last = k + 1 == lines.len();
        let t = l.trim_start();
        let hard = !last && (t.ends_with("  ") || t.ends_with('\\') && !t.ends_with("\\\\"));
        let t = t.trim_end();
        let t = if hard {
            t.strip_suffix('\\').unwrap_or(t)
        } else {
            t
        };
        o.push_str(&inline(t));
        if !last {
            o.push_str(if hard { "<br/>\n" } else { "\n" });
        }
    }
    o
}

/// Renders the table starting at `start`; returns the index after it.
fn table(lines: &[&str], start: usize, out: &mut String) -> usize {
    let head = table_cells(lines[start]);
    let align = table_delimiter(lines[start + 1]).unwrap_or_default();
    let style = |k: usize| {
        align
            .get(k)
            .copied()
            .flatten()
            .map(|a| format!(" style=\"text-align:{a}\""))
            .unwrap_or_default()
    };
    out.push_str("<table>\n<thead><tr>");
    for (k, c) in head.iter().enumerate() {
        let _ = write!(out, "<th{}>{}</th>", style(k), inline(c));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    let mut i = start + 2;
    while i < lines.len() && !is_blank(lines[i]) && lines[i].contains('|') {
        let cells = table_cells(lines[i]);
        out.push_str("<tr>");
        for k in 0..head.len() {
            let c = cells.get(k).map_or("", String::as_str);
            let _ = write!(out, "<td{}>{}</td>", style(k), inline(c));
        }
        out.push_str("</tr>\n");
        i += 1;
    }
    out.push_str("</tbody>\n</table>\n");
    i
}

/// Renders the list starting at `start`; returns the index after it.
fn list(lines: &[&str], start: usize, out: &mut String) -> usize {
    let (ordered, first_num, _) = list_marker(lines[start]).expect("list marker");
    let bullet = lines[start].trim_start().chars().next();
    let base = indent_of(lines[start]);
    let mut items: Vec<Vec<String>> = Vec::new();
    let mut loose = false;
    let mut i = start;
    let mut blank_before = false;
    loop {
        if i >= lines.len() {
            break;
        }
        let line = lines[i];
        let same_kind = list_marker(line).filter(|&(o, _, _)| {
            o == ordered
                && indent_of(line) <= base + 1
                && (ordered || line.trim_start().chars().next() == bullet)
        });
        let Some((_, _, col)) = same_kind else { break };
        if blank_before && !items.is_empty() {
            loose = true;
        }
        // The item: its first line, then lines indented to its content (or lazy ones).
        let mut item = vec![line.get(col..).unwrap_or("").to_string()];
        i += 1;
        blank_before = false;
        while i < lines.len() {
            let l = lines[i];
            if is_blank(l) {
                item.push(String::new());
                blank_before = true;
                i += 1;
                continue;
            }
            if indent_of(l) >= col {
                if blank_before {
                    // A blank line between blocks of one item makes the list loose, unless
                    // it sits inside a fenced block.
                    if !inside_fence(&item) {
                        loose = true;
                    }
                }
                item.push(l[col..].to_string());
                blank_before = false;
                i += 1;
                continue;
            }
            if !blank_before
                && list_marker(l).is_none()
                && !interrupts(lines, i)
                && !inside_fence(&item)
            {
                // A lazy continuation of the item's paragraph.
                item.push(l.trim_start().to_string());
                i += 1;
                continue;
            }
            break;
        }
        while item.last().is_some_and(|l| l.is_empty()) {
            item.pop();
        }
        items.push(item);
        if !blank_before || i >= lines.len() {
            continue;
        }
        // A blank line, then something that is not an item of this list: it ends here.
        if list_marker(lines[i]).is_none() || indent_of(lines[i]) > base + 1 {
            break;
        }
    }
    let tag = if ordered { "ol" } else { "ul" };
    if ordered && first_num != 1 {
        let _ = writeln!(out, "<ol start=\"{first_num}\">");
    } else {
        let _ = writeln!(out, "<{tag}>");
    }
    for item in &items {
        let refs: Vec<&str> = item.iter().map(String::as_str).collect();
        let mut inner = String::new();
        blocks(&refs, &mut inner, !loose);
        let _ = writeln!(out, "<li>{}</li>", inner.trim_end());
    }
    let _ = writeln!(out, "</{tag}>");
    i
}

/// Whether the lines so far leave a fenced code block open.
fn inside_fence(lines: &[String]) -> bool {
    let mut open: Option<(char, usize)> = None;
    for l in lines {
        match open {
            None => {
                if let Some((_, ch, n, _)) = fence_open(l) {
                    open = Some((ch, n));
                }
            }
            Some((ch, n)) => {
                if fence_close(l, ch, n) {
                    open = None;
                }
            }
        }
    }
    open.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_is_escaped() {
        let h = to_html("a <script>alert('x')</script> & b <img src=x onerror=y>\n");
        assert_eq!(
            h,
            "<p>a &lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; b &lt;img src=x onerror=y&gt;</p>\n"
        );
        // Character references pass, as REPORT.md writes them; `<br>` too.
        assert_eq!(inline("&lt;T&gt; &amp; &#42;"), "&lt;T&gt; &amp; &#42;");
        assert_eq!(inline("a<br>b"), "a<br/>b");
        // Code keeps everything literal.
        assert_eq!(inline("`<b>&amp;`"), "<code>&lt;b&gt;&amp;amp;</code>");
        let h = to_html("```\n<b>\n```\n");
        assert_eq!(h, "<pre><code>&lt;b&gt;\n</code></pre>\n");
        // Links: only safe schemes.
        assert_eq!(
            inline("[x](javascript:alert(1))"),
            "x",
            "a javascript: link is its text"
        );
        assert_eq!(
            inline("[a \"b\"](repro.py)"),
            "<a href=\"repro.py\">a &quot;b&quot;</a>"
        );
        assert_eq!(
            inline("[x](https://e.org/a?b=1&c=2)"),
            "<a href=\"https://e.org/a?b=1&amp;c=2\">x</a>"
        );
    }

    #[test]
    fn headings_paragraphs_escapes_and_emphasis() {
        let h = to_html("# A `x` \\_b\\_ title #\n\nline one\nline two  \nthree\n\n## Sub\n");
        assert_eq!(
            h,
            "<h1>A <code>x</code> _b_ title</h1>\n<p>line one\nline two<br/>\nthree</p>\n<h2>Sub</h2>\n"
        );
        assert_eq!(
            inline("**bold** and *em* and _em_ but snake_case_name and 2 * 3 * 4"),
            "<strong>bold</strong> and <em>em</em> and <em>em</em> but snake_case_name and 2 * 3 * 4"
        );
        assert_eq!(inline("a\\*b\\* \\| c\\\\d"), "a*b* | c\\d");
        assert_eq!(
            inline("see https://onnx.ai/onnx/operators/onnx\\_\\_RNN.html."),
            "see <a href=\"https://onnx.ai/onnx/operators/onnx__RNN.html\">https://onnx.ai/onnx/operators/onnx__RNN.html</a>."
        );
    }

    #[test]
    fn tables() {
        let md = "| output | expected \\| x | n |\n|---|:---:|---:|\n| `a\\|b` | 1<br>2 | 3 |\n| only |\n\nafter\n";
        let h = to_html(md);
        assert_eq!(
            h,
            "<table>\n<thead><tr><th>output</th><th style=\"text-align:center\">expected | x</th>\
             <th style=\"text-align:right\">n</th></tr></thead>\n<tbody>\n\
             <tr><td><code>a|b</code></td><td style=\"text-align:center\">1<br/>2</td>\
             <td style=\"text-align:right\">3</td></tr>\n\
             <tr><td>only</td><td style=\"text-align:center\"></td><td style=\"text-align:right\"></td></tr>\n\
             </tbody>\n</table>\n<p>after</p>\n"
        );
        // A row of pipes without a delimiter row is a paragraph.
        assert_eq!(to_html("a | b\nc\n"), "<p>a | b\nc</p>\n");
    }

    #[test]
    fn lists_with_nested_code() {
        let md = "- Library: x\n- Ops: `A` (2)\n\n## Steps\n\n1. With pip\n\n   ```sh\n   pip install x\n   python repro.py\n   ```\n\n2. With mutagraph\n\n   ```sh\n   mutagraph recheck .\n   ```\n\nEnd.\n";
        let h = to_html(md);
        assert_eq!(
            h,
            "<ul>\n<li>Library: x</li>\n<li>Ops: <code>A</code> (2)</li>\n</ul>\n<h2>Steps</h2>\n\
             <ol>\n<li><p>With pip</p>\n<pre><code class=\"language-sh\">pip install x\npython repro.py\n</code></pre></li>\n\
             <li><p>With mutagraph</p>\n<pre><code class=\"language-sh\">mutagraph recheck .\n</code></pre></li>\n</ol>\n\
             <p>End.</p>\n"
        );
        let h = to_html("3. three\n4. four\n\n- a\n  - b\n- c\n");
        assert_eq!(
            h,
            "<ol start=\"3\">\n<li>three</li>\n<li>four</li>\n</ol>\n<ul>\n<li>a\n<ul>\n<li>b</li>\n</ul></li>\n<li>c</li>\n</ul>\n"
        );
    }

    #[test]
    fn fences_longer_than_their_content() {
        let h = to_html("````text\na ``` b\n```\n````\nx\n");
        assert_eq!(
            h,
            "<pre><code class=\"language-text\">a ``` b\n```\n</code></pre>\n<p>x</p>\n"
        );
        // An unclosed fence runs to the end.
        assert_eq!(to_html("```\nx"), "<pre><code>x\n</code></pre>\n");
    }

    #[test]
    fn a_page_links_back_and_has_a_title() {
        let p = page(
            "# tract: Pad \\<fails\\>\n\ntext\n",
            "crash-x",
            &["repro.py"],
        );
        assert!(p.contains("<title>tract: Pad &lt;fails&gt;</title>"), "{p}");
        assert!(p.contains("href=\"../../report.html\""));
        assert!(p.contains("<a href=\"repro.py\">repro.py</a>"));
        assert!(p.contains("<h1>tract: Pad &lt;fails&gt;</h1>"));
    }
}
