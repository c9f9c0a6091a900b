//! A bundle's `REPORT.md` (`mutagraph_oracles::bundle::render_report_md`) as an HTML page, so
//! the campaign report can link to a page a browser renders rather than to raw text.
//!
//! CommonMark plus GFM tables, parsed by `pulldown-cmark`; its events go through `Mapper`
//! before `pulldown_cmark::html::push_html` writes them. Everything is escaped: raw HTML in the
//! input (inline or block) is shown as text, except `<br>` (which `REPORT.md` writes in table
//! cells for line breaks), written `<br/>`; character references (`&lt;`, `&#42;`) are decoded
//! by the parser and escaped again. Links and autolinks only keep `http`, `https` and `mailto`
//! URLs and relative ones; others render as their text. Images render as their alt text. Bare
//! `http(s)://` URLs in text become links (trailing punctuation left out).

use super::esc;
use pulldown_cmark::{CowStr, Event, LinkType, Options, Parser, Tag, TagEnd, TextMergeStream};
use std::fmt::Write as _;

/// Renders Markdown to an HTML fragment.
pub fn to_html(md: &str) -> String {
    let mut mapper = Mapper::default();
    let mut events = Vec::new();
    for ev in TextMergeStream::new(Parser::new_ext(md, Options::ENABLE_TABLES)) {
        mapper.map(ev, &mut events);
    }
    let mut out = String::new();
    pulldown_cmark::html::push_html(&mut out, events.into_iter());
    out
}

/// A complete, self-contained page for a bundle's `REPORT.md`: the converted document under a
/// line linking back to the campaign report and to the bundle's files.
pub fn page(md: &str, id: &str, files: &[&str]) -> String {
    let body = to_html(md);
    let title = md
        .lines()
        .find_map(|l| l.strip_prefix("# "))
        .map(|t| strip_tags(&to_html(&format!("# {t}"))).trim().to_string())
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
    let mut in_tag = false;
    let mut keep = |c: char| {
        let k = !in_tag && c != '<';
        in_tag = (in_tag || c == '<') && c != '>';
        k
    };
    html.chars().filter(|&c| keep(c)).collect()
}

/// The event mapping that enforces the safety rules (module doc) on the parser's output.
#[derive(Default)]
struct Mapper {
    /// One entry per open link: whether it is kept (its URL is safe).
    links: Vec<bool>,
    /// How many links, images and code blocks are open: no bare URL is linked inside them.
    no_autolink: usize,
}

impl Mapper {
    fn map<'a>(&mut self, ev: Event<'a>, out: &mut Vec<Event<'a>>) {
        match &ev {
            Event::Start(Tag::Link { .. } | Tag::Image { .. } | Tag::CodeBlock(_)) => {
                self.no_autolink += 1
            }
            Event::End(TagEnd::Link | TagEnd::Image | TagEnd::CodeBlock) => self.no_autolink -= 1,
            _ => {}
        }
        match ev {
            Event::Html(h) | Event::InlineHtml(h) => out.push(raw_html(h)),
            // Block HTML becomes a paragraph of its (escaped) text.
            Event::Start(Tag::HtmlBlock) => out.push(Event::Start(Tag::Paragraph)),
            Event::End(TagEnd::HtmlBlock) => out.push(Event::End(TagEnd::Paragraph)),
            Event::Start(Tag::Link {
                link_type,
                ref dest_url,
                ..
            }) => {
                let keep = link_type == LinkType::Email || safe_url(dest_url);
                self.links.push(keep);
                if keep {
                    out.push(ev);
                }
            }
            Event::End(TagEnd::Link) => {
                if self.links.pop() == Some(true) {
                    out.push(ev);
                }
            }
            // An image: only its alt text (the events between its start and end) is kept.
            Event::Start(Tag::Image { .. }) | Event::End(TagEnd::Image) => {}
            Event::Text(t) if self.no_autolink == 0 => autolink(t, out),
            ev => out.push(ev),
        }
    }
}

