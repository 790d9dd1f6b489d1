//! The top module's ports, from `verilator --xml-only`, and the contract check.

use crate::error::ContractError;

/// A port of the top module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Port {
    pub name: String,
    pub input: bool,
    pub width: u32,
}

fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    let end = tag[start..].find('"')? + start;
    Some(&tag[start..end])
}

/// The top module's ports: `<var ... pinIndex=...>` elements of the module
/// marked `topModule`, with widths from their `<basicdtype>`.
pub fn parse_ports(xml: &str) -> Result<Vec<Port>, ContractError> {
    let mut widths = std::collections::HashMap::new();
    for tag in xml.split('<').filter(|t| t.starts_with("basicdtype ")) {
        if let Some(id) = attr(tag, "id") {
            let w = match (attr(tag, "left"), attr(tag, "right")) {
                (Some(l), Some(r)) => {
                    let (l, r): (i64, i64) = (l.parse().unwrap_or(0), r.parse().unwrap_or(0));
                    (l - r).unsigned_abs() as u32 + 1
                }
                _ => 1,
            };
            widths.insert(id.to_string(), w);
        }
    }
    let top = xml.find("topModule=\"1\"").ok_or(ContractError::NoTopModule)?;
    let body_end = xml[top..].find("</module>").map_or(xml.len(), |e| top + e);
    let mut ports = Vec::new();
    for tag in xml[top..body_end].split('<').filter(|t| t.starts_with("var ")) {
        if attr(tag, "pinIndex").is_none() {
            continue;
        }
        let (Some(name), Some(dir)) = (attr(tag, "name"), attr(tag, "dir")) else {
            continue;
        };
        let width = attr(tag, "dtype_id").and_then(|d| widths.get(d)).copied().unwrap_or(1);
        ports.push(Port {
            name: name.to_string(),
            input: dir == "input",
            width,
        });
    }
    Ok(ports)
}

/// How the DUT's UART is wired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UartStyle {
    Char,
    Serial,
}

/// How the DUT reaches its memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryStyle {
    /// Request/ready: the bench adds the wait states (`mem_*`).
    Port,
    /// The pins of an asynchronous SRAM chip behind the DUT's own controller,
    /// whose generics set the wait states (`sram_*`).
    Sram { byte_enables: bool },
}

/// What the DUT offers, as the bench needs to know.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Contract {
    /// The memory's address width, if it has one.
    pub memory: Option<u32>,
    pub memory_style: MemoryStyle,
    pub uart: UartStyle,
    pub cycle_count: bool,
    pub halt: bool,
    /// The trace taps, if the DUT has them (all or none).
    pub trace: Option<TraceTaps>,
    /// `stack_overflow`: the run ends when it rises.
    pub stack_overflow: bool,
}

/// The widths of the trace taps whose width the DUT decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceTaps {
    /// `trace_bc_pc`: the bytecode's byte address in the method cache.
    pub pc: u32,
    /// `trace_mc_addr`: a method's code address in memory, in words.
    pub addr: u32,
    /// `trace_mc_start`: where a method starts in the cache, in words.
    pub start: u32,
    /// `trace_uart_data`: the low 8 bits are the byte written.
    pub uart_data: u32,
}

/// The trace taps: name, and the width the contract fixes (`None`: the DUT's).
pub const TRACE_TAPS: [(&str, Option<u32>); 11] = [
    ("trace_bc_fetch", Some(1)),
    ("trace_bc", Some(8)),
    ("trace_bc_pc", None),
    ("trace_exc", Some(1)),
    ("trace_tos", Some(32)),
    ("trace_mc_find", Some(1)),
    ("trace_mc_addr", None),
    ("trace_mc_hit", Some(1)),
    ("trace_mc_start", None),
    ("trace_uart_wr", Some(1)),
    ("trace_uart_data", None),
];

