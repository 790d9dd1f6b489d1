//! Rewrites of GHDL's Verilog that make the Verilated JOP faster without
//! changing a value it computes, cycle for cycle.
//!
//! Each rewrite applies only where the netlist itself shows that it is
//! exact; elsewhere the netlist stays as GHDL wrote it. What each gained on
//! jop-devel/jop is in `docs/notes/jop-tree.md`, section 12.

use regex::Regex;
use std::collections::{HashMap, HashSet};

/// What [`one_hot_cases`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct OneHotRewrite {
    /// Case statements now tests of their selector's bits.
    pub rewritten: usize,
    /// One-hot case statements left as they were (their selector's bits
    /// could not be shown to exclude each other).
    pub left: usize,
}

/// GHDL writes a VHDL `case` as a parallel multiplexer: a selector of one
/// bit per choice (`assign s = {c2, c1, c0}`, each bit `x == <choice>`) and
/// `case (s)` over the one-hot constants. Verilator evaluates that as one
/// comparison of the whole selector per item: JOP's jump table
/// (`jtbl.vhd`, one choice per bytecode) is a 185-bit selector compared
/// 185 times on every clock. Where every selector bit is a comparison of
/// the same expression with a constant (or an `|` of such comparisons) and
/// no constant appears twice, at most one bit is ever set, and the case
/// becomes an `if`/`else if` chain on the bits themselves, in the same
/// order, with the default (if any) as the last `else`: the same value in
/// every state.
pub fn one_hot_cases(verilog: &str) -> (String, OneHotRewrite) {
    let case = Regex::new(r"(?s)always @\*\n(\s*)case \((\w+)\)\n(.*?)\n\s*endcase").expect("pattern");
    let assign = Regex::new(r"(?m)^\s*assign (\w+) = (.*);").expect("pattern");
    let item = Regex::new(r"^\s*(\d+)'b([01]+):\s*(\w+)\s*<=\s*(.+);$").expect("pattern");
    let default = Regex::new(r"^\s*default:\s*(\w+)\s*<=\s*(.+?);(\s*//.*)?$").expect("pattern");
    let compare = Regex::new(r"^(\S+) == (\d+'b[01]+)$").expect("pattern");
    let mut out = String::with_capacity(verilog.len());
    let mut done = OneHotRewrite::default();
    for module in crate::jop::fixes::split_modules(verilog) {
        let assigns: HashMap<&str, &str> = assign
            .captures_iter(module)
            .map(|c| (c.get(1).map_or("", |m| m.as_str()), c.get(2).map_or("", |m| m.as_str())))
            .collect();
        let fixed = case.replace_all(module, |c: &regex::Captures| {
            let indent = &c[1];
            let mut items = Vec::new();
            let mut tail = None;
            for l in c[3].lines() {
                if let Some(i) = item.captures(l) {
                    items.push((i[2].to_string(), i[3].to_string(), i[4].to_string()));
                } else if let Some(d) = default.captures(l) {
                    tail = Some((d[1].to_string(), d[2].to_string()));
                } else {
                    return c[0].to_string();
                }
            }
            // Only one-hot items: a binary-coded case (`2'b01`, `2'b11`) stays.
            if items.is_empty() || items.iter().any(|(bits, _, _)| bits.matches('1').count() != 1) {
                return c[0].to_string();
            }
            let Some(bits) = exclusive_bits(&c[2], &assigns, &compare) else {
                done.left += 1;
                return c[0].to_string();
            };
            let net = &items[0].1;
            let mut seen = HashSet::new();
            let mut chain = String::new();
            for (k, (pattern, to, value)) in items.iter().enumerate() {
                let at = pattern.find('1').unwrap_or(0);
                if pattern.len() != bits.len() || to != net || !seen.insert(at) {
                    done.left += 1;
                    return c[0].to_string();
                }
                let word = if k == 0 { "if" } else { "else if" };
                chain.push_str(&format!("{indent}{word} ({}) {net} <= {value};\n", bits[at]));
            }
            match &tail {
                Some((to, value)) if to == net => chain.push_str(&format!("{indent}else {net} <= {value};\n")),
                Some(_) => {
                    done.left += 1;
                    return c[0].to_string();
                }
                None => {}
            }
            done.rewritten += 1;
            format!(
                "always @* // jopcal: a one-hot case as tests of its bits\n{}",
                chain.trim_end_matches('\n')
            )
        });
        out.push_str(&fixed);
        out.push('\n');
    }
    (out, done)
}

