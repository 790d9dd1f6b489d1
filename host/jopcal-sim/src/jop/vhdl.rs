//! Just enough of VHDL to wrap a JOP top: an entity's generics and ports, and
//! the instances (with their generic maps) in an architecture. Comments are
//! blanked first (same length, so byte offsets still give line numbers).

/// A generic or a port of an entity.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decl {
    pub name: String,
    /// `in`, `out`, `inout` or `buffer` for ports; empty for generics.
    pub mode: String,
    /// The type as written (`std_logic_vector(17 downto 0)`, `sc_out_type`).
    pub ty: String,
    /// The default value as written, if any.
    pub default: Option<String>,
}

/// An entity declaration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entity {
    pub name: String,
    pub generics: Vec<Decl>,
    pub ports: Vec<Decl>,
}

/// An instance in an architecture: `label: entity work.E generic map (...)` or `label: E ...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instance {
    pub label: String,
    pub entity: String,
    /// The text inside `generic map ( ... )`, if there is one.
    pub generic_map: Option<String>,
    /// The text inside `port map ( ... )`, if there is one.
    pub port_map: Option<String>,
    /// 1-based line of the label.
    pub line: usize,
}

/// `text` with `--` comments replaced by spaces, one per byte, so that
/// every offset stays valid in the original text. (It runs on every file
/// of a top at each board start: one pass over the bytes.)
pub fn strip_comments(text: &str) -> String {
    let mut out = Vec::with_capacity(text.len());
    let mut in_comment = false;
    let mut bytes = text.bytes().peekable();
    while let Some(c) = bytes.next() {
        if c == b'\n' {
            in_comment = false;
        } else if !in_comment && c == b'-' && bytes.peek() == Some(&b'-') {
            in_comment = true;
        }
        out.push(if in_comment { b' ' } else { c });
    }
    // A comment ends only at a line's end, so a character is either kept
    // whole or all its bytes become spaces: the text stays UTF-8.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// 1-based line number of byte offset `at`.
pub fn line_of(text: &str, at: usize) -> usize {
    text[..at.min(text.len())].matches('\n').count() + 1
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Offsets of the whole word `word` (ASCII case-insensitive) in `lower` (already lower case).
fn words<'a>(lower: &'a str, word: &'a str) -> impl Iterator<Item = usize> + 'a {
    lower.match_indices(word).map(|(i, _)| i).filter(move |&i| {
        let before = lower[..i].chars().next_back().is_none_or(|c| !is_ident(c));
        let after = lower[i + word.len()..].chars().next().is_none_or(|c| !is_ident(c));
        before && after
    })
}

/// The text inside the parentheses opening at or after `from` (`text[from..]`
/// starts with optional space and `(`), and the offset after the closing one.
pub fn parenthesized(text: &str, from: usize) -> Option<(&str, usize)> {
    let open = from + text[from..].find(|c: char| !c.is_whitespace())?;
    if !text[open..].starts_with('(') {
        return None;
    }
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some((&text[open + 1..open + i], open + i + 1));
                }
            }
            _ => {}
        }
    }
    None
}