/// Raw HTML as text, but `<br>` as a line break.
fn raw_html(h: CowStr<'_>) -> Event<'_> {
    let t = h.trim().to_ascii_lowercase();
    if matches!(t.as_str(), "<br>" | "<br/>" | "<br />") {
        Event::InlineHtml("<br/>".into())
    } else {
        Event::Text(h)
    }
}

/// Whether a link keeps its URL: http(s), mailto or relative (no scheme).
fn safe_url(url: &str) -> bool {
    let u = url.trim_start_matches(|c: char| c <= ' ');
    match u.find(':') {
        Some(c) if !u[..c].contains(['/', '?', '#']) => ["http", "https", "mailto"]
            .iter()
            .any(|s| u[..c].eq_ignore_ascii_case(s)),
        _ => true,
    }
}

/// Text with its bare `http(s)://` URLs as links.
fn autolink<'a>(text: CowStr<'a>, out: &mut Vec<Event<'a>>) {
    let mut prev = None;
    let found = text.char_indices().find_map(|(at, c)| {
        let boundary = prev.is_none_or(|p: char| !p.is_alphanumeric());
        prev = Some(c);
        boundary.then(|| bare_url(&text[at..]).map(|len| (at, at + len)))?
    });
    let Some((at, end)) = found else {
        return out.push(Event::Text(text));
    };
    let (url, rest) = (text[at..end].to_string(), text[end..].to_string());
    if at > 0 {
        out.push(Event::Text(text[..at].to_string().into()));
    }
    let (title, id) = ("".into(), "".into());
    let link = Tag::Link {
        link_type: LinkType::Autolink,
        dest_url: url.clone().into(),
        title,
        id,
    };
    out.extend([
        Event::Start(link),
        Event::Text(url.into()),
        Event::End(TagEnd::Link),
    ]);
    if !rest.is_empty() {
        autolink(rest.into(), out);
    }
}

