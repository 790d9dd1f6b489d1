//! What a JOP top is, read from the tree's VHDL: the processor's
//! configuration that its timing depends on (the method cache, the memory
//! controller's wait states, the stack's size, the scratchpad, the clock and
//! the UART), so that a model of the processor can be the same processor
//! as the bench `sim build` makes of the same top.
//!
//! Read from the Quartus project's files: the top entity's generics (their
//! defaults, or values the caller sets, as a sweep does), the integer
//! constants of the project's packages (`jop_config`'s `clk_freq` and
//! `ram_width`), the UART's generics in the project's `scio`, and the
//! memory controller's address port.

use super::{project_files, vhdl, Source, TreeBuildError};
use std::collections::BTreeMap;
use std::path::Path;

/// The configuration of a JOP top.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TopFacts {
    /// The Quartus project (`quartus/<top>`).
    pub top: String,
    /// The top entity's integer generics, as this build sets them.
    pub generics: BTreeMap<String, i64>,
    /// The method cache: 2^jpc_width bytes in 2^block_bits blocks.
    pub jpc_width: u32,
    pub block_bits: u32,
    /// The scratchpad: 2^spm_width words, none when 0.
    pub spm_width: u32,
    /// The external memory's access cycles (the top's `ram_cnt`).
    pub ram_cnt: u32,
    /// The file (without `.vhd`) of the memory controller (`sc_mem_if`).
    pub controller: String,
    /// Address bits of the external SRAM (its word address port).
    pub sram_address_bits: u32,
    /// Address bits of the on-chip stack memory (`ram_width`).
    pub stack_address_bits: u32,
    /// The clock, in Hz (`clk_freq`), and the UART's rate and transmit FIFO.
    pub clk_freq: u64,
    pub baud: u64,
    pub tx_fifo_depth: u32,
}

impl TopFacts {
    /// The method cache's size in bytes and its number of blocks.
    pub fn method_cache(&self) -> (u32, u32) {
        (1 << self.jpc_width, 1 << self.block_bits)
    }

    /// The stack's words.
    pub fn stack_words(&self) -> u32 {
        1 << self.stack_address_bits
    }

    /// The stack pointer at which the processor raises its overflow
    /// exception (`vhdl/core/stack.vhd`: 2^ram_width - 1 - 16).
    pub fn overflow_at(&self) -> u32 {
        self.stack_words() - 1 - 16
    }

    /// Cycles of one tick of the UART's 16x clock: `clk16_cnt + 1`, where
    /// `sc_uart` rounds `clk_freq / baud / 16` to the nearest whole number.
    pub fn uart_tick(&self) -> u64 {
        (self.clk_freq / self.baud.max(1) + 8) / 16
    }
}

/// A small integer expression evaluator for VHDL generic and constant values.
fn eval(expr: &str, env: &BTreeMap<String, i64>) -> Option<i64> {
    let tokens: Vec<String> = tokenize(expr)?;
    let mut p = Parser { t: &tokens, i: 0, env };
    let v = p.sum()?;
    (p.i == tokens.len()).then_some(v)
}

fn tokenize(s: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut chars = s.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_alphanumeric() || c == '_' {
            let mut w = String::new();
            while let Some(&d) = chars.peek() {
                if d.is_ascii_alphanumeric() || d == '_' {
                    w.push(d.to_ascii_lowercase());
                    chars.next();
                } else {
                    break;
                }
            }
            out.push(w);
        } else if c == '*' {
            chars.next();
            if chars.peek() == Some(&'*') {
                chars.next();
                out.push("**".into());
            } else {
                out.push("*".into());
            }
        } else if "+-/()".contains(c) {
            out.push(c.to_string());
            chars.next();
        } else {
            return None;
        }
    }
    Some(out)
}