/// The selector's bits, most significant first, if the netlist shows that
/// at most one of them is ever set: each is `x == <constant>` or an `|` of
/// such nets, with one `x` throughout and no constant twice (`compare`
/// reads `x == <constant>`).
fn exclusive_bits(selector: &str, assigns: &HashMap<&str, &str>, compare: &Regex) -> Option<Vec<String>> {
    let expr = assigns.get(selector)?.trim();
    let parts: Vec<String> = match expr.strip_prefix('{').and_then(|e| e.strip_suffix('}')) {
        Some(list) => list.split(',').map(|p| p.trim().to_string()).collect(),
        None => vec![expr.to_string()],
    };
    let mut subject: Option<&str> = None;
    let mut constants = HashSet::new();
    for p in &parts {
        if !p.chars().all(crate::jop::fixes::is_ident_char) {
            return None;
        }
        let bit = assigns.get(p.as_str())?.trim();
        let terms: Vec<&str> = if bit.contains(" | ") {
            bit.split(" | ")
                .map(|t| assigns.get(t.trim()).copied())
                .collect::<Option<_>>()?
        } else {
            vec![bit]
        };
        for t in terms {
            let m = compare.captures(t.trim())?;
            let x = m.get(1)?.as_str();
            if *subject.get_or_insert(x) != x || !constants.insert(m.get(2)?.as_str()) {
                return None;
            }
        }
    }
    Some(parts)
}

/// jopcal's own Verilog for one of the tree's entities, put in place of
/// GHDL's netlist of it. GHDL gives an array of registers searched in
/// parallel (the method cache's tags) as one wide vector rebuilt bit by bit
/// on every clock; the stand-in keeps it an array. A stand-in is written
/// from one text of the entity and used only where the tree's file is that
/// text (comments, spacing and case aside: [`vhdl_fingerprint`]); any other
/// text, a change to the cache included, gets GHDL's netlist, which is
/// slower but is the tree's VHDL whatever it says. Its sizes are read from
/// GHDL's module (its ports and its named signals), so other generics or
/// configuration constants get a stand-in of their sizes.
struct StandIn {
    entity: &'static str,
    /// [`vhdl_fingerprint`] of the file it was written from (jop-devel/jop 2f038c03d58a).
    fingerprint: &'static str,
    /// The stand-in's text for GHDL's module `name`, from the widths of its
    /// ports and named signals; `None` where they do not add up.
    write: fn(&str, &Nets) -> Option<String>,
}

/// A GHDL module's nets (ports and named signals) by name, with their widths.
type Nets = HashMap<String, u32>;

const STAND_INS: &[StandIn] = &[
    StandIn {
        entity: "mcache",
        fingerprint: "fd4739e547a1b29ba9eacdb39c8b050f4734076778c730ad6bc640deb2c46e28",
        write: method_cache,
    },
    StandIn {
        entity: "oc_tag",
        fingerprint: "e201cd2966659d2dd293851c795352ecb0216c8b3d2dc6894b9e8550405d8573",
        write: object_cache_tags,
    },
];

/// A VHDL file's text as a stand-in compares it: comments removed, runs of
/// white space made one space, ASCII letters in lower case (VHDL ignores
/// case), hashed with SHA-256.
pub fn vhdl_fingerprint(text: &str) -> String {
    use sha2::{Digest, Sha256};
    let stripped = crate::jop::vhdl::strip_comments(text);
    let words: Vec<&str> = stripped.split_whitespace().collect();
    let norm: Vec<u8> = words.join(" ").chars().map(|c| c.to_ascii_lowercase() as u8).collect();
    format!("{:x}", Sha256::digest(&norm))
}

/// Whether a stand-in took an entity's place, and why not if it did not.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandInUse {
    pub entity: &'static str,
    /// The GHDL modules replaced (`mcache_12_4_18`); empty if none.
    pub modules: Vec<String>,
    /// Why GHDL's netlist was kept.
    pub kept_because: Option<String>,
}

