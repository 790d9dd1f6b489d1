//! The trace taps of a converted JOP: output ports added to the Verilog of
//! jopcal's wrapper (`jopcal_jop`) that show what the processor does inside,
//! without changing it. Each tap is a hierarchical reference into the
//! instance that holds the signal (Verilator resolves them), found by
//! walking the converted design's instances from the wrapper down:
//!
//! - the bytecode fetch (`bcfetch`): `jfetch` high in the cycle a bytecode
//!   is fetched, `jbc_q` its opcode, `jpc` its byte address in the method
//!   cache, `exc_pend` an exception taken instead of it;
//! - the stack (`stack`): `a`, the top of the operand stack;
//! - the method cache (`mcache`): `find` starts a lookup of the method at
//!   `bc_addr` (its code's word address in memory), `in_cache` and `bcstart`
//!   hold the result (hit, and where the method starts in the cache, in
//!   words) from the next bytecode fetch on;
//! - the UART (`sc_uart`): `ua_wr` high in the cycle the processor writes
//!   the byte in the low 8 bits of `wr_data` to its transmit FIFO;
//! - the cycle counter (`sc_sys`'s `clock_cnt`), the contract's `cycle_count`;
//! - the stack (`jopcpu`'s `sp_ov`): high from the cycle the stack pointer
//!   reaches the processor's overflow mark.
//!
//! The bench (hdl-sim/bench) turns them into per-method cycles and a
//! per-bytecode event stream (hdl-sim/CONTRACT.md, "trace taps").

use std::collections::HashMap;

/// One tap: the contract's port name, where it comes from (the module the
/// signal lives in, by the prefix GHDL gives its specialised name, and the
/// signal), and the width the contract needs (`None`: whatever it is).
struct Tap {
    port: &'static str,
    module: &'static str,
    signal: &'static str,
    width: Option<u32>,
}

const TAPS: [Tap; 13] = [
    Tap {
        port: "trace_bc_fetch",
        module: "bcfetch",
        signal: "jfetch",
        width: Some(1),
    },
    Tap {
        port: "trace_bc",
        module: "bcfetch",
        signal: "jbc_q",
        width: Some(8),
    },
    Tap {
        port: "trace_bc_pc",
        module: "bcfetch",
        signal: "jpc",
        width: None,
    },
    Tap {
        port: "trace_exc",
        module: "bcfetch",
        signal: "exc_pend",
        width: Some(1),
    },
    Tap {
        port: "trace_tos",
        module: "stack",
        signal: "a",
        width: Some(32),
    },
    Tap {
        port: "trace_mc_find",
        module: "mcache",
        signal: "find",
        width: Some(1),
    },
    Tap {
        port: "trace_mc_addr",
        module: "mcache",
        signal: "bc_addr",
        width: None,
    },
    Tap {
        port: "trace_mc_hit",
        module: "mcache",
        signal: "in_cache",
        width: Some(1),
    },
    Tap {
        port: "trace_mc_start",
        module: "mcache",
        signal: "bcstart",
        width: None,
    },
    Tap {
        port: "trace_uart_wr",
        module: "sc_uart",
        signal: "ua_wr",
        width: Some(1),
    },
    Tap {
        port: "trace_uart_data",
        module: "sc_uart",
        signal: "wr_data",
        width: None,
    },
    Tap {
        port: "cycle_count",
        module: "sc_sys",
        signal: "clock_cnt",
        width: Some(32),
    },
    Tap {
        port: "stack_overflow",
        module: "jopcpu",
        signal: "sp_ov",
        width: Some(1),
    },
];

/// Why the taps could not be added: the module or signal that is missing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("trace tap `{port}`: {why}")]
pub struct TapError {
    pub port: &'static str,
    pub why: String,
}

/// A module of the converted design: its instances (module, label) and the
/// width of each net it declares.
#[derive(Debug, Default)]
pub(crate) struct Module {
    instances: Vec<(String, String)>,
    pub(crate) nets: HashMap<String, u32>,
}

fn width_of(decl: &str) -> u32 {
    // `[12:0] name` or `name`.
    decl.strip_prefix('[')
        .and_then(|r| r.split_once(']'))
        .and_then(|(range, _)| {
            let (l, r) = range.split_once(':')?;
            let (l, r): (i64, i64) = (l.trim().parse().ok()?, r.trim().parse().ok()?);
            Some((l - r).unsigned_abs() as u32 + 1)
        })
        .unwrap_or(1)
}

