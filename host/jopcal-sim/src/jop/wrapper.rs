//! The top jopcal builds: `jopcal_jop`, with the ports of hdl-sim/CONTRACT.md
//! (clock, reset, the SRAM pins, the UART's serial lines), around the tree
//! top's own processor (`jopcpu`), I/O (`scio`) and memory controller
//! (`sc_mem_if`), with the tree top's generics and generic maps. The tree's
//! top itself is not used: its tri-state data buses and inout I/O pins are
//! what GHDL 2.0's Verilog writer cannot carry through a hierarchy.

use crate::jop::vhdl::{Decl, Entity, Instance};
use std::collections::HashMap;
use std::fmt::Write as _;

/// The entity jopcal generates.
pub const TOP: &str = "jopcal_jop";

/// What the wrapper is made from.
pub struct Parts<'a> {
    /// The tree's top entity (for its generics).
    pub top: &'a Entity,
    /// Its instances of `jopcpu`, `scio` and `sc_mem_if` with their entities.
    pub cpu: (&'a Instance, &'a Entity),
    pub io: (&'a Instance, &'a Entity),
    pub mem: (&'a Instance, &'a Entity),
}

/// How a controller port maps to a contract pin.
const SRAM: [(&str, &str); 6] = [
    ("ram_addr", "sram_addr"),
    ("ram_dout", "sram_dout"),
    ("ram_din", "sram_din"),
    ("ram_ncs", "sram_ncs"),
    ("ram_noe", "sram_noe"),
    ("ram_nwe", "sram_nwe"),
];
const UART: [(&str, &str); 2] = [("txd", "uart_txd"), ("rxd", "uart_rxd")];

/// A port that cannot be wired: the entity and the port.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unmappable {
    pub entity: String,
    pub port: String,
    pub why: String,
}

fn constant_for(d: &Decl) -> Option<String> {
    let ty = d.ty.to_ascii_lowercase();
    // Inputs that are not the contract's: held inactive. `*rdy` inputs (a
    // flash's ready) are held ready, so an access never waits for them.
    let one = d.name.ends_with("rdy");
    if ty == "std_logic" {
        Some(if one { "'1'".into() } else { "'0'".into() })
    } else if ty.starts_with("std_logic_vector") || ty.starts_with("unsigned") || ty.starts_with("signed") {
        Some(format!("(others => {})", if one { "'1'" } else { "'0'" }))
    } else {
        None
    }
}