/// Puts the stand-ins in place of GHDL's modules where the tree's VHDL
/// (`sources`: each project file's text) declares the entity in the text
/// the stand-in was written from.
pub fn stand_ins<'a>(verilog: &str, sources: impl Iterator<Item = &'a str> + Clone) -> (String, Vec<StandInUse>) {
    put_in_place(verilog, sources, STAND_INS)
}

fn put_in_place<'a>(
    verilog: &str,
    sources: impl Iterator<Item = &'a str> + Clone,
    table: &[StandIn],
) -> (String, Vec<StandInUse>) {
    let mut out = verilog.to_string();
    let mut uses = Vec::new();
    // Each stand-in replaces only modules of its own entity: one reading serves all.
    let modules = crate::jop::taps::modules(verilog);
    for s in table {
        let mut used = StandInUse {
            entity: s.entity,
            modules: Vec::new(),
            kept_because: None,
        };
        let declares = |t: &str| {
            // A declaration that does not read is a declaration all the same.
            !matches!(
                crate::jop::vhdl::entity(&crate::jop::vhdl::strip_comments(t), s.entity),
                Ok(None)
            )
        };
        let Some(file) = sources.clone().find(|t| declares(t)) else {
            continue;
        };
        if vhdl_fingerprint(file) != s.fingerprint {
            used.kept_because = Some("its VHDL is not the text the stand-in was written from".into());
            uses.push(used);
            continue;
        }
        let mut next = String::with_capacity(out.len());
        for module in crate::jop::fixes::split_modules(&out) {
            let name = module
                .strip_prefix("module ")
                .and_then(|m| m.split_whitespace().next())
                .unwrap_or("");
            let generated = name == s.entity
                || name
                    .strip_prefix(s.entity)
                    .and_then(|r| r.strip_prefix('_'))
                    .is_some_and(|r| r.chars().all(|c| c.is_ascii_digit() || c == '_'));
            let nets = modules.get(name).map(|m| &m.nets);
            match generated.then(|| nets.and_then(|n| (s.write)(name, n))) {
                Some(Some(text)) => {
                    next.push_str(&text);
                    used.modules.push(name.to_string());
                }
                Some(None) => {
                    used.kept_because.get_or_insert(format!(
                        "GHDL's module {name} is not of the shape the stand-in reads its sizes from"
                    ));
                    next.push_str(module);
                }
                None => next.push_str(module),
            }
            next.push('\n');
        }
        if used.kept_because.is_some() {
            used.modules.clear();
        } else {
            out = next;
        }
        uses.push(used);
    }
    (out, uses)
}

fn range(w: u32) -> String {
    if w == 1 {
        String::new()
    } else {
        format!("[{}:0] ", w - 1)
    }
}