/// Splits `text` at `sep` outside parentheses.
fn split_top(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            c if c == sep && depth == 0 => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Declarations of a generic or port clause: `a, b : in t := d; ...`.
fn decls(clause: &str, ports: bool) -> Result<Vec<Decl>, String> {
    let mut out = Vec::new();
    for item in split_top(clause, ';') {
        if item.trim().is_empty() {
            continue;
        }
        let Some((names, rest)) = item.split_once(':') else {
            return Err(format!("cannot read `{}`", collapse(item)));
        };
        let (rest, default) = match rest.split_once(":=") {
            Some((r, d)) => (r, Some(collapse(d))),
            None => (rest, None),
        };
        let rest = rest.trim();
        let (mode, ty) = if ports {
            let (m, t) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            let m = m.to_ascii_lowercase();
            if !["in", "out", "inout", "buffer"].contains(&m.as_str()) {
                return Err(format!("port `{}` has no mode", collapse(names)));
            }
            (m, collapse(t))
        } else {
            (String::new(), collapse(rest))
        };
        for n in names.split(',') {
            out.push(Decl {
                name: n.trim().to_ascii_lowercase(),
                mode: mode.clone(),
                ty: ty.clone(),
                default: default.clone(),
            });
        }
    }
    Ok(out)
}

/// Why an entity's declaration does not read, at which line of its file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {what}")]
pub struct EntitySyntax {
    pub line: usize,
    pub what: String,
}

/// The declaration of entity `name` in `text` (comments stripped), if there is one.
pub fn entity(text: &str, name: &str) -> Result<Option<Entity>, EntitySyntax> {
    let lower = text.to_ascii_lowercase();
    let want = name.to_ascii_lowercase();
    for at in words(&lower, "entity") {
        let rest = lower[at + 6..].trim_start();
        let Some(rest) = rest.strip_prefix(want.as_str()) else {
            continue;
        };
        if !rest.trim_start().starts_with("is") || rest.starts_with(|c: char| is_ident(c)) {
            continue;
        }
        let body_start = lower.len() - rest.len();
        let end = words(&lower[body_start..], "end")
            .next()
            .map_or(lower.len(), |e| body_start + e);
        let mut e = Entity {
            name: want.clone(),
            generics: Vec::new(),
            ports: Vec::new(),
        };
        if let Some(g) = words(&lower[body_start..end], "generic").next() {
            let line = line_of(text, body_start + g);
            let at = |what: String| EntitySyntax { line, what };
            let (inner, _) =
                parenthesized(text, body_start + g + 7).ok_or_else(|| at("unclosed generic clause".into()))?;
            e.generics = decls(inner, false).map_err(at)?;
        }
        if let Some(p) = words(&lower[body_start..end], "port").next() {
            let line = line_of(text, body_start + p);
            let at = |what: String| EntitySyntax { line, what };
            let (inner, _) =
                parenthesized(text, body_start + p + 4).ok_or_else(|| at("unclosed port clause".into()))?;
            e.ports = decls(inner, true).map_err(at)?;
        }
        return Ok(Some(e));
    }
    Ok(None)
}

/// Instances of `entity` (`label : entity work.entity` or `label : entity`) in `text` (comments stripped).
pub fn instances(text: &str, entity_name: &str) -> Vec<Instance> {
    let lower = text.to_ascii_lowercase();
    let want = entity_name.to_ascii_lowercase();
    let mut out = Vec::new();
    for at in words(&lower, &want) {
        // Walk back over `entity work.` and `:` to the label.
        let before = lower[..at].trim_end();
        let before = before.strip_suffix("work.").map_or(before, |b| b.trim_end());
        let before = before.strip_suffix("entity").map_or(before, |b| b.trim_end());
        let Some(before) = before.strip_suffix(':') else {
            continue;
        };
        let before = before.trim_end();
        let label_start = before.rfind(|c: char| !is_ident(c)).map_or(0, |i| i + 1);
        let label = &before[label_start..];
        if label.is_empty() || label == "signal" || label == "component" {
            continue;
        }
        let after = at + want.len();
        let rest = lower[after..].trim_start();
        let mut next = lower.len() - rest.len();
        let generic_map = if rest.starts_with("generic") {
            let m = next + lower[next..].find("map").unwrap_or(0) + 3;
            parenthesized(text, m).map(|(inner, end)| {
                next = end;
                collapse(inner)
            })
        } else {
            None
        };
        let port_map = lower[next..]
            .trim_start()
            .starts_with("port")
            .then(|| {
                let m = next + lower[next..].find("map")? + 3;
                parenthesized(text, m).map(|(inner, _)| collapse(inner))
            })
            .flatten();
        out.push(Instance {
            label: label.to_string(),
            entity: want.clone(),
            generic_map,
            port_map,
            line: line_of(text, label_start),
        });
    }
    out
}

/// What an instance's port map connects to its entity's port `formal`
/// (`ports`: the entity's ports in their order), by name or by position,
/// with its spaces removed (`sc_arb_out(1)`).
pub fn actual(port_map: &str, ports: &[Decl], formal: &str) -> Option<String> {
    let formal = formal.to_ascii_lowercase();
    let position = ports.iter().position(|p| p.name == formal);
    split_top(port_map, ',').iter().enumerate().find_map(|(i, a)| {
        let found = match a.split_once("=>") {
            Some((f, v)) => f.trim().eq_ignore_ascii_case(&formal).then_some(v),
            None => (Some(i) == position).then_some(*a),
        };
        found.map(|v| v.split_whitespace().collect::<String>().to_ascii_lowercase())
    })
}

/// Every instance in `text` (comments stripped), of any entity or
/// component (`label : [entity work.]name generic map | port map`), in
/// the order of the text.
pub fn all_instances(text: &str) -> Vec<Instance> {
    let re =
        regex::Regex::new(r"(?i)\b\w+\s*:\s*(?:entity\s+work\.)?(\w+)\s+(?:generic|port)\s+map\b").expect("pattern");
    let mut names: Vec<String> = re.captures_iter(text).map(|c| c[1].to_ascii_lowercase()).collect();
    names.sort();
    names.dedup();
    let mut out: Vec<Instance> = names.iter().flat_map(|n| instances(text, n)).collect();
    out.sort_by_key(|i| i.line);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOP: &str = "entity jop is\ngeneric (\n\tram_cnt : integer := 2; -- cycles\n\tjpc_width : integer := 12\n);\nport (\n\tclk : in std_logic;\n\tser_txd, wd : out std_logic;\n\trama_d : inout std_logic_vector(15 downto 0)\n);\nend jop;\narchitecture rtl of jop is\nbegin\n\tcpu: entity work.jopcpu\n\t\tgeneric map(\n\t\t\tjpc_width => jpc_width\n\t\t)\n\t\tport map(clk, int_res);\n\tscm: sc_mem_if generic map (ram_ws => ram_cnt-1) port map (clk);\nend rtl;\n";

    #[test]
    fn reads_an_entity_and_its_instances() {
        let t = strip_comments(TOP);
        assert_eq!(t.len(), TOP.len());
        let e = entity(&t, "jop").unwrap().unwrap();
        assert_eq!(e.generics.len(), 2);
        assert_eq!(e.generics[0].default.as_deref(), Some("2"));
        assert_eq!(e.ports.len(), 4);
        assert_eq!(e.ports[2].name, "wd");
        assert_eq!(e.ports[2].mode, "out");
        assert_eq!(e.ports[3].ty, "std_logic_vector(15 downto 0)");
        let cpu = instances(&t, "jopcpu");
        assert_eq!(cpu.len(), 1);
        assert_eq!(cpu[0].label, "cpu");
        assert_eq!(cpu[0].generic_map.as_deref(), Some("jpc_width => jpc_width"));
        assert_eq!(cpu[0].line, 14);
        let scm = instances(&t, "sc_mem_if");
        assert_eq!(scm[0].generic_map.as_deref(), Some("ram_ws => ram_cnt-1"));
        assert!(entity(&t, "jo").unwrap().is_none());
    }

    /// Blanking comments line by line, as the reader needs it done.
    fn strip_comments_by_line(text: &str) -> String {
        text.split_inclusive('\n')
            .map(|line| match line.find("--") {
                Some(i) => {
                    let blanks = line[i..].trim_end_matches('\n').len();
                    format!("{}{}{}", &line[..i], " ".repeat(blanks), &line[i + blanks..])
                }
                None => line.to_string(),
            })
            .collect()
    }

    proptest::proptest! {
        /// One pass over the bytes blanks what blanking each line does.
        #[test]
        fn comments_blank_to_each_lines_end(text in "(-|--|---|\n|\r|a|é|€| ){0,40}") {
            proptest::prop_assert_eq!(strip_comments(&text), strip_comments_by_line(&text));
        }

        /// Any text, ASCII or not: the reader and the work-arounds never panic,
        /// and blanking comments keeps every offset.
        #[test]
        fn no_text_panics_the_reader(text in "(entity|port|generic|map|begin|architecture|:|;|\\(|\\)|--|\n| |é|[a-z_]{1,6}|'1'|<=|reset|rising_edge\\(clk\\)|if|then|elsif|std_logic_vector\\(to_unsigned\\(g, 8\\)\\)){0,60}") {
            let t = strip_comments(&text);
            proptest::prop_assert_eq!(t.len(), text.len());
            let _ = entity(&t, "e");
            let _ = instances(&t, "jopcpu");
            for i in all_instances(&t) {
                let _ = actual(i.port_map.as_deref().unwrap_or(""), &[], "m");
            }
            let _ = crate::jop::fixes::reset_record_fields(&text);
            let _ = crate::jop::fixes::hoist_generic_conversions(&text);
            let _ = crate::jop::fixes::separate_instance_nets(&text);
        }
    }

    #[test]
    fn an_instances_port_map_by_position_and_by_name() {
        let t = strip_comments(TOP);
        let ports = entity("entity c is port (clk, reset : in std_logic; m : out t); end c;", "c")
            .unwrap()
            .unwrap()
            .ports;
        assert_eq!(
            actual("clk_int, res, sc_arb_out ( 1 )", &ports, "m").as_deref(),
            Some("sc_arb_out(1)")
        );
        assert_eq!(actual("m => x, clk => c", &ports, "M").as_deref(), Some("x"));
        assert_eq!(actual("clk_int", &ports, "m"), None);
        assert_eq!(actual("clk_int, a, b", &ports, "none"), None);
        let all = all_instances(&t);
        let labels: Vec<&str> = all.iter().map(|i| i.label.as_str()).collect();
        assert_eq!(labels, ["cpu", "scm"]);
        assert_eq!(all[0].port_map.as_deref(), Some("clk, int_res"));
        assert_eq!(all[1].port_map.as_deref(), Some("clk"));
    }

    #[test]
    fn a_port_without_a_mode_is_named() {
        let e = entity("entity x is port (a : std_logic); end x;", "x").unwrap_err();
        assert!(e.to_string().contains("port `a` has no mode"), "{e}");
    }
}
