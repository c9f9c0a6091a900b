//! Tokens of the textual syntax, with their line and column.
use super::TextError;

/// What a token is.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Tok {
    /// `[A-Za-z_][A-Za-z0-9_]*` (keywords are identifiers too).
    Ident(String),
    /// A quoted string, with its backslash escapes resolved.
    Str(String),
    /// Digits without a point or an exponent (the sign is a separate `-` token).
    Int(String),
    /// Digits with a point and/or an exponent.
    Float(String),
    /// One of `( ) [ ] { } < > , = : @ . ? -`.
    Punct(char),
    /// `=>`.
    Arrow,
    /// The end of the text.
    Eof,
}

/// A token and where it starts (1-based line and column, columns counted in characters).
#[derive(Clone, Debug)]
pub(crate) struct Token {
    pub tok: Tok,
    pub line: usize,
    pub col: usize,
}

impl Token {
    /// How the token reads in an error message.
    pub fn describe(&self) -> String {
        match &self.tok {
            Tok::Ident(s) => format!("'{s}'"),
            Tok::Str(s) => {
                let short: String = s.chars().take(30).collect();
                let more = if short.len() < s.len() { "..." } else { "" };
                format!("string \"{}{more}\"", short.escape_debug())
            }
            Tok::Int(s) | Tok::Float(s) => format!("number {s}"),
            Tok::Punct(c) => format!("'{c}'"),
            Tok::Arrow => "'=>'".into(),
            Tok::Eof => "the end of the text".into(),
        }
    }
}

const PUNCT: &str = "()[]{}<>,=:@.?-";

/// Splits `src` into tokens; the last one is always [`Tok::Eof`]. Comments (`#` to the end of
/// the line) and white space separate tokens and are dropped.
pub(crate) fn lex(src: &str) -> Result<Vec<Token>, TextError> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line, mut col) = (0usize, 1usize, 1usize);
    // Advances over chars[i], keeping line and column.
    let step = |i: &mut usize, line: &mut usize, col: &mut usize| {
        if chars[*i] == '\n' {
            *line += 1;
            *col = 1;
        } else {
            *col += 1;
        }
        *i += 1;
    };
    while i < chars.len() {
        let c = chars[i];
        let (tline, tcol) = (line, col);
        if c.is_whitespace() {
            step(&mut i, &mut line, &mut col);
            continue;
        }
        if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                step(&mut i, &mut line, &mut col);
            }
            continue;
        }
        let tok = if c.is_ascii_alphabetic() || c == '_' {
            let mut s = String::new();
            while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                s.push(chars[i]);
                step(&mut i, &mut line, &mut col);
            }
            Tok::Ident(s)
        } else if c.is_ascii_digit() {
            let mut s = String::new();
            let mut float = false;
            while i < chars.len() && chars[i].is_ascii_digit() {
                s.push(chars[i]);
                step(&mut i, &mut line, &mut col);
            }
            if i < chars.len() && chars[i] == '.' {
                float = true;
                s.push('.');
                step(&mut i, &mut line, &mut col);
                while i < chars.len() && chars[i].is_ascii_digit() {
                    s.push(chars[i]);
                    step(&mut i, &mut line, &mut col);
                }
            }
            if i < chars.len() && (chars[i] == 'e' || chars[i] == 'E') {
                let signed = matches!(chars.get(i + 1), Some('+' | '-'));
                let first_digit = if signed { i + 2 } else { i + 1 };
                if chars.get(first_digit).is_some_and(|d| d.is_ascii_digit()) {
                    float = true;
                    while i < first_digit {
                        s.push(chars[i]);
                        step(&mut i, &mut line, &mut col);
                    }
                    while i < chars.len() && chars[i].is_ascii_digit() {
                        s.push(chars[i]);
                        step(&mut i, &mut line, &mut col);
                    }
                }
            }
            if float { Tok::Float(s) } else { Tok::Int(s) }
        } else if c == '"' {
            step(&mut i, &mut line, &mut col);
            let mut s = String::new();
            loop {
                if i >= chars.len() {
                    return Err(TextError::new(
                        tline,
                        tcol,
                        "this string is not closed (missing '\"')",
                    ));
                }
                let ch = chars[i];
                step(&mut i, &mut line, &mut col);
                match ch {
                    '"' => break,
                    '\\' => {
                        if i >= chars.len() {
                            return Err(TextError::new(
                                tline,
                                tcol,
                                "this string is not closed (missing '\"')",
                            ));
                        }
                        s.push(chars[i]);
                        step(&mut i, &mut line, &mut col);
                    }
                    other => s.push(other),
                }
            }
            Tok::Str(s)
        } else if c == '=' && chars.get(i + 1) == Some(&'>') {
            step(&mut i, &mut line, &mut col);
            step(&mut i, &mut line, &mut col);
            Tok::Arrow
        } else if PUNCT.contains(c) {
            step(&mut i, &mut line, &mut col);
            Tok::Punct(c)
        } else {
            return Err(TextError::new(
                tline,
                tcol,
                format!("unexpected character {c:?}"),
            ));
        };
        out.push(Token {
            tok,
            line: tline,
            col: tcol,
        });
    }
    out.push(Token {
        tok: Tok::Eof,
        line,
        col,
    });
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(s: &str) -> Vec<Tok> {
        lex(s).unwrap().into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn numbers_names_strings() {
        assert_eq!(
            toks("a_1 12 1.5 5. 1e-5 2E3 1e x"),
            vec![
                Tok::Ident("a_1".into()),
                Tok::Int("12".into()),
                Tok::Float("1.5".into()),
                Tok::Float("5.".into()),
                Tok::Float("1e-5".into()),
                Tok::Float("2E3".into()),
                Tok::Int("1".into()),
                Tok::Ident("e".into()),
                Tok::Ident("x".into()),
                Tok::Eof
            ]
        );
        assert_eq!(
            toks(r#""a\"b\\c" # comment"#),
            vec![Tok::Str("a\"b\\c".into()), Tok::Eof]
        );
        assert_eq!(
            toks("=> = -"),
            vec![Tok::Arrow, Tok::Punct('='), Tok::Punct('-'), Tok::Eof]
        );
    }

    #[test]
    fn positions_and_errors() {
        let t = lex("a\n  b").unwrap();
        assert_eq!((t[1].line, t[1].col), (2, 3));
        let e = lex("x \"abc").unwrap_err();
        assert_eq!((e.line, e.col), (1, 3));
        let e = lex("x\n $").unwrap_err();
        assert_eq!((e.line, e.col), (2, 2));
    }
}