/// JOP's method cache (`mcache`, vhdl/core/cache.vhd): `blocks` tags
/// searched in parallel on `find`; on a miss the method gets the blocks from
/// `nxt` on (FIFO), the tags of the blocks it covers cleared, its own tag in
/// its first block.
fn method_cache(name: &str, nets: &Nets) -> Option<String> {
    let width = |n: &str| nets.get(n).copied();
    let len = width("bc_len")?;
    let addr = width("bc_addr")?;
    let bb = width("block_addr")?;
    let tw = width("use_addr")?;
    let start = width("bcstart")?;
    let blocks = 1u32.checked_shl(bb)?;
    // bcstart is the block's number above `low` zero bits (jpc_width-2-block_bits).
    let low = start.checked_sub(bb)?;
    if width("tag")? != blocks * tw || width("nxt")? != bb || tw > addr || low >= len || bb > 16 {
        return None;
    }
    let zeros = if low == 0 { String::new() } else { format!(", {low}'d0") };
    Some(format!(
        "module {name}
  (input  clk,
   input  reset,
   input  {len_r}bc_len,
   input  {addr_r}bc_addr,
   input  find,
   output {start_r}bcstart,
   output reg rdy,
   output reg in_cache);
  // jopcal: a stand-in for vhdl/core/cache.vhd, written from its text.
  reg [1:0] state;
  reg {bb_r}block_addr;
  reg [{tw1}:0] tag [0:{last}];
  reg {bb_r}nxt;
  reg [{last}:0] clr_val;
  wire [{tw1}:0] use_addr = bc_addr[{tw1}:0];
  wire {bb_r}nr_of_blks = bc_len[{len1}:{low}];
  reg hit;
  reg {bb_r}hit_at;
  integer i, j, k;
  assign bcstart = {{block_addr{zeros}}};
  // The last matching block wins, as in the VHDL's loop.
  always @* begin
    hit = 1'b0;
    hit_at = {bb}'d0;
    for (i = 0; i < {blocks}; i = i + 1)
      if (tag[i] == use_addr) begin
        hit = 1'b1;
        hit_at = i[{bb1}:0];
      end
  end
  always @(posedge clk or posedge reset)
    if (reset) begin
      state <= 2'd0;
      rdy <= 1'b1;
      in_cache <= 1'b0;
      block_addr <= {bb}'d0;
      nxt <= {bb}'d0;
        for (j = 0; j < {blocks}; j = j + 1) tag[j] <= {tw}'d0;
    end else
      case (state)
        2'd0: begin
          rdy <= 1'b1;
          if (find) begin
            rdy <= 1'b0;
            state <= 2'd1;
          end
        end
        2'd1:
          if (hit) begin
            block_addr <= hit_at;
            in_cache <= 1'b1;
            state <= 2'd0;
          end else begin
            block_addr <= nxt;
            in_cache <= 1'b0;
            state <= 2'd2;
          end
        default: begin
          for (j = 0; j < {blocks}; j = j + 1)
            if (clr_val[j]) tag[j] <= {tw}'d0;
          tag[nxt] <= use_addr;
          state <= 2'd0;
          nxt <= nxt + nr_of_blks + {bb}'d1;
        end
      endcase
  // Block nxt+k is cleared for k up to the method's length in blocks.
  always @(posedge clk)
    for (k = 0; k < {blocks}; k = k + 1)
      clr_val[k] <= (k[{bb1}:0] - nxt) <= nr_of_blks;
endmodule",
        len_r = range(len),
        addr_r = range(addr),
        start_r = range(start),
        bb_r = range(bb),
        tw1 = tw - 1,
        last = blocks - 1,
        len1 = len - 1,
        bb1 = bb - 1,
    ))
}