/// Checks `ports` against hdl-sim/CONTRACT.md; an error names the port.
pub fn check_contract(ports: &[Port], top: &str) -> Result<Contract, ContractError> {
    let find = |n: &str| ports.iter().find(|p| p.name == n);
    let need = |n: &str, input: bool, width: Option<u32>| -> Result<u32, ContractError> {
        let p = find(n).ok_or_else(|| ContractError::MissingPort {
            top: top.to_string(),
            port: n.to_string(),
            input,
            width,
        })?;
        if p.input != input {
            return Err(ContractError::WrongDirection {
                top: top.to_string(),
                port: n.to_string(),
                input,
            });
        }
        if let Some(w) = width {
            if p.width != w {
                return Err(ContractError::WrongWidth {
                    top: top.to_string(),
                    port: n.to_string(),
                    expected: w,
                    actual: p.width,
                });
            }
        }
        Ok(p.width)
    };
    need("clk", true, Some(1))?;
    need("reset", true, Some(1))?;
    let port_style = find("mem_addr").is_some() || find("mem_rd").is_some();
    let sram_style = find("sram_addr").is_some() || find("sram_ncs").is_some();
    if port_style && sram_style {
        return Err(ContractError::TwoMemories { top: top.to_string() });
    }
    // The address port and the widest address the bench's memory can have.
    let address = |name: &str, max: u32| -> Result<u32, ContractError> {
        let w = need(name, false, None)?;
        if w > max {
            return Err(ContractError::AddressTooWide {
                top: top.to_string(),
                width: w,
            });
        }
        Ok(w)
    };
    let mut memory_style = MemoryStyle::Port;
    let memory = if port_style {
        let w = address("mem_addr", 32)?;
        need("mem_rd", false, Some(1))?;
        need("mem_wr", false, Some(1))?;
        need("mem_wdata", false, Some(32))?;
        need("mem_rdata", true, Some(32))?;
        need("mem_ready", true, Some(1))?;
        Some(w)
    } else if sram_style {
        let w = address("sram_addr", 28)?;
        need("sram_dout", false, Some(32))?;
        need("sram_din", true, Some(32))?;
        need("sram_ncs", false, Some(1))?;
        need("sram_noe", false, Some(1))?;
        need("sram_nwe", false, Some(1))?;
        let byte_enables = find("sram_nbe").is_some();
        if byte_enables {
            need("sram_nbe", false, Some(4))?;
        }
        memory_style = MemoryStyle::Sram { byte_enables };
        Some(w)
    } else {
        None
    };
    let uart = if find("uart_txd").is_some() || find("uart_rxd").is_some() {
        need("uart_txd", false, Some(1))?;
        need("uart_rxd", true, Some(1))?;
        UartStyle::Serial
    } else {
        need("uart_tx_valid", false, Some(1))?;
        need("uart_tx_data", false, Some(8))?;
        need("uart_tx_ready", true, Some(1))?;
        need("uart_rx_valid", true, Some(1))?;
        need("uart_rx_data", true, Some(8))?;
        need("uart_rx_ready", false, Some(1))?;
        UartStyle::Char
    };
    let cycle_count = find("cycle_count").is_some();
    if cycle_count {
        need("cycle_count", false, Some(32))?;
    }
    let halt = find("halt").is_some();
    if halt {
        need("halt", false, Some(1))?;
    }
    let trace = if TRACE_TAPS.iter().any(|(n, _)| find(n).is_some()) {
        let mut w = std::collections::HashMap::new();
        for (n, width) in TRACE_TAPS {
            w.insert(n, need(n, false, width)?);
        }
        let narrow = |n: &str, max: u32| -> Result<u32, ContractError> {
            if w[n] > max {
                return Err(ContractError::WrongWidth {
                    top: top.to_string(),
                    port: n.to_string(),
                    expected: max,
                    actual: w[n],
                });
            }
            Ok(w[n])
        };
        Some(TraceTaps {
            pc: narrow("trace_bc_pc", 16)?,
            addr: narrow("trace_mc_addr", 32)?,
            start: narrow("trace_mc_start", 14)?,
            uart_data: {
                let d = w["trace_uart_data"];
                if d < 8 {
                    return Err(ContractError::WrongWidth {
                        top: top.to_string(),
                        port: "trace_uart_data".into(),
                        expected: 8,
                        actual: d,
                    });
                }
                d
            },
        })
    } else {
        None
    };
    let stack_overflow = find("stack_overflow").is_some();
    if stack_overflow {
        need("stack_overflow", false, Some(1))?;
    }
    Ok(Contract {
        memory,
        memory_style,
        uart,
        cycle_count,
        halt,
        trace,
        stack_overflow,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const XML: &str = r#"<module name="t" topModule="1">
      <var name="clk" dtype_id="1" dir="input" pinIndex="1"/>
      <var name="reset" dtype_id="1" dir="input" pinIndex="2"/>
      <var name="uart_txd" dtype_id="1" dir="output" pinIndex="3"/>
      <var name="uart_rxd" dtype_id="1" dir="input" pinIndex="4"/>
      <var name="cycle_count" dtype_id="3" dir="output" pinIndex="5"/>
      <var name="tmp" dtype_id="3" dir="output"/>
    </module>
    <basicdtype id="1" name="logic"/><basicdtype id="3" name="logic" left="31" right="0"/>"#;

    #[test]
    fn reads_ports_and_checks_the_contract() {
        let p = parse_ports(XML).unwrap();
        assert_eq!(p.len(), 5);
        assert_eq!(
            p[4],
            Port {
                name: "cycle_count".into(),
                input: false,
                width: 32
            }
        );
        let c = check_contract(&p, "t").unwrap();
        assert_eq!(
            c,
            Contract {
                memory: None,
                memory_style: MemoryStyle::Port,
                uart: UartStyle::Serial,
                cycle_count: true,
                halt: false,
                trace: None,
                stack_overflow: false,
            }
        );
        let no_reset: Vec<Port> = p.iter().filter(|x| x.name != "reset").cloned().collect();
        assert_eq!(
            check_contract(&no_reset, "t").unwrap_err().to_string(),
            "top module t lacks port `reset` (input 1 bit; see hdl-sim/CONTRACT.md)"
        );
        let no_uart: Vec<Port> = p.iter().filter(|x| !x.name.starts_with("uart")).cloned().collect();
        let pin = |n: &str, input: bool, width: u32| Port {
            name: n.into(),
            input,
            width,
        };
        let mut sram = p.clone();
        sram.extend([
            pin("sram_addr", false, 18),
            pin("sram_dout", false, 32),
            pin("sram_din", true, 32),
            pin("sram_ncs", false, 1),
            pin("sram_noe", false, 1),
            pin("sram_nwe", false, 1),
        ]);
        let c = check_contract(&sram, "t").unwrap();
        assert_eq!(
            (c.memory, c.memory_style),
            (Some(18), MemoryStyle::Sram { byte_enables: false })
        );
        let no_we: Vec<Port> = sram.iter().filter(|x| x.name != "sram_nwe").cloned().collect();
        assert!(check_contract(&no_we, "t")
            .unwrap_err()
            .to_string()
            .contains("lacks port `sram_nwe`"));
        sram.push(pin("mem_rd", false, 1));
        assert!(check_contract(&sram, "t").unwrap_err().to_string().contains("both"));
        let mut tapped = p.clone();
        for (n, w) in TRACE_TAPS {
            tapped.push(pin(n, false, w.unwrap_or(12)));
        }
        tapped.push(pin("stack_overflow", false, 1));
        let c = check_contract(&tapped, "t").unwrap();
        assert_eq!(
            c.trace,
            Some(TraceTaps {
                pc: 12,
                addr: 12,
                start: 12,
                uart_data: 12
            })
        );
        assert!(c.stack_overflow);
        let one_short: Vec<Port> = tapped.iter().filter(|x| x.name != "trace_mc_hit").cloned().collect();
        assert!(check_contract(&one_short, "t")
            .unwrap_err()
            .to_string()
            .contains("lacks port `trace_mc_hit`"));
        assert!(check_contract(&no_uart, "t")
            .unwrap_err()
            .to_string()
            .contains("lacks port `uart_tx_valid`"));
    }
}