/// The modules of GHDL's Verilog, by name.
pub(crate) fn modules(verilog: &str) -> HashMap<String, Module> {
    let mut out: HashMap<String, Module> = HashMap::new();
    let mut current: Option<String> = None;
    for line in verilog.lines() {
        if let Some(name) = line.strip_prefix("module ") {
            let name = name.trim().to_string();
            out.entry(name.clone()).or_default();
            current = Some(name);
            continue;
        }
        let Some(m) = current.as_ref().and_then(|c| out.get_mut(c)) else {
            continue;
        };
        let t = line.trim_start();
        let t = t.strip_prefix('(').unwrap_or(t);
        if line.starts_with("endmodule") {
            current = None;
        } else if let Some(rest) = ["input ", "output ", "wire ", "reg "]
            .iter()
            .find_map(|k| t.strip_prefix(k))
        {
            let decl = rest.trim().trim_end_matches([';', ',', ')']).trim();
            let name = decl.rsplit(' ').next().unwrap_or("").to_string();
            m.nets.insert(name, width_of(decl));
        } else if line.starts_with("  ") && !line.starts_with("   ") && t.ends_with(" (") {
            // `  <module> <label> (`: an instance.
            let mut w = t.trim_end_matches(" (").split_whitespace();
            if let (Some(module), Some(label), None) = (w.next(), w.next(), w.next()) {
                if !matches!(module, "assign" | "always" | "if" | "case" | "initial") {
                    m.instances.push((module.to_string(), label.to_string()));
                }
            }
        }
    }
    out
}

/// The dotted path from `top` to the single instance of a module whose
/// name is `prefix` or starts with `prefix_`, and that module's name.
fn find_instance(mods: &HashMap<String, Module>, top: &str, prefix: &str) -> Result<(String, String), String> {
    let is = |m: &str| m == prefix || m.starts_with(&format!("{prefix}_"));
    let mut found = Vec::new();
    let mut todo = vec![(top.to_string(), String::new())];
    while let Some((module, path)) = todo.pop() {
        let Some(m) = mods.get(&module) else { continue };
        for (sub, label) in &m.instances {
            let p = if path.is_empty() {
                label.clone()
            } else {
                format!("{path}.{label}")
            };
            if is(sub) {
                found.push((p.clone(), sub.clone()));
            }
            todo.push((sub.clone(), p));
        }
    }
    match found.len() {
        1 => Ok(found.remove(0)),
        0 => Err(format!("the design has no instance of {prefix}")),
        n => Err(format!(
            "the design has {n} instances of {prefix} (one processor expected)"
        )),
    }
}