/// The tags of JOP's object cache (`oc_tag`, vhdl/cache/ocache.vhd): one
/// tag and one valid bit per field for each of its lines, searched in
/// parallel.
fn object_cache_tags(name: &str, nets: &Nets) -> Option<String> {
    let width = |n: &str| nets.get(n).copied();
    let addr = width("tag_in_addr")?;
    let index = width("tag_in_index")?;
    let way = width("tag_in_wrline")?;
    let idx = width("idx")?;
    let lines = 1u32.checked_shl(way)?;
    let fields = 1u32.checked_shl(idx)?;
    if width("tag_in_wraddr")? != addr
        || width("tag_in_wrindex")? != index
        || width("tag_out_hit_line")? != way
        || width("tag_out_nxt_line")? != way
        || idx > index
        || way > 16
        || idx > 16
    {
        return None;
    }
    Some(format!(
        "module {name}
  (input  clk,
   input  reset,
   input  tag_in_invalidate,
   input  {addr_r}tag_in_addr,
   input  {index_r}tag_in_index,
   input  {addr_r}tag_in_wraddr,
   input  {way_r}tag_in_wrline,
   input  {index_r}tag_in_wrindex,
   input  tag_in_wr,
   input  tag_in_inc_nxt,
   output reg tag_out_hit,
   output reg tag_out_hit_tag,
   output reg {way_r}tag_out_hit_line,
   output {way_r}tag_out_nxt_line);
  // jopcal: a stand-in for oc_tag of vhdl/cache/ocache.vhd, written from its text.
  reg {addr_r}tag [0:{last}];
  reg [{fields1}:0] valid [0:{last}];
  reg {way_r}nxt;
  reg [{fields1}:0] v;
  integer i, j;
  assign tag_out_nxt_line = nxt;
  // The line is the OR of the numbers of the lines whose tag hits.
  always @* begin
    tag_out_hit = 1'b0;
    tag_out_hit_tag = 1'b0;
    tag_out_hit_line = {way}'d0;
    for (i = 0; i < {lines}; i = i + 1)
      if (tag[i] == tag_in_addr) begin
        if (valid[i][tag_in_index[{idx1}:0]]) tag_out_hit = 1'b1;
        if (valid[i] != {fields}'d0) begin
          tag_out_hit_tag = 1'b1;
          tag_out_hit_line = tag_out_hit_line | i[{way1}:0];
        end
      end
  end
  always @(posedge clk or posedge reset)
    if (reset) begin
      nxt <= {way}'d0;
      for (j = 0; j < {lines}; j = j + 1) begin
        tag[j] <= {addr}'d0;
        valid[j] <= {fields}'d0;
      end
    end else begin
      if (tag_in_wr) begin
        tag[tag_in_wrline] <= tag_in_wraddr;
        v = tag_in_inc_nxt ? {fields}'d0 : valid[tag_in_wrline];
        v[tag_in_wrindex[{idx1}:0]] = 1'b1;
        valid[tag_in_wrline] <= v;
      end
      if (tag_in_inc_nxt) nxt <= nxt + {way}'d1;
      // An invalidation empties every line, the one just written included.
      if (tag_in_invalidate) begin
        nxt <= {way}'d0;
        for (j = 0; j < {lines}; j = j + 1) valid[j] <= {fields}'d0;
      end
    end
endmodule",
        addr_r = range(addr),
        index_r = range(index),
        way_r = range(way),
        last = lines - 1,
        fields1 = fields - 1,
        idx1 = idx - 1,
        way1 = way - 1,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "module t\n  (input [7:0] b,\n   output [3:0] q);\n  wire c0;\n  wire c1;\n  wire c2;\n  wire [2:0] s;\n  reg [3:0] n9_o;\n  assign c2 = b == 8'b00000001;\n  assign c1 = b == 8'b00000010;\n  assign c0 = b == 8'b00000011;\n  assign s = {c2, c1, c0};\n  always @*\n    case (s)\n      3'b100: n9_o <= 4'b0001;\n      3'b010: n9_o <= 4'b0010;\n      3'b001: n9_o <= 4'b0100;\n      default: n9_o <= 4'b1000; // jopcal: GHDL 2.0 drops the default\n    endcase\n  assign q = n9_o;\nendmodule\n";

    #[test]
    fn a_case_over_exclusive_comparisons_becomes_tests_of_its_bits() {
        let (out, n) = one_hot_cases(TABLE);
        assert_eq!(n, OneHotRewrite { rewritten: 1, left: 0 });
        assert!(
            out.contains("    if (c2) n9_o <= 4'b0001;\n    else if (c1) n9_o <= 4'b0010;\n    else if (c0) n9_o <= 4'b0100;\n    else n9_o <= 4'b1000;\n  assign q"),
            "{out}"
        );
        assert!(!out.contains("case ("), "{out}");
    }

    #[test]
    fn a_choice_of_several_values_is_an_or_of_comparisons() {
        let v = TABLE.replace(
            "  assign c0 = b == 8'b00000011;",
            "  assign d0 = b == 8'b00000011;\n  assign d1 = b == 8'b00000100;\n  assign c0 = d0 | d1;",
        );
        assert_eq!(one_hot_cases(&v).1.rewritten, 1);
        // The same constant twice: two bits could be set at once.
        let twice = v.replace("8'b00000100", "8'b00000001");
        let (out, n) = one_hot_cases(&twice);
        assert_eq!(n, OneHotRewrite { rewritten: 0, left: 1 });
        assert_eq!(out.trim_end(), twice.trim_end());
    }

    #[test]
    fn selectors_not_shown_exclusive_stay_as_they_are() {
        // Comparisons of two different expressions.
        let other = TABLE.replace("assign c0 = b == 8'b00000011;", "assign c0 = a == 8'b00000011;");
        assert_eq!(one_hot_cases(&other).1, OneHotRewrite { rewritten: 0, left: 1 });
        // A bit that is not a comparison.
        let free = TABLE.replace("assign c0 = b == 8'b00000011;", "assign c0 = b[0];");
        assert_eq!(one_hot_cases(&free).1, OneHotRewrite { rewritten: 0, left: 1 });
        // A binary-coded case is no one-hot case: not counted at all.
        let binary = TABLE.replace("3'b100:", "3'b110:");
        assert_eq!(one_hot_cases(&binary).1, OneHotRewrite::default());
    }

    #[test]
    fn a_case_without_a_default_keeps_its_value_when_no_bit_is_set() {
        let v = TABLE.replace(
            "      default: n9_o <= 4'b1000; // jopcal: GHDL 2.0 drops the default\n",
            "",
        );
        let (out, n) = one_hot_cases(&v);
        assert_eq!(n.rewritten, 1);
        assert!(out.contains("else if (c0) n9_o <= 4'b0100;\n  assign q"), "{out}");
    }

    const CACHE_VHDL: &str = "entity mcache is\ngeneric (jpc_width : integer; block_bits : integer);\nport (clk : in std_logic); -- the ports\nend mcache;\n";

    const GHDL_MCACHE: &str = "module mcache_12_4_18\n  (input  clk,\n   input  reset,\n   input  [9:0] bc_len,\n   input  [17:0] bc_addr,\n   input  find,\n   output [9:0] bcstart,\n   output rdy,\n   output in_cache);\n  wire [1:0] state;\n  wire [3:0] block_addr;\n  wire [17:0] use_addr;\n  wire [287:0] tag;\n  wire [3:0] nxt;\n  wire [3:0] nr_of_blks;\n  wire [15:0] clr_val;\n  assign rdy = 1'b1;\nendmodule\n";

    #[test]
    fn the_fingerprint_ignores_comments_spacing_and_case_but_not_code() {
        let f = vhdl_fingerprint(CACHE_VHDL);
        assert_eq!(
            vhdl_fingerprint(&CACHE_VHDL.replace("-- the ports", "-- other words")),
            f
        );
        assert_eq!(
            vhdl_fingerprint(&CACHE_VHDL.replace("entity mcache is", "ENTITY  mcache\n\tIS")),
            f
        );
        assert_ne!(
            vhdl_fingerprint(&CACHE_VHDL.replace("block_bits : integer", "block_bits : natural")),
            f
        );
    }

    #[test]
    fn a_stand_in_takes_the_place_only_of_the_text_it_was_written_from() {
        let fingerprint: &'static str = Box::leak(vhdl_fingerprint(CACHE_VHDL).into_boxed_str());
        let table = [StandIn {
            entity: "mcache",
            fingerprint,
            write: method_cache,
        }];
        let verilog = format!("module top\n  (input clk);\nendmodule\n{GHDL_MCACHE}");
        let (out, uses) = put_in_place(&verilog, [CACHE_VHDL].into_iter(), &table);
        assert_eq!(uses[0].modules, vec!["mcache_12_4_18"], "{uses:?}");
        assert_eq!(uses[0].kept_because, None);
        assert!(out.starts_with("module top\n"), "{out}");
        // Its sizes are GHDL's module's: 16 blocks of 18-bit tags, the block's
        // number above 6 zero bits, the length in blocks from bc_len's top 4 bits.
        for part in [
            "module mcache_12_4_18\n  (input  clk,",
            "reg [17:0] tag [0:15];",
            "assign bcstart = {block_addr, 6'd0};",
            "wire [3:0] nr_of_blks = bc_len[9:6];",
        ] {
            assert!(out.contains(part), "{part} in\n{out}");
        }
        assert!(!out.contains("wire [287:0] tag;"), "{out}");
        // The user's own cache: GHDL's netlist, and why.
        let theirs = CACHE_VHDL.replace("block_bits : integer", "block_bits : natural");
        let (out, uses) = put_in_place(&verilog, [theirs.as_str()].into_iter(), &table);
        assert_eq!(out, verilog);
        assert_eq!(
            uses[0].kept_because.as_deref(),
            Some("its VHDL is not the text the stand-in was written from")
        );
        // A module whose sizes do not add up (tags of another width): kept.
        let odd = verilog.replace("wire [287:0] tag;", "wire [143:0] tag;");
        let (out, uses) = put_in_place(&odd, [CACHE_VHDL].into_iter(), &table);
        assert_eq!(out, odd);
        assert!(
            uses[0].kept_because.as_deref().unwrap().contains("not of the shape"),
            "{uses:?}"
        );
        // No such entity in the project: nothing said.
        assert_eq!(
            put_in_place(&verilog, ["entity other is\nend other;\n"].into_iter(), &table).1,
            vec![]
        );
    }
}