/// The wrapper's VHDL text.
pub fn generate(p: &Parts) -> Result<String, Unmappable> {
    // Port names that two of the three entities share are the connections
    // between them (sc_mem_out, sc_io_in, irq_in, ...): one signal each.
    let all = [p.cpu.1, p.io.1, p.mem.1];
    let mut count: HashMap<&str, usize> = HashMap::new();
    for e in all {
        for port in &e.ports {
            *count.entry(port.name.as_str()).or_default() += 1;
        }
    }
    let mut signals: Vec<(String, String)> = Vec::new();
    let mut internal = 0usize;
    let mut maps: Vec<Vec<String>> = Vec::new();
    for (k, e) in all.iter().enumerate() {
        let mut map = Vec::new();
        for port in &e.ports {
            let n = port.name.as_str();
            let contract = match k {
                2 => SRAM.iter().find(|(a, _)| *a == n).map(|(_, b)| *b),
                1 => UART.iter().find(|(a, _)| *a == n).map(|(_, b)| *b),
                _ => None,
            };
            let actual = if n == "clk" {
                "clk".to_string()
            } else if n == "reset" {
                "int_res".to_string()
            } else if let Some(c) = contract {
                c.to_string()
            } else if count[n] > 1 {
                if !signals.iter().any(|(s, _)| s == n) {
                    signals.push((n.to_string(), port.ty.clone()));
                }
                format!("s_{n}")
            } else if port.default.is_some() && port.mode == "in" {
                continue;
            } else if port.mode == "out" {
                "open".to_string()
            } else if port.mode == "inout" {
                // Left floating inside: the pins the board's I/O would use.
                internal += 1;
                let s = format!("unused_{internal}");
                signals.push((s.clone(), port.ty.clone()));
                format!("s_{s}")
            } else {
                constant_for(port).ok_or_else(|| Unmappable {
                    entity: e.name.clone(),
                    port: n.to_string(),
                    why: format!("an input of type {} that is not part of the contract", port.ty),
                })?
            };
            map.push(format!("{n} => {actual}"));
        }
        maps.push(map);
    }
    for (need, e) in [(&SRAM[..], p.mem.1), (&UART[..], p.io.1)] {
        for (port, _) in need {
            if !e.ports.iter().any(|d| d.name == *port) {
                return Err(Unmappable {
                    entity: e.name.clone(),
                    port: (*port).to_string(),
                    why: "missing: jopcal benches a 32-bit SRAM controller and a serial UART".into(),
                });
            }
        }
    }
    for port in ["ram_dout", "ram_din"] {
        let ty = p.mem.1.ports.iter().find(|d| d.name == port).map(|d| d.ty.clone());
        if ty.as_ref().map(|t| t.replace(' ', "").to_ascii_lowercase()).as_deref()
            != Some("std_logic_vector(31downto0)")
        {
            return Err(Unmappable {
                entity: p.mem.1.name.clone(),
                port: port.to_string(),
                why: format!(
                    "{} is not 32 bits: jopcal benches 32-bit SRAM controllers",
                    ty.unwrap_or_default()
                ),
            });
        }
    }
    let ty_of = |e: &Entity, n: &str| {
        e.ports
            .iter()
            .find(|d| d.name == n)
            .map(|d| d.ty.clone())
            .unwrap_or_default()
    };
    let mut v = String::new();
    let _ = writeln!(
        v,
        "-- Generated by jopcal (sim build --jop-home): the tree's processor, I/O and\n-- memory controller with the ports of jopcal's hdl-sim/CONTRACT.md.\nlibrary ieee;\nuse ieee.std_logic_1164.all;\nuse ieee.numeric_std.all;\nuse work.jop_types.all;\nuse work.sc_pack.all;\nuse work.jop_config.all;\n"
    );
    let _ = writeln!(v, "entity {TOP} is");
    if !p.top.generics.is_empty() {
        let g: Vec<String> = p
            .top
            .generics
            .iter()
            .map(|d| match &d.default {
                Some(x) => format!("    {} : {} := {}", d.name, d.ty, x),
                None => format!("    {} : {}", d.name, d.ty),
            })
            .collect();
        let _ = writeln!(v, "generic (\n{}\n);", g.join(";\n"));
    }
    let _ = writeln!(
        v,
        "port (\n    clk : in std_logic;\n    reset : in std_logic;\n    uart_txd : out std_logic;\n    uart_rxd : in std_logic;\n    sram_addr : out {};\n    sram_dout : out {};\n    sram_din : in {};\n    sram_ncs : out std_logic;\n    sram_noe : out std_logic;\n    sram_nwe : out std_logic\n);\nend {TOP};\n",
        ty_of(p.mem.1, "ram_addr"),
        ty_of(p.mem.1, "ram_dout"),
        ty_of(p.mem.1, "ram_din")
    );
    let _ = writeln!(
        v,
        "architecture jopcal of {TOP} is\n    signal int_res : std_logic := '1';"
    );
    for (n, ty) in &signals {
        let _ = writeln!(v, "    signal s_{n} : {ty};");
    }
    let _ = writeln!(
        v,
        "begin\n    -- The bench's reset (high for its first cycles), registered as the tree's\n    -- tops register their power-on reset.\n    process(clk) begin\n        if rising_edge(clk) then\n            int_res <= reset;\n        end if;\n    end process;\n"
    );
    for (k, (inst, e)) in [p.cpu, p.io, p.mem].iter().enumerate() {
        let _ = write!(v, "    {}: entity work.{}", inst.label, e.name);
        if let Some(g) = &inst.generic_map {
            let _ = write!(v, "\n        generic map ({g})");
        }
        let _ = writeln!(
            v,
            "\n        port map (\n            {}\n        );\n",
            maps[k].join(",\n            ")
        );
    }
    let _ = writeln!(v, "end jopcal;");
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jop::vhdl::{entity, instances, strip_comments};

    const FILES: &str = "entity jop is generic (ram_cnt : integer := 2; jpc_width : integer := 12); port (clk : in std_logic); end jop;
architecture a of jop is begin
 cpu: entity work.jopcpu generic map (jpc_width => jpc_width) port map (clk);
 io: entity work.scio port map (clk);
 scm: entity work.sc_mem_if generic map (ram_ws => ram_cnt-1) port map (clk);
end a;
entity jopcpu is generic (jpc_width : integer); port (clk, reset : in std_logic; sc_mem_out : out sc_out_type; sc_mem_in : in sc_in_type; sc_io_out : out sc_out_type; sc_io_in : in sc_in_type); end jopcpu;
entity scio is port (clk, reset : in std_logic; sc_io_out : in sc_out_type; sc_io_in : out sc_in_type; sync_out : in sync_out_type := NO_SYNC; txd : out std_logic; rxd, ncts : in std_logic; wd : out std_logic; l : inout std_logic_vector(20 downto 1)); end scio;
entity sc_mem_if is generic (ram_ws : integer); port (clk, reset : in std_logic; sc_mem_out : in sc_out_type; sc_mem_in : out sc_in_type; ram_addr : out std_logic_vector(17 downto 0); ram_dout : out std_logic_vector(31 downto 0); ram_din : in std_logic_vector(31 downto 0); ram_dout_en, ram_ncs, ram_noe, ram_nwe : out std_logic; fl_rdy : in std_logic); end sc_mem_if;";

    #[test]
    fn wires_the_trees_parts_to_the_contract() {
        let t = strip_comments(FILES);
        let top = entity(&t, "jop").unwrap().unwrap();
        let ents: Vec<Entity> = ["jopcpu", "scio", "sc_mem_if"]
            .iter()
            .map(|n| entity(&t, n).unwrap().unwrap())
            .collect();
        let insts: Vec<Instance> = ["jopcpu", "scio", "sc_mem_if"]
            .iter()
            .map(|n| instances(&t, n).remove(0))
            .collect();
        let parts = Parts {
            top: &top,
            cpu: (&insts[0], &ents[0]),
            io: (&insts[1], &ents[1]),
            mem: (&insts[2], &ents[2]),
        };
        let v = generate(&parts).unwrap();
        for want in [
            "ram_cnt : integer := 2",
            "sram_addr : out std_logic_vector(17 downto 0)",
            "signal s_sc_mem_out : sc_out_type;",
            "generic map (ram_ws => ram_cnt-1)",
            "ram_din => sram_din",
            "ram_dout_en => open",
            "fl_rdy => '1'",
            "ncts => '0'",
            "txd => uart_txd",
            "l => s_unused_1",
            "reset => int_res",
        ] {
            assert!(v.contains(want), "{want} not in\n{v}");
        }
        assert!(!v.contains("sync_out =>"), "{v}");
        let mut no_din = ents[2].clone();
        no_din.ports.retain(|d| d.name != "ram_din");
        let parts = Parts {
            mem: (&insts[2], &no_din),
            ..parts
        };
        let e = generate(&parts).unwrap_err();
        assert_eq!((e.entity.as_str(), e.port.as_str()), ("sc_mem_if", "ram_din"));
    }
}