struct Parser<'a> {
    t: &'a [String],
    i: usize,
    env: &'a BTreeMap<String, i64>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<&str> {
        self.t.get(self.i).map(String::as_str)
    }
    fn sum(&mut self) -> Option<i64> {
        let mut v = self.product()?;
        while let Some(op) = self.peek().filter(|o| *o == "+" || *o == "-") {
            let plus = op == "+";
            self.i += 1;
            let r = self.product()?;
            v = if plus { v.checked_add(r)? } else { v.checked_sub(r)? };
        }
        Some(v)
    }
    fn product(&mut self) -> Option<i64> {
        let mut v = self.power()?;
        while let Some(op) = self.peek().filter(|o| *o == "*" || *o == "/") {
            let times = op == "*";
            self.i += 1;
            let r = self.power()?;
            v = if times { v.checked_mul(r)? } else { v.checked_div(r)? };
        }
        Some(v)
    }
    fn power(&mut self) -> Option<i64> {
        let b = self.atom()?;
        if self.peek() == Some("**") {
            self.i += 1;
            let e = self.atom()?;
            return b.checked_pow(u32::try_from(e).ok()?);
        }
        Some(b)
    }
    fn atom(&mut self) -> Option<i64> {
        let t = self.t.get(self.i)?.clone();
        self.i += 1;
        match t.as_str() {
            "(" => {
                let v = self.sum()?;
                (self.peek() == Some(")")).then(|| self.i += 1)?;
                Some(v)
            }
            "-" => self.atom().map(|v| -v),
            w if w.chars().all(|c| c.is_ascii_digit() || c == '_') => w.replace('_', "").parse().ok(),
            w => self.env.get(w).copied(),
        }
    }
}

/// `constant NAME : integer := EXPR;` of every source, evaluated in order
/// (a constant may name one declared before it).
fn constants(sources: &[Source]) -> BTreeMap<String, i64> {
    let re =
        regex::Regex::new(r"(?i)constant\s+(\w+)\s*:\s*(?:integer|natural|positive)\s*:=\s*([^;]+);").expect("pattern");
    let mut env = BTreeMap::new();
    // Two rounds: a package may use a constant of one that comes later in the list.
    for _ in 0..2 {
        for s in sources {
            let t = vhdl::strip_comments(&s.text);
            for c in re.captures_iter(&t) {
                let name = c[1].to_ascii_lowercase();
                if let Some(v) = eval(&c[2], &env) {
                    env.entry(name).or_insert(v);
                }
            }
        }
    }
    env
}

/// The `name => value` pairs of a generic map.
fn map_pairs(map: &str) -> Vec<(String, String)> {
    map.split(',')
        .filter_map(|p| {
            let (k, v) = p.split_once("=>")?;
            Some((k.trim().to_ascii_lowercase(), v.trim().to_string()))
        })
        .collect()
}

/// Whether the processor's memory port reaches the memory controller
/// directly, as in `cycmin`: the bench and the virtual board are one
/// processor on its controller, so a top that puts a data cache, an
/// arbiter (other processors, a VGA's reads) or anything else between the
/// two would be timed as a processor it is not. Why not, naming what sits
/// between, when it does not.
fn memory_path(sources: &[Source], top_text: &str) -> Result<(), String> {
    let ports = |name: &str| {
        sources.iter().find_map(|s| {
            let t = vhdl::strip_comments(&s.text);
            vhdl::entity(&t, name).ok().flatten().map(|e| e.ports)
        })
    };
    let connected = |name: &str| -> Option<String> {
        let inst = vhdl::instances(top_text, name).into_iter().next()?;
        vhdl::actual(inst.port_map.as_deref()?, &ports(name)?, "sc_mem_out")
    };
    let (Some(cpu), Some(controller)) = (connected("jopcpu"), connected("sc_mem_if")) else {
        // Not read: the wrapper's own checks name what it cannot connect.
        return Ok(());
    };
    if cpu == controller {
        return Ok(());
    }
    let net = cpu.split('(').next().unwrap_or(&cpu).to_string();
    let between: Vec<String> = vhdl::all_instances(top_text)
        .into_iter()
        .filter(|i| i.entity != "jopcpu" && i.entity != "sc_mem_if")
        .filter(|i| {
            i.port_map.as_deref().is_some_and(|m| {
                m.to_ascii_lowercase()
                    .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .any(|w| w == net)
            })
        })
        .map(|i| format!("{} (`{}`, line {})", i.entity, i.label, i.line))
        .collect();
    let what = match between.len() {
        0 => "other logic sits".to_string(),
        1 => format!("{} sits", between[0]),
        _ => format!("{} sit", between.join(", ")),
    };
    Err(format!(
        "the processor's memory port (`{cpu}`) does not reach the memory controller (`{controller}`): \
         {what} between them; jopcal's bench and virtual board are one processor on its memory \
         controller (as quartus/cycmin), so this top's timing is not theirs (`--timing jopsim` runs \
         its images as JopSim does)"
    ))
}