/// A bare URL at the start of `s`: its length, up to whitespace, trailing punctuation and an
/// unbalanced `)` left out.
fn bare_url(s: &str) -> Option<usize> {
    let scheme = ["http://", "https://"]
        .into_iter()
        .find(|p| s.get(..p.len()).is_some_and(|h| h.eq_ignore_ascii_case(p)))?;
    let mut end = s
        .find(|c: char| c.is_whitespace() || "<>\"`".contains(c))
        .unwrap_or(s.len());
    loop {
        let u = &s[..end];
        let last = u.chars().next_back()?;
        let unbalanced = || u.matches('(').count() < u.matches(')').count();
        let trailing = ".,;:!?*_'".contains(last) || last == ')' && unbalanced();
        if !trailing {
            break;
        }
        end -= 1;
    }
    (end > scheme.len()).then_some(end)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_html_is_escaped() {
        let h = to_html(
            "a <script>alert('x')</script> & b <img src=x onerror=y> &lt;T&gt; &#42; a<br>b \
             `<b>&amp;` [x](javascript:alert(1)) [a \"b\"](r.py) [x](https://e.org/a?b=1&c=2)",
        );
        let want = "<p>a &lt;script&gt;alert('x')&lt;/script&gt; &amp; b \
            &lt;img src=x onerror=y&gt; &lt;T&gt; * a<br/>b <code>&lt;b&gt;&amp;amp;</code> x \
            <a href=\"r.py\">a \"b\"</a> \
            <a href=\"https://e.org/a?b=1&amp;c=2\">x</a></p>\n";
        assert_eq!(
            h, want,
            "references decoded and escaped again; a javascript: link is text"
        );
        assert_eq!(
            to_html("```\n<b>\n```\n"),
            "<pre><code>&lt;b&gt;\n</code></pre>\n"
        );
    }

    #[test]
    fn block_html_data_urls_and_images_are_text() {
        let h = to_html("<img src=x onerror=y>\n\n<script>\nalert(1)\n</script>\n\n<br>\n");
        let want = "<p>&lt;img src=x onerror=y&gt;\n</p>\n\
                    <p>&lt;script&gt;\nalert(1)\n&lt;/script&gt;\n</p>\n<p><br/></p>\n";
        assert_eq!(h, want);
        let h = to_html(
            "[x](data:text/html,<script>alert(1)</script>) <JavaScript:y> [z](&#106;avascript:1) \
             [r] <a href=\"javascript:w\">w</a> ![alt *t*](https://x/y.png) <a@b.org>\n\n\
             [r]: javascript:r\n",
        );
        let want = "<p>x JavaScript:y z r &lt;a href=\"javascript:w\"&gt;w&lt;/a&gt; \
                    alt <em>t</em> <a href=\"mailto:a@b.org\">a@b.org</a></p>\n";
        assert_eq!(h, want);
    }

    #[test]
    fn headings_paragraphs_escapes_and_emphasis() {
        let h = to_html("# A `x` \\_b\\_ title #\n\nline one\nline two  \nthree\n\n## Sub\n");
        let want = "<h1>A <code>x</code> _b_ title</h1>\n<p>line one\nline two<br />\nthree</p>\n\
                    <h2>Sub</h2>\n";
        assert_eq!(h, want);
        let h = to_html("**b** and *em* and _em_ but snake_case and 2 * 3 * 4 a\\*b\\* \\| c\\\\d");
        let want = "<p><strong>b</strong> and <em>em</em> and <em>em</em> but snake_case and \
                    2 * 3 * 4 a*b* | c\\d</p>\n";
        assert_eq!(h, want);
        let h =
            to_html("see https://onnx.ai/o/onnx\\_\\_RNN.html. (https://x.org/a_(b)), Xhttp://n.o");
        let u = "https://onnx.ai/o/onnx__RNN.html";
        let want = format!(
            "<p>see <a href=\"{u}\">{u}</a>. \
             (<a href=\"https://x.org/a_(b)\">https://x.org/a_(b)</a>), Xhttp://n.o</p>\n"
        );
        assert_eq!(h, want);
        let h = to_html("`https://c.org` [https://l.org](x)");
        assert_eq!(
            h,
            "<p><code>https://c.org</code> <a href=\"x\">https://l.org</a></p>\n"
        );
    }

    #[test]
    fn tables() {
        let h = to_html(
            "| o | e \\| x | n |\n|---|:---:|---:|\n| `a\\|b` | 1<br>2 | 3 |\n| z |\n\nafter\n",
        );
        let (c, r) = (
            " style=\"text-align: center\"",
            " style=\"text-align: right\"",
        );
        let want = format!(
            "<table><thead><tr><th>o</th><th{c}>e | x</th><th{r}>n</th></tr></thead><tbody>\n\
             <tr><td><code>a|b</code></td><td{c}>1<br/>2</td><td{r}>3</td></tr>\n\
             <tr><td>z</td><td{c}></td><td{r}></td></tr>\n</tbody></table>\n<p>after</p>\n"
        );
        assert_eq!(h, want);
        // A row of pipes without a delimiter row is a paragraph.
        assert_eq!(to_html("a | b\nc\n"), "<p>a | b\nc</p>\n");
    }

    #[test]
    fn lists_with_nested_code() {
        let h = to_html(
            "- Library: x\n- Ops: `A` (2)\n\n## Steps\n\n1. With pip\n\n   ```sh\n   pip i x\n   \
             python repro.py\n   ```\n\n2. With mutagraph\n\n   ```sh\n   mutagraph recheck .\n   \
             ```\n\nEnd.\n",
        );
        let want = "<ul>\n<li>Library: x</li>\n<li>Ops: <code>A</code> (2)</li>\n</ul>\n\
             <h2>Steps</h2>\n<ol>\n<li>\n<p>With pip</p>\n\
             <pre><code class=\"language-sh\">pip i x\n\
             python repro.py\n</code></pre>\n</li>\n<li>\n<p>With mutagraph</p>\n\
             <pre><code class=\"language-sh\">mutagraph recheck .\n</code></pre>\n</li>\n</ol>\n\
             <p>End.</p>\n";
        assert_eq!(h, want);
        let h = to_html("3. three\n4. four\n\n- a\n  - b\n- c\n\n> quote https://a.b/c\n");
        let want = "<ol start=\"3\">\n<li>three</li>\n<li>four</li>\n</ol>\n<ul>\n<li>a\n<ul>\n\
             <li>b</li>\n</ul>\n</li>\n<li>c</li>\n</ul>\n<blockquote>\n<p>quote \
             <a href=\"https://a.b/c\">https://a.b/c</a></p>\n</blockquote>\n";
        assert_eq!(h, want);
    }

    #[test]
    fn fences_longer_than_their_content() {
        let h = to_html("````text\na ``` b\n```\n````\nx\n");
        let want = "<pre><code class=\"language-text\">a ``` b\n```\n</code></pre>\n<p>x</p>\n";
        assert_eq!(h, want);
        // An unclosed fence runs to the end.
        assert_eq!(to_html("```\nx"), "<pre><code>x</code></pre>\n");
    }

    #[test]
    fn a_page_links_back_and_has_a_title() {
        let p = page(
            "# tract: Pad \\<fails\\> `<b>`\n\ntext\n",
            "crash-x",
            &["repro.py"],
        );
        assert!(
            p.contains("<title>tract: Pad &lt;fails&gt; &lt;b&gt;</title>"),
            "{p}"
        );
        assert!(p.contains("href=\"../../report.html\""));
        assert!(p.contains("<a href=\"repro.py\">repro.py</a>"));
        assert!(p.contains("<h1>tract: Pad &lt;fails&gt; <code>&lt;b&gt;</code></h1>"));
        assert!(page("text\n", "a<b", &[]).contains("<title>a&lt;b</title>"));
    }
}