/// A tap's output port and its width in bits.
pub type TapPort = (&'static str, u32);

/// Adds the taps as output ports of module `top` in `verilog`. Returns the
/// new text and each tap's port with its width.
pub fn add_taps(verilog: &str, top: &str) -> Result<(String, Vec<TapPort>), TapError> {
    let mods = modules(verilog);
    let mut ports = Vec::new();
    let mut assigns = Vec::new();
    for tap in &TAPS {
        let err = |why: String| TapError { port: tap.port, why };
        let (path, module) = find_instance(&mods, top, tap.module).map_err(err)?;
        let w = *mods[&module]
            .nets
            .get(tap.signal)
            .ok_or_else(|| err(format!("module {module} (instance {path}) has no net `{}`", tap.signal)))?;
        if let Some(want) = tap.width {
            if w != want {
                return Err(err(format!(
                    "`{}` of {module} is {w} bits wide, the tap needs {want}",
                    tap.signal
                )));
            }
        }
        ports.push((tap.port, w));
        assigns.push(format!("  assign {} = {path}.{};", tap.port, tap.signal));
    }
    // The port list ends at the first `);` after `module <top>`.
    let head = format!("module {top}\n");
    let start = verilog.find(&head).ok_or_else(|| TapError {
        port: TAPS[0].port,
        why: format!("no module {top} in the Verilog"),
    })?;
    let close = verilog[start..].find(");").map(|i| start + i).ok_or_else(|| TapError {
        port: TAPS[0].port,
        why: format!("module {top} has no port list"),
    })?;
    let end = verilog[start..]
        .find("\nendmodule")
        .map(|i| start + i + 1)
        .ok_or_else(|| TapError {
            port: TAPS[0].port,
            why: format!("module {top} has no endmodule"),
        })?;
    let decls: String = ports
        .iter()
        .map(|(p, w)| {
            if *w == 1 {
                format!(",\n   output {p}")
            } else {
                format!(",\n   output [{}:0] {p}", w - 1)
            }
        })
        .collect();
    let mut out = String::with_capacity(verilog.len() + 1024);
    out.push_str(&verilog[..close]);
    out.push_str(&decls);
    out.push_str(&verilog[close..end]);
    out.push_str("  // jopcal's trace taps (hdl-sim/CONTRACT.md)\n");
    for a in &assigns {
        out.push_str(a);
        out.push('\n');
    }
    out.push_str(&verilog[end..]);
    Ok((out, ports))
}

#[cfg(test)]
mod tests {
    use super::*;

    const V: &str = "module bcfetch_12_11
  (input  clk,
   input  jfetch,
   output [12:0] jpc_out);
  wire [7:0] jbc_q;
  wire [12:0] jpc;
  wire exc_pend;
endmodule

module mcache_12_4_18
  (input  clk,
   input  [17:0] bc_addr,
   input  find,
   output [9:0] bcstart,
   output in_cache);
endmodule

module stack_32_8
  (input  clk);
  wire [31:0] a;
endmodule

module core_1
  (input  clk);
  bcfetch_12_11 bcf (
    .clk(clk));
  stack_32_8 stk (
    .clk(clk));
endmodule

module mem_sc_1
  (input  clk);
  mcache_12_4_18 mc (
    .clk(clk));
endmodule

module sc_uart_4_1
  (input  clk,
   input  [31:0] wr_data);
  wire ua_wr;
endmodule

module sc_sys_4_1
  (input  clk);
  wire [31:0] clock_cnt;
endmodule

module scio_1
  (input  clk);
  sc_sys_4_1 sys (
    .clk(clk));
  sc_uart_4_1 ua (
    .clk(clk));
endmodule

module jopcpu_12_4_0
  (input  clk);
  wire sp_ov;
  core_1 core (
    .clk(clk));
  mem_sc_1 mem (
    .clk(clk));
endmodule

module jopcal_jop
  (input  clk,
   output uart_txd);
  jopcpu_12_4_0 cpu (
    .clk(clk));
  scio_1 io (
    .clk(clk));
endmodule
";

    #[test]
    fn taps_reach_into_the_instances_that_hold_the_signals() {
        let (v, ports) = add_taps(V, "jopcal_jop").unwrap();
        assert!(v.contains("   output uart_txd,\n   output trace_bc_fetch,\n   output [7:0] trace_bc,\n   output [12:0] trace_bc_pc"), "{v}");
        assert!(v.contains("  assign trace_bc_fetch = cpu.core.bcf.jfetch;\n"), "{v}");
        assert!(v.contains("  assign trace_mc_start = cpu.mem.mc.bcstart;\n"), "{v}");
        assert!(v.contains("  assign trace_uart_data = io.ua.wr_data;\n"), "{v}");
        assert!(v.contains("  assign stack_overflow = cpu.sp_ov;\nendmodule"), "{v}");
        assert_eq!(ports[6], ("trace_mc_addr", 18));
        // The modules before the wrapper are untouched.
        assert!(v.starts_with(&V[..V.find("module jopcal_jop").unwrap()]));
    }

    #[test]
    fn a_missing_signal_or_instance_is_named() {
        let no_exc = V.replace("  wire exc_pend;\n", "");
        let e = add_taps(&no_exc, "jopcal_jop").unwrap_err();
        assert_eq!(
            e.to_string(),
            "trace tap `trace_exc`: module bcfetch_12_11 (instance cpu.core.bcf) has no net `exc_pend`"
        );
        let no_cache = V.replace("  mcache_12_4_18 mc (", "  other mc (");
        let e = add_taps(&no_cache, "jopcal_jop").unwrap_err();
        assert_eq!(
            e.to_string(),
            "trace tap `trace_mc_find`: the design has no instance of mcache"
        );
        let wide = V.replace("wire [7:0] jbc_q", "wire [8:0] jbc_q");
        assert!(add_taps(&wide, "jopcal_jop")
            .unwrap_err()
            .to_string()
            .contains("9 bits wide"));
    }
}