/// Whether the project's processor reaches its memory controller directly
/// ([`memory_path`]), named at the file that instantiates the processor.
pub(super) fn processor_on_its_memory(sources: &[Source]) -> Result<(), TreeBuildError> {
    for s in sources {
        let text = vhdl::strip_comments(&s.text);
        if !vhdl::instances(&text, "jopcpu").is_empty() {
            return memory_path(sources, &text).map_err(|why| TreeBuildError::Tree {
                file: s.path.clone(),
                why,
            });
        }
    }
    Ok(())
}

/// Reads what the top `top` of the tree at `home` is, with `overrides`
/// (`name`, value) of the top's generics.
pub fn describe(home: &Path, top: &str, overrides: &[(String, i64)]) -> Result<TopFacts, TreeBuildError> {
    let qsf = home.join("quartus").join(top).join("jop.qsf");
    let sources = project_files(home, top)?
        .iter()
        .map(|f| Source::read(f))
        .collect::<Result<Vec<_>, _>>()?;
    let err = |file: &Path, why: String| TreeBuildError::Tree {
        file: file.to_path_buf(),
        why,
    };
    let top_source = sources
        .iter()
        .find(|s| !vhdl::instances(&vhdl::strip_comments(&s.text), "jopcpu").is_empty())
        .ok_or_else(|| err(&qsf, "no file instantiates jopcpu (the processor)".into()))?;
    let top_text = vhdl::strip_comments(&top_source.text);
    let consts = constants(&sources);
    let top_name = top_text
        .to_ascii_lowercase()
        .split("entity ")
        .skip(1)
        .find_map(|r| {
            let mut w = r.split_whitespace();
            let n = w.next()?;
            (w.next() == Some("is")).then(|| n.to_string())
        })
        .ok_or_else(|| err(&top_source.path, "declares no entity".into()))?;
    let entity = vhdl::entity(&top_text, &top_name)
        .map_err(|w| err(&top_source.path, w.to_string()))?
        .ok_or_else(|| err(&top_source.path, "declares no entity".into()))?;
    let mut generics = BTreeMap::new();
    for g in &entity.generics {
        let name = g.name.to_ascii_lowercase();
        if let Some(v) = g.default.as_deref().and_then(|d| eval(d, &consts)) {
            generics.insert(name, v);
        }
    }
    for (name, v) in overrides {
        let n = name.to_ascii_lowercase();
        if !entity.generics.iter().any(|g| g.name.eq_ignore_ascii_case(&n)) {
            let known: Vec<&str> = entity.generics.iter().map(|g| g.name.as_str()).collect();
            return Err(err(
                &top_source.path,
                format!(
                    "entity {top_name} has no generic `{name}` (it has: {})",
                    known.join(", ")
                ),
            ));
        }
        generics.insert(n, *v);
    }
    // The processor's generics as the top maps them (or the top's own, by name).
    let mut env = consts.clone();
    env.extend(generics.clone());
    let cpu = vhdl::instances(&top_text, "jopcpu").remove(0);
    let mut cpu_generics = BTreeMap::new();
    for (k, v) in map_pairs(cpu.generic_map.as_deref().unwrap_or("")) {
        if let Some(x) = eval(&v, &env) {
            cpu_generics.insert(k, x);
        }
    }
    let pick = |name: &str| -> Result<i64, TreeBuildError> {
        cpu_generics
            .get(name)
            .or_else(|| generics.get(name))
            .or_else(|| consts.get(name))
            .copied()
            .ok_or_else(|| err(&top_source.path, format!("cannot tell the processor's `{name}`")))
    };
    let jpc_width = pick("jpc_width")?;
    let block_bits = pick("block_bits")?;
    let spm_width = pick("spm_width").unwrap_or(0);
    let ram_cnt = pick("ram_cnt")?;
    // The memory controller: the file that declares sc_mem_if, and its address port.
    let (controller, sram_address_bits) = sources
        .iter()
        .find_map(|s| {
            let t = vhdl::strip_comments(&s.text);
            let e = vhdl::entity(&t, "sc_mem_if").ok().flatten()?;
            let port = e.ports.iter().find(|p| p.name.eq_ignore_ascii_case("ram_addr"))?;
            let range = port.ty.to_ascii_lowercase();
            let hi: i64 = range
                .split('(')
                .nth(1)?
                .split("downto")
                .next()
                .and_then(|h| eval(h, &env))?;
            let stem = s.path.file_stem()?.to_string_lossy().into_owned();
            Some((stem, hi as u32 + 1))
        })
        .ok_or_else(|| err(&qsf, "no memory controller (an sc_mem_if with a ram_addr port)".into()))?;
    memory_path(&sources, &top_text).map_err(|why| err(&top_source.path, why))?;
    let stack_address_bits = consts.get("ram_width").copied().ok_or_else(|| {
        err(
            &qsf,
            "no `constant ram_width` (the stack's address bits) in the project's packages".into(),
        )
    })?;
    let clk_freq = consts
        .get("clk_freq")
        .copied()
        .ok_or_else(|| err(&qsf, "no `constant clk_freq` in the project's packages".into()))?;
    // The UART's generics where the project's scio instantiates sc_uart.
    let uart_map = sources
        .iter()
        .find_map(|s| {
            let t = vhdl::strip_comments(&s.text);
            vhdl::instances(&t, "sc_uart").into_iter().find_map(|i| i.generic_map)
        })
        .ok_or_else(|| err(&qsf, "no instance of sc_uart (the UART) in the project's scio".into()))?;
    let uart: BTreeMap<String, String> = map_pairs(&uart_map).into_iter().collect();
    let uart_value = |k: &str| -> Result<i64, TreeBuildError> {
        uart.get(k)
            .and_then(|v| eval(v, &env))
            .ok_or_else(|| err(&qsf, format!("the UART's `{k}` is not a number here")))
    };
    let positive = |v: i64, what: &str| -> Result<u64, TreeBuildError> {
        u64::try_from(v)
            .ok()
            .filter(|v| *v > 0 || what == "spm_width")
            .ok_or_else(|| err(&top_source.path, format!("`{what}` = {v} is not a size")))
    };
    Ok(TopFacts {
        top: top.to_string(),
        generics,
        jpc_width: positive(jpc_width, "jpc_width")? as u32,
        block_bits: positive(block_bits, "block_bits")? as u32,
        spm_width: positive(spm_width, "spm_width")? as u32,
        ram_cnt: positive(ram_cnt, "ram_cnt")? as u32,
        controller,
        sram_address_bits,
        stack_address_bits: positive(stack_address_bits, "ram_width")? as u32,
        clk_freq: positive(clk_freq, "clk_freq")?,
        baud: positive(uart_value("baud_rate")?, "baud_rate")?,
        tx_fifo_depth: positive(uart_value("txf_depth")?, "txf_depth")? as u32,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_of_generics_and_constants() {
        let env: BTreeMap<String, i64> = [("ram_cnt".to_string(), 2), ("stack_size_global".to_string(), 8)]
            .into_iter()
            .collect();
        assert_eq!(eval("ram_cnt-1", &env), Some(1));
        assert_eq!(eval("2**STACK_SIZE_GLOBAL - 1 - 16", &env), Some(239));
        assert_eq!(eval("(3 + 4) * 2 / 7", &env), Some(2));
        assert_eq!(eval("80_000_000", &env), Some(80_000_000));
        assert_eq!(eval("unknown + 1", &env), None);
        assert_eq!(eval("1 +", &env), None);
        assert_eq!(eval("'1'", &env), None);
    }

    /// A processor and a memory controller, and a top joining them
    /// directly or through `between`.
    fn top_sources(cpu_port: &str, between: &str) -> Vec<Source> {
        let source = |name: &str, text: String| Source {
            path: std::path::PathBuf::from(name),
            text,
        };
        vec![
            source(
                "cpu.vhd",
                "entity jopcpu is port (clk, reset : in std_logic; sc_mem_out : out sc_out_type; \
                 sc_mem_in : in sc_in_type); end jopcpu;"
                    .into(),
            ),
            source(
                "mem.vhd",
                "entity sc_mem_if is generic (ram_ws : integer); port (clk, reset : in std_logic; \
                 sc_mem_out : in sc_out_type; sc_mem_in : out sc_in_type); end sc_mem_if;"
                    .into(),
            ),
            source(
                "top.vhd",
                format!(
                    "architecture rtl of jop is begin\n\
                     cpu: entity work.jopcpu generic map (jpc_width => 12)\n port map (clk, res, {cpu_port}, m_in);\n\
                     {between}\n\
                     scm: entity work.sc_mem_if generic map (ram_ws => 1)\n port map (clk, res, sc_mem_out => mem_out, sc_mem_in => mem_in);\n\
                     end rtl;"
                ),
            ),
        ]
    }

    #[test]
    fn a_top_with_logic_between_the_processor_and_its_memory_is_named() {
        let direct = top_sources("mem_out", "");
        assert_eq!(memory_path(&direct, &direct[2].text), Ok(()));
        let cached = top_sources(
            "dc_out",
            "dcache: entity work.datacache port map (clk, res, cpu_out => dc_out, mem_out => mem_out);",
        );
        let why = memory_path(&cached, &cached[2].text).unwrap_err();
        assert!(
            why.contains("(`dc_out`) does not reach the memory controller (`mem_out`)"),
            "{why}"
        );
        assert!(why.contains("datacache (`dcache`, line 4) sits between them"), "{why}");
        let shared = top_sources(
            "arb_out(1)",
            "vga: entity work.vga port map (clk, res, arb_out(0).address);\n\
             arbiter: entity work.arbiter generic map (cpu_cnt => 2) port map (clk, res, arb_out, arb_in, mem_out, mem_in);",
        );
        let why = memory_path(&shared, &shared[2].text).unwrap_err();
        assert!(
            why.contains("vga (`vga`, line 4), arbiter (`arbiter`, line 5) sit between"),
            "{why}"
        );
    }

    #[test]
    fn the_uart_tick_rounds_as_sc_uart_does() {
        let mut f = TopFacts {
            top: "t".into(),
            generics: BTreeMap::new(),
            jpc_width: 12,
            block_bits: 4,
            spm_width: 0,
            ram_cnt: 2,
            controller: "sc_sram32_flash".into(),
            sram_address_bits: 18,
            stack_address_bits: 8,
            clk_freq: 80_000_000,
            baud: 115_200,
            tx_fifo_depth: 2,
        };
        // (80e6 / 115200 + 8) / 16 = (694 + 8) / 16 = 43: 688 cycles a bit.
        assert_eq!(f.uart_tick(), 43);
        f.clk_freq = 3_686_400;
        assert_eq!(f.uart_tick(), 2);
        assert_eq!(f.overflow_at(), 239);
        assert_eq!(f.method_cache(), (4096, 16));
    }
}

/// What a `sim build --jop-home` built, beside the bench (`processor.toml`):
/// the tree, the microcode, and the top as the bench runs it (its clock
/// set for the bench's UART), so that a model of the processor can be the
/// bench's processor.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Built {
    pub jop_home: std::path::PathBuf,
    /// `serial` (downloads) or `simulation` (preloaded images).
    pub microcode: String,
    pub top: TopFacts,
}

/// The file a tree build writes beside its bench.
pub const BUILT_FILE: &str = "processor.toml";

impl Built {
    /// Reads `processor.toml` of the build in `sim`, if there is one.
    pub fn read(sim: &Path) -> Result<Option<Built>, TreeBuildError> {
        let path = sim.join(BUILT_FILE);
        let Ok(text) = std::fs::read_to_string(&path) else {
            return Ok(None);
        };
        toml::from_str(&text).map(Some).map_err(|e| TreeBuildError::Tree {
            file: path,
            why: e.message().to_string(),
        })
    }

    pub fn to_toml(&self) -> String {
        toml::to_string(self).unwrap_or_default()
    }
}
