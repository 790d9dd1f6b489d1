//! The calling-context tree as the agent grows it, free of JVMTI so that it
//! is unit-tested: methods as loaded ([`MethodCode`]), nodes with counts by
//! exact opcode and by basic block, and the call/return stream.

use jopcal_classfile::{
    basic_blocks, decode, opcode::is_invoke, pool_class_name, pool_member_ref, BlockMode, Constant,
};
use jopcal_profile::routed::{lookupswitch_operand, LOOKUPSWITCH, TYPE_CHECKS};
use jopcal_profile::{Arrival, Event, Exceptions, FieldKind, HandlerEntry, MethodInfo, Node, Profile};
use std::collections::{BTreeMap, HashMap};

/// Marks a bytecode index that does not start a basic block.
const NOT_A_LEADER: u32 = u32::MAX;

const INVOKESTATIC: u8 = 0xb8;
const NEW: u8 = 0xbb;
const NEWARRAY: u8 = 0xbc;
const ANEWARRAY: u8 = 0xbd;
const MULTIANEWARRAY: u8 = 0xc5;

/// The allocating bytecodes whose operand names, in the constant pool, the
/// class they make: without the pool, what they make is not known and
/// `MethodCode::allocates` says no.
pub const MAKES_A_NAMED_CLASS: [u8; 3] = [NEW, ANEWARRAY, MULTIANEWARRAY];

/// The bytecode a call of `class.name desc` stands for where it is a pure
/// observed bridge method (a long shift or `lcmp`: no exception, no call of
/// its own), which the instrumenting profiler runs in place of the call,
/// observing its operand in the caller's frame: to the profile it is the
/// bytecode, as the bridge's call is once spliced (`routed::splice`). The
/// bridge's `aastore` (it can throw) and the routed bytecodes stay calls.
pub fn inline_bridge(class: &str, name: &str, desc: &str) -> Option<u8> {
    use jopcal_profile::routed::{observed_named, Operand, BRIDGE_CLASS};
    let o = observed_named(name).filter(|_| class == BRIDGE_CLASS)?;
    let pure = matches!(o.operand, Operand::Count { .. } | Operand::LongCompare);
    (pure && desc == o.host).then_some(o.opcode)
}

/// One method as the JVM loaded it: identity, code, and what the agent
/// derives from the code once (block leaders, invoke targets).
#[derive(Debug)]
pub struct MethodCode {
    /// Index into the tree's method table.
    pub index: u32,
    pub info: MethodInfo,
    pub code: Box<[u8]>,
    /// Per bytecode index: the block number it starts, or [`NOT_A_LEADER`].
    block_at: Box<[u32]>,
    /// Start pc of each block.
    leaders: Box<[u32]>,
    /// Per invoke bytecode index: `(name, descriptor)` of the method it names.
    targets: HashMap<u32, (String, String)>,
    /// Per field access bytecode index: the kind of its field, where JOP's
    /// linker treats that kind apart (references, longs and doubles).
    field_kinds: HashMap<u32, FieldKind>,
    /// Per `checkcast` and `instanceof` bytecode index: the class it names
    /// (internal name), where that is a class or interface, not an array.
    type_targets: HashMap<u32, String>,
    /// Per allocating bytecode index (`new`, `newarray`, `anewarray`,
    /// `multianewarray`): the JVM signature of what it returns (`La/B;`,
    /// `[J`, `[[I`).
    allocated: HashMap<u32, String>,
    /// Per `invokestatic` of a pure observed bridge method (a long shift,
    /// `lcmp`): its bytecode, which the instrumenting profiler runs in place
    /// of the call ([`inline_bridge`]).
    inlined: HashMap<u32, u8>,
    /// Bytecode index of every instruction.
    starts: Box<[u32]>,
    /// The method's exception table (empty where the profiler had no class
    /// file of it: JVMTI gives no table, the single-step agent reads them
    /// from the class files as they load).
    pub handlers: Vec<HandlerEntry>,
}

/// A class file's exception table (`(start, end, handler, catch type)`,
/// the catch type a constant-pool index, 0 for every exception) as a
/// profile keeps it.
pub fn handler_entries(table: &[(u16, u16, u16, u16)], pool: &[Constant]) -> Vec<HandlerEntry> {
    table
        .iter()
        .map(|&(start, end, handler, catch)| HandlerEntry {
            start: u32::from(start),
            end: u32::from(end),
            handler: u32::from(handler),
            catch: (catch != 0).then(|| pool_class_name(pool, catch).unwrap_or("?").to_string()),
        })
        .collect()
}

/// The JVM signature of what the allocating bytecode `ins` returns (`new`
/// its class, `newarray` and `anewarray` an array of their element, a
/// `multianewarray` the array type it names); none for any other bytecode
/// or where the constant pool does not name the class.
fn allocated_signature(ins: &jopcal_classfile::Instruction, pool: &[Constant]) -> Option<String> {
    use jopcal_classfile::Operands;
    let class = |cp| pool_class_name(pool, cp);
    match (ins.opcode, &ins.operands) {
        (NEW, Operands::Cp(cp)) => class(*cp).map(|n| format!("L{n};")),
        (ANEWARRAY, Operands::Cp(cp)) => class(*cp).map(|n| {
            if n.starts_with('[') {
                format!("[{n}")
            } else {
                format!("[L{n};")
            }
        }),
        (MULTIANEWARRAY, Operands::MultiANewArray { cp, .. }) => class(*cp).map(str::to_string),
        (NEWARRAY, Operands::NewArray(atype)) => {
            let element = match atype {
                4 => 'Z',
                5 => 'C',
                6 => 'F',
                7 => 'D',
                8 => 'B',
                9 => 'S',
                10 => 'I',
                11 => 'J',
                _ => return None,
            };
            Some(format!("[{element}"))
        }
        _ => None,
    }
}

impl MethodCode {
    /// Derives blocks and invoke targets from `code`; `pool` resolves the
    /// invokes' constant-pool references (empty when unavailable).
    pub fn new(index: u32, info: MethodInfo, code: Vec<u8>, pool: &[Constant]) -> MethodCode {
        let mut block_at = vec![NOT_A_LEADER; code.len()].into_boxed_slice();
        let mut leaders = Vec::new();
        let mut targets = HashMap::new();
        let mut field_kinds = HashMap::new();
        let mut type_targets = HashMap::new();
        let mut allocated = HashMap::new();
        let mut inlined = HashMap::new();
        let mut starts = Vec::new();
        if let Ok(instructions) = decode(&code) {
            starts = instructions.iter().map(|i| i.pc).collect();
            // Handler entries are not known statically here (JVMTI has no
            // exception table); the agent counts them when a catch happens.
            for (n, b) in basic_blocks(&instructions, &[], BlockMode::Control).iter().enumerate() {
                block_at[b.start_pc as usize] = n as u32;
                leaders.push(b.start_pc);
            }
            for ins in instructions
                .iter()
                .filter(|i| jopcal_profile::model::FIELD_OPCODES.contains(&i.opcode))
            {
                if let jopcal_classfile::Operands::Cp(cp) = ins.operands {
                    if let Some(kind) =
                        pool_member_ref(pool, cp).and_then(|(_, _, desc)| FieldKind::of_descriptor(desc))
                    {
                        field_kinds.insert(ins.pc, kind);
                    }
                }
            }
            for ins in instructions.iter().filter(|i| TYPE_CHECKS.contains(&i.opcode)) {
                if let jopcal_classfile::Operands::Cp(cp) = ins.operands {
                    if let Some(name) = pool_class_name(pool, cp).filter(|n| !n.starts_with('[')) {
                        type_targets.insert(ins.pc, name.to_string());
                    }
                }
            }
            for ins in &instructions {
                if let Some(made) = allocated_signature(ins, pool) {
                    allocated.insert(ins.pc, made);
                }
            }
            for ins in instructions.iter().filter(|i| is_invoke(i.opcode)) {
                let cp = match ins.operands {
                    jopcal_classfile::Operands::Cp(cp)
                    | jopcal_classfile::Operands::InvokeInterface { cp, .. }
                    | jopcal_classfile::Operands::InvokeDynamic { cp } => cp,
                    _ => continue,
                };
                if let Some((class, name, desc)) = pool_member_ref(pool, cp) {
                    if ins.opcode == INVOKESTATIC {
                        if let Some(op) = inline_bridge(class, name, desc) {
                            inlined.insert(ins.pc, op);
                        }
                    }
                    targets.insert(ins.pc, (name.to_string(), desc.to_string()));
                }
            }
        }
        MethodCode {
            index,
            info,
            code: code.into_boxed_slice(),
            block_at,
            leaders: leaders.into_boxed_slice(),
            targets,
            field_kinds,
            type_targets,
            allocated,
            inlined,
            starts: starts.into_boxed_slice(),
            handlers: Vec::new(),
        }
    }

    /// The same, with the exception table its class file gives.
    pub fn with_handlers(mut self, handlers: Vec<HandlerEntry>) -> MethodCode {
        self.handlers = handlers;
        self
    }

    /// Bytecode index of every instruction (empty when the code does not decode).
    pub fn instruction_starts(&self) -> &[u32] {
        &self.starts
    }

    /// The bytecode index of the instruction after the one at `bci`, where a
    /// call made at `bci` returns to.
    pub fn next_instruction(&self, bci: u32) -> Option<u32> {
        let i = self.starts.binary_search(&bci).ok()?;
        self.starts.get(i + 1).copied()
    }

    /// The opcode at `bci`, if inside the code.
    #[inline]
    pub fn opcode_at(&self, bci: u32) -> Option<u8> {
        self.code.get(bci as usize).copied()
    }

    /// The operands `(local, increment)` of the `iinc` (or `wide iinc`) at `bci`.
    pub fn iinc_at(&self, bci: u32) -> Option<(u16, i16)> {
        let at = bci as usize;
        match *self.code.get(at)? {
            0x84 => Some((
                u16::from(*self.code.get(at + 1)?),
                i16::from(*self.code.get(at + 2)? as i8),
            )),
            0xc4 if *self.code.get(at + 1)? == 0x84 => {
                let b = self.code.get(at + 2..at + 6)?;
                Some((u16::from_be_bytes([b[0], b[1]]), i16::from_be_bytes([b[2], b[3]])))
            }
            _ => None,
        }
    }

    /// The local an `iload` at `last` pushes, where that `iload` ends at
    /// `bci`: the key of a `lookupswitch` at `bci` that `switch (local)`
    /// compiled to, which the agent can read (the operand stack it cannot).
    pub fn iload_before(&self, last: u32, bci: u32) -> Option<u16> {
        self.local_pushed(last, bci, 0x15, 0x1a)
    }

    /// The local an `aload` at `last` pushes, where that `aload` ends at
    /// `bci`: the object a `checkcast` or `instanceof` at `bci` tests, which
    /// the agent can read (the operand stack it cannot).
    pub fn aload_before(&self, last: u32, bci: u32) -> Option<u16> {
        self.local_pushed(last, bci, 0x19, 0x2a)
    }

    /// The local the load at `last` pushes (`load`: its opcode with an index,
    /// `load_0`: the first of its four short forms; `wide` too), where the
    /// load ends at `bci`.
    fn local_pushed(&self, last: u32, bci: u32, load: u8, load_0: u8) -> Option<u16> {
        let at = last as usize;
        let (slot, len) = match *self.code.get(at)? {
            op if op == load => (u16::from(*self.code.get(at + 1)?), 2),
            op if (load_0..load_0 + 4).contains(&op) => (u16::from(op - load_0), 1),
            0xc4 if *self.code.get(at + 1)? == load => {
                let b = self.code.get(at + 2..at + 4)?;
                (u16::from_be_bytes([b[0], b[1]]), 4)
            }
            _ => return None,
        };
        (at + len == bci as usize).then_some(slot)
    }

    /// The class (internal name) the `checkcast` or `instanceof` at `bci`
    /// tests against; none for an array type.
    pub fn type_target_at(&self, bci: u32) -> Option<&str> {
        self.type_targets.get(&bci).map(String::as_str)
    }

    /// Whether the allocating bytecode at `bci` makes an object of the class
    /// with JVM signature `signature` itself (`La/B;`, `[I`): for a
    /// `multianewarray`, the array or any of the arrays below it. Not so for
    /// what the JVM allocates on its own while the bytecode waits, such as
    /// the class it resolves and its mirror.
    pub fn allocates(&self, bci: u32, signature: &str) -> bool {
        self.allocated.get(&bci).is_some_and(|made| {
            if self.opcode_at(bci) == Some(MULTIANEWARRAY) {
                signature.starts_with('[') && made.ends_with(signature)
            } else {
                made == signature
            }
        })
    }

    /// How many of its cases the `lookupswitch` at `bci` compares `key`
    /// with on JOP: up to the case that matches, or every case (the default).
    /// Exact where cases share a target, which `lookupswitch_compares` cannot
    /// tell apart. At most 255.
    pub fn lookupswitch_key_compares(&self, bci: u32, key: i32) -> Option<u8> {
        self.lookupswitch_first(bci, |matched, _| matched == key)
    }

    /// How many of its cases the `lookupswitch` at `bci` compares the key
    /// with on JOP when it jumps to `target`: JOP's routine goes through the
    /// (match, offset) pairs in order and stops at the first that matches,
    /// so the case whose offset leads to `target` (the first such: cases
    /// that share a target cannot be told apart) is compared last, and the
    /// default follows every comparison. At most 255.
    pub fn lookupswitch_compares(&self, bci: u32, target: u32) -> Option<u8> {
        let offset = i64::from(target) - i64::from(bci);
        self.lookupswitch_first(bci, |_, jump| i64::from(jump) == offset)
    }

    /// The case (its match value) of the `tableswitch` or `lookupswitch`
    /// at `bci` that jumps to `target` (the first such; none for the
    /// default or where no switch is). What jopcal's bridge methods tell
    /// the single-step agent their operand by.
    pub fn switch_case(&self, bci: u32, target: u32) -> Option<i32> {
        const TABLESWITCH: u8 = 0xaa;
        let word = |k| self.switch_word(bci, k);
        let offset = i64::from(target) - i64::from(bci);
        let jumps_here = |k| word(k).is_some_and(|jump| i64::from(jump) == offset);
        // A tableswitch's default, low, high, then high - low + 1 offsets;
        // a lookupswitch's default, its count, then (match, offset) pairs.
        match self.opcode_at(bci)? {
            TABLESWITCH => {
                let (low, high) = (word(1)?, word(2)?);
                let cases = usize::try_from(i64::from(high) - i64::from(low) + 1).ok()?;
                (0..cases)
                    .find(|&j| jumps_here(3 + j))
                    .and_then(|j| i32::try_from(i64::from(low) + j as i64).ok())
            }
            LOOKUPSWITCH => {
                let pairs = usize::try_from(word(1)?).ok()?;
                (0..pairs)
                    .find(|&j| jumps_here(3 + 2 * j))
                    .and_then(|j| word(2 + 2 * j))
            }
            _ => None,
        }
    }

    /// The `k`th four-byte operand of the switch at `bci` (from its
    /// default, 0): they start at the first multiple of 4 after the opcode.
    fn switch_word(&self, bci: u32, k: usize) -> Option<i32> {
        let operands = (bci as usize + 4) & !3;
        let b = self.code.get(operands + 4 * k..operands + 4 * k + 4)?;
        Some(i32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The operand of the `lookupswitch` at `bci` (`routed::lookupswitch_operand`):
    /// the position (from 1) of the first (match, offset) pair that `hit`
    /// accepts, else the default after every pair. None where no lookupswitch is.
    fn lookupswitch_first(&self, bci: u32, hit: impl Fn(i32, i32) -> bool) -> Option<u8> {
        if self.opcode_at(bci)? != LOOKUPSWITCH {
            return None;
        }
        let word = |k| self.switch_word(bci, k);
        let pairs = usize::try_from(word(1)?).ok()?;
        for j in 0..pairs {
            if hit(word(2 + 2 * j)?, word(3 + 2 * j)?) {
                return Some(lookupswitch_operand(j + 1, true));
            }
        }
        Some(lookupswitch_operand(pairs, false))
    }

    /// The bytecode the call at `bci` stands for, where it calls a pure
    /// observed bridge method the instrumenting profiler runs inline.
    pub fn inlined_bridge_at(&self, bci: u32) -> Option<u8> {
        self.inlined.get(&bci).copied()
    }

    /// The kind of the field the access at `bci` names, where it is one JOP's
    /// linker treats apart.
    #[inline]
    pub fn field_kind_at(&self, bci: u32) -> Option<FieldKind> {
        self.field_kinds.get(&bci).copied()
    }

    /// The block that starts at `bci`, if one does.
    #[inline]
    pub fn block_starting_at(&self, bci: u32) -> Option<u32> {
        self.block_at.get(bci as usize).copied().filter(|b| *b != NOT_A_LEADER)
    }

    /// True when the invoke at `bci` names a method with `callee`'s name and
    /// descriptor: the entry of `callee` is that invoke's, not one the JVM
    /// made on its own in between (class loading, a static initializer).
    /// `invokedynamic` call sites name no method: any entry is theirs.
    pub fn invoke_enters(&self, bci: u32, callee: &MethodInfo) -> bool {
        if self.opcode_at(bci) == Some(0xba) {
            return callee.name != "<clinit>";
        }
        self.targets
            .get(&bci)
            .is_some_and(|(n, d)| *n == callee.name && *d == callee.descriptor)
    }
}

struct NodeCounts {
    parent: Option<u32>,
    method: u32,
    callsite: i32,
    invoke_opcode: u8,
    calls: u64,
    opcodes: Box<[u64; 256]>,
    blocks: Vec<u64>,
    /// Blocks found only at run time: exception handler entries.
    handler_blocks: BTreeMap<u32, u64>,
    /// `iinc` executions by (local, increment).
    iinc: BTreeMap<(u16, i16), u64>,
    /// Field accesses by (opcode, field kind).
    fields: BTreeMap<(u8, FieldKind), u64>,
    /// Executions by (opcode, the operand that decides its microcode path).
    operands: BTreeMap<(u8, u8), u64>,
}

/// The tree, the method table and the event stream of one region.
pub struct Tree {
    methods: Vec<MethodInfo>,
    leaders: Vec<Box<[u32]>>,
    nodes: Vec<NodeCounts>,
    children: HashMap<(u32, i32, u32, u8), u32>,
    events: Vec<Event>,
    region_start: usize,
    /// The region's allocations: (words in JOP's heap, count).
    allocations: BTreeMap<u32, u64>,
    /// Per method: its exception table.
    tables: Vec<Vec<HandlerEntry>>,
    /// The region's exceptions: where they arrived (the tables are added
    /// when the profile is made).
    exceptions: Exceptions,
}

impl Tree {
    /// A tree whose root is a context of `root_method`.
    pub fn new(root_method: &MethodCode) -> Tree {
        let mut t = Tree {
            methods: Vec::new(),
            leaders: Vec::new(),
            nodes: Vec::new(),
            children: HashMap::new(),
            events: Vec::new(),
            region_start: 0,
            allocations: BTreeMap::new(),
            tables: Vec::new(),
            exceptions: Exceptions::default(),
        };
        t.register(root_method);
        t.nodes.push(NodeCounts::new(None, root_method, -1, 0));
        // The root counts the region's one entry.
        t.nodes[0].calls = 1;
        t
    }

    /// Makes `m` known to the tree (idempotent); its index must be the next free one or known.
    pub fn register(&mut self, m: &MethodCode) {
        let i = m.index as usize;
        if i >= self.methods.len() {
            self.methods.resize(
                i + 1,
                MethodInfo {
                    class: String::new(),
                    name: String::new(),
                    descriptor: String::new(),
                    bytecode_len: 0,
                    native: false,
                    synchronized: false,
                },
            );
            self.leaders.resize(i + 1, Box::new([]));
            self.tables.resize(i + 1, Vec::new());
        }
        if self.methods[i].name.is_empty() {
            self.methods[i] = m.info.clone();
            self.leaders[i] = m.leaders.clone();
            self.tables[i] = m.handlers.clone();
        }
    }

    /// The context of `callee` entered from `parent` at `callsite` by
    /// `invoke_opcode` (0: by the JVM itself), created on first use.
    pub fn child(&mut self, parent: u32, callsite: i32, callee: &MethodCode, invoke_opcode: u8) -> u32 {
        self.register(callee);
        let key = (parent, callsite, callee.index, invoke_opcode);
        if let Some(&id) = self.children.get(&key) {
            return id;
        }
        let id = self.nodes.len() as u32;
        self.nodes
            .push(NodeCounts::new(Some(parent), callee, callsite, invoke_opcode));
        self.children.insert(key, id);
        id
    }

    /// One more entry of `node`.
    pub fn enter(&mut self, node: u32) {
        self.enter_n(node, 1);
    }

    /// `n` more entries of `node`.
    pub fn enter_n(&mut self, node: u32, n: u64) {
        self.nodes[node as usize].calls += n;
    }

    /// One executed bytecode `op` at a block start (`block`) or not.
    #[inline]
    pub fn count(&mut self, node: u32, op: u8, block: Option<u32>) {
        self.count_n(node, op, block, 1);
    }

    /// `times` executions of bytecode `op` at a block start (`block`) or not.
    pub fn count_n(&mut self, node: u32, op: u8, block: Option<u32>, times: u64) {
        let n = &mut self.nodes[node as usize];
        n.opcodes[op as usize] += times;
        if let Some(b) = block {
            n.blocks[b as usize] += times;
        }
    }

    /// One executed `iinc` (already counted as an opcode) of `local` by `inc`.
    pub fn count_iinc(&mut self, node: u32, local: u16, inc: i16) {
        self.count_iinc_n(node, local, inc, 1);
    }

    /// `times` executions of an `iinc` of `local` by `inc`.
    pub fn count_iinc_n(&mut self, node: u32, local: u16, inc: i16, times: u64) {
        *self.nodes[node as usize].iinc.entry((local, inc)).or_insert(0) += times;
    }

    /// One execution of `op` with the operand `value` that decides its
    /// microcode's path (`jopcal_profile::routed::OBSERVED`).
    pub fn count_operand(&mut self, node: u32, op: u8, value: u8) {
        self.count_operand_n(node, op, value, 1);
    }

    /// `times` executions of `op` with the operand `value` (none recorded when 0).
    pub fn count_operand_n(&mut self, node: u32, op: u8, value: u8, times: u64) {
        if times > 0 {
            *self.nodes[node as usize].operands.entry((op, value)).or_insert(0) += times;
        }
    }

    /// One executed field access (already counted as an opcode) of a field of `kind`.
    pub fn count_field(&mut self, node: u32, op: u8, kind: FieldKind) {
        self.count_field_n(node, op, kind, 1);
    }

    /// `times` field accesses of a field of `kind`.
    pub fn count_field_n(&mut self, node: u32, op: u8, kind: FieldKind, times: u64) {
        *self.nodes[node as usize].fields.entry((op, kind)).or_insert(0) += times;
    }

    /// An exception handler at `pc` that is not a static block start was entered.
    pub fn count_handler(&mut self, node: u32, pc: u32) {
        self.count_handler_n(node, pc, 1);
    }

    /// `times` entries of the handler at `pc` that is not a static block start.
    pub fn count_handler_n(&mut self, node: u32, pc: u32, times: u64) {
        *self.nodes[node as usize].handler_blocks.entry(pc).or_insert(0) += times;
    }

    /// An object or array that takes `words` words in JOP's heap was allocated.
    pub fn count_allocation(&mut self, words: u32) {
        *self.allocations.entry(words).or_insert(0) += 1;
    }

    /// Whether `node` is the host JVM's work, not the program's: a context
    /// the JVM entered on its own (class loading, a static initializer) or
    /// one below it, as `Profile::jvm_work` decides. JOP does neither in a
    /// program's region, so what such a context allocates is not counted.
    pub fn is_jvm_work(&self, node: u32) -> bool {
        let mut at = node;
        while let Some(n) = self.nodes.get(at as usize) {
            let Some(parent) = n.parent else { return false };
            if n.invoke_opcode == 0 {
                return true;
            }
            at = parent;
        }
        false
    }

    /// `times` objects or arrays of `words` words each were allocated.
    pub fn count_allocation_n(&mut self, words: u32, times: u64) {
        *self.allocations.entry(words).or_insert(0) += times;
    }

    /// An exception of the class `ancestry` names (then its superclasses)
    /// arrived at `pc` in the frame of `node`, `times` times, and the JVM
    /// entered `handler` there (none: it left the frame).
    pub fn count_arrival_n(&mut self, node: u32, pc: u32, ancestry: &[String], handler: Option<u32>, times: u64) {
        let thrown = self.exceptions.thrown_index(ancestry);
        let a = Arrival {
            node,
            pc,
            thrown,
            handler,
        };
        *self.exceptions.arrivals.entry(a).or_insert(0) += times;
    }

    pub fn event(&mut self, e: Event) {
        self.events.push(e);
    }

    /// The events recorded so far were tracked before the region: only what follows is counted.
    pub fn mark_region_start(&mut self) {
        self.region_start = self.events.len();
    }

    /// The finished profile.
    pub fn into_profile(self, benchmark: &str, region: &str, complete: bool) -> Profile {
        let leaders = self.leaders;
        let mut exceptions = self.exceptions;
        for a in exceptions.arrivals.keys() {
            let m = self.nodes[a.node as usize].method;
            let table = &self.tables[m as usize];
            if !table.is_empty() {
                exceptions.tables.insert(m, table.clone());
            }
        }
        let nodes = self
            .nodes
            .into_iter()
            .map(|n| {
                let opcodes = n
                    .opcodes
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| **c > 0)
                    .map(|(op, c)| (op as u8, *c))
                    .collect();
                let mut blocks: BTreeMap<u32, u64> = n
                    .blocks
                    .iter()
                    .enumerate()
                    .filter(|(_, c)| **c > 0)
                    .map(|(b, c)| (leaders[n.method as usize][b], *c))
                    .collect();
                for (pc, c) in n.handler_blocks {
                    *blocks.entry(pc).or_insert(0) += c;
                }
                Node {
                    parent: n.parent,
                    method: n.method,
                    callsite: n.callsite,
                    invoke_opcode: n.invoke_opcode,
                    calls: n.calls,
                    opcodes,
                    blocks,
                    iinc: n.iinc,
                    fields: n.fields,
                    operands: n.operands,
                }
            })
            .collect();
        Profile {
            benchmark: benchmark.to_string(),
            region: region.to_string(),
            complete,
            methods: self.methods,
            nodes,
            entry_stack: vec![0],
            region_start: self.region_start as u64,
            events: self.events,
            region_nanos: 0,
            allocations: self.allocations,
            heap_start: None,
            exceptions,
        }
    }
}

impl NodeCounts {
    fn new(parent: Option<u32>, m: &MethodCode, callsite: i32, invoke_opcode: u8) -> NodeCounts {
        NodeCounts {
            parent,
            method: m.index,
            callsite,
            invoke_opcode,
            calls: 0,
            opcodes: Box::new([0; 256]),
            blocks: vec![0; m.leaders.len()],
            handler_blocks: BTreeMap::new(),
            iinc: BTreeMap::new(),
            fields: BTreeMap::new(),
            operands: BTreeMap::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_bridges_pure_methods_run_inline() {
        let bridge = jopcal_profile::routed::BRIDGE_CLASS;
        assert_eq!(inline_bridge(bridge, "lshl", "(JI)J"), Some(0x79));
        assert_eq!(inline_bridge(bridge, "lushr", "(JI)J"), Some(0x7d));
        assert_eq!(inline_bridge(bridge, "lcmp", "(JJ)I"), Some(0x94));
        // aastore can throw; idiv runs the tree's routine; other classes and shapes are calls.
        assert_eq!(
            inline_bridge(bridge, "aastore", "([Ljava/lang/Object;ILjava/lang/Object;)V"),
            None
        );
        assert_eq!(inline_bridge(bridge, "idiv", "(II)I"), None);
        assert_eq!(inline_bridge("java/lang/Long", "lshl", "(JI)J"), None);
        assert_eq!(inline_bridge(bridge, "lshl", "(II)I"), None);
    }

    fn info(name: &str, desc: &str, len: u32) -> MethodInfo {
        MethodInfo {
            class: "t/T".into(),
            name: name.into(),
            descriptor: desc.into(),
            bytecode_len: len,
            native: false,
            synchronized: false,
        }
    }

    #[test]
    fn a_switch_case_is_found_from_where_it_jumped() {
        // 0 iload_0; 1 tableswitch (pad to 4) default +28, low 5, high 7, +29, +30, +31
        let mut code = vec![0x1a, 0xaa, 0, 0];
        for w in [28i32, 5, 7, 29, 30, 31] {
            code.extend(w.to_be_bytes());
        }
        code.extend([0x00; 4]);
        let m = MethodCode::new(0, info("s", "(I)V", code.len() as u32), code, &[]);
        assert_eq!(m.switch_case(1, 30), Some(5));
        assert_eq!(m.switch_case(1, 32), Some(7));
        assert_eq!(m.switch_case(1, 29), None, "the default");
        assert_eq!(m.switch_case(0, 30), None, "not a switch");
        assert_eq!(m.switch_case(99, 30), None, "past the code");
        // 0 iload_0; 1 lookupswitch default +20, 2 pairs: (-1, +21), (9, +22)
        let mut code = vec![0x1a, 0xab, 0, 0];
        for w in [20i32, 2, -1, 21, 9, 22] {
            code.extend(w.to_be_bytes());
        }
        let m = MethodCode::new(0, info("s", "(I)V", code.len() as u32), code, &[]);
        assert_eq!(m.switch_case(1, 22), Some(-1));
        assert_eq!(m.switch_case(1, 23), Some(9));
        assert_eq!(m.switch_case(1, 21), None, "the default");
    }

    #[test]
    fn an_allocating_bytecode_owns_only_what_it_makes() {
        // 0 new #2 (a/B); 3 newarray long; 5 anewarray #2; 8 anewarray #3 ([I);
        // 11 multianewarray #5 ([[[J) 2; 15 iconst_0
        let pool = vec![
            Constant::Unusable,
            Constant::Utf8("a/B".into()),
            Constant::Class(1),
            Constant::Class(4),
            Constant::Utf8("[I".into()),
            Constant::Class(6),
            Constant::Utf8("[[[J".into()),
        ];
        let code = vec![0xbb, 0, 2, 0xbc, 11, 0xbd, 0, 2, 0xbd, 0, 3, 0xc5, 0, 5, 2, 0x03];
        let m = MethodCode::new(0, info("c", "()V", code.len() as u32), code, &pool);
        assert!(m.allocates(0, "La/B;"));
        // The class a `new` resolves, made by the JVM while the `new` waits.
        assert!(!m.allocates(0, "Ljava/lang/Class;"));
        assert!(!m.allocates(0, "La/Bc;"));
        assert!(m.allocates(3, "[J"));
        assert!(!m.allocates(3, "[I"));
        assert!(m.allocates(5, "[La/B;"));
        assert!(!m.allocates(5, "La/B;"));
        assert!(m.allocates(8, "[[I"));
        assert!(!m.allocates(8, "[I"));
        for made in ["[[[J", "[[J", "[J"] {
            assert!(m.allocates(11, made), "{made}");
        }
        assert!(!m.allocates(11, "J"));
        assert!(!m.allocates(11, "[[I"));
        assert!(!m.allocates(15, "[I"), "not an allocating bytecode");
        assert!(!m.allocates(99, "[I"), "past the code");
    }

    #[test]
    fn a_type_check_of_a_local_names_its_class_and_its_steps() {
        // 0 aload_1; 1 instanceof #2 (a/B); 4 aload 5; 6 checkcast #3 ([I); 9 return
        let pool = vec![
            Constant::Unusable,
            Constant::Utf8("a/B".into()),
            Constant::Class(1),
            Constant::Class(4),
            Constant::Utf8("[I".into()),
        ];
        let code = vec![0x2b, 0xc1, 0, 2, 0x19, 5, 0xc0, 0, 3, 0xb1];
        let m = MethodCode::new(0, info("c", "()V", code.len() as u32), code, &pool);
        assert_eq!(m.aload_before(0, 1), Some(1));
        assert_eq!(m.aload_before(4, 6), Some(5));
        assert_eq!(m.aload_before(1, 4), None, "not an aload");
        assert_eq!(m.type_target_at(1), Some("a/B"));
        assert_eq!(m.type_target_at(6), None, "an array type");
        let chain = ["a/C", "a/B", "java/lang/Object"];
        use jopcal_profile::routed::{type_check_operand, TYPE_FAILED, TYPE_INTERFACE};
        assert_eq!(type_check_operand(chain, "a/C", false), Some(0));
        assert_eq!(type_check_operand(chain, "java/lang/Object", false), Some(2));
        assert_eq!(
            type_check_operand(chain, "a/D", false),
            Some(TYPE_FAILED + 3),
            "failed after all three"
        );
        assert_eq!(type_check_operand(chain, "a/I", true), Some(TYPE_INTERFACE));
        let long: Vec<String> = (0..200).map(|k| format!("c{k}")).collect();
        let long = || long.iter().map(String::as_str);
        assert_eq!(type_check_operand(long(), "c127", false), Some(127));
        assert_eq!(type_check_operand(long(), "c128", false), None, "too far to record");
        assert_eq!(type_check_operand(long(), "none", false), None, "too long to record");
    }

    #[test]
    fn a_lookupswitch_compares_up_to_the_case_it_jumped_to() {
        // 0 iload_0; 1 lookupswitch (2 bytes of padding), default +40,
        // 3 pairs: 3 -> +20, 300 -> +24, 3000 -> +20 (sharing the first's target).
        let mut code = vec![0x1a, LOOKUPSWITCH, 0, 0];
        for w in [40i32, 3, 3, 20, 300, 24, 3000, 20] {
            code.extend(w.to_be_bytes());
        }
        code.resize(64, 0x00);
        let m = MethodCode::new(0, info("s", "(I)V", code.len() as u32), code, &[]);
        assert_eq!(m.lookupswitch_compares(1, 21), Some(1));
        assert_eq!(m.lookupswitch_compares(1, 25), Some(2));
        assert_eq!(
            m.lookupswitch_compares(1, 41),
            Some(128 + 3),
            "the default: every case compared, no match read"
        );
        assert_eq!(m.lookupswitch_compares(0, 41), None, "no lookupswitch there");
        // By the key: 3000 shares 3's target and is the third case compared.
        assert_eq!(m.iload_before(0, 1), Some(0), "iload_0 pushes the key");
        assert_eq!(m.iload_before(0, 2), None, "the iload does not end there");
        assert_eq!(m.lookupswitch_key_compares(1, 3000), Some(3));
        assert_eq!(m.lookupswitch_key_compares(1, 3), Some(1));
        assert_eq!(
            m.lookupswitch_key_compares(1, 7),
            Some(128 + 3),
            "no case: every one compared"
        );
        assert_eq!(m.lookupswitch_key_compares(0, 3), None);
    }

    /// `run`: 0 iconst_2; 1 invokestatic #3 f(I)I; 4 ireturn, with a pool that names f.
    fn run_code() -> MethodCode {
        let pool = vec![
            Constant::Unusable,
            Constant::Utf8("f".into()),
            Constant::Utf8("(I)I".into()),
            Constant::Methodref {
                class: 5,
                name_and_type: 4,
            },
            Constant::NameAndType { name: 1, descriptor: 2 },
            Constant::Class(6),
            Constant::Utf8("t/T".into()),
        ];
        MethodCode::new(0, info("run", "()I", 5), vec![0x05, 0xb8, 0, 3, 0xac], &pool)
    }

    #[test]
    fn invoke_targets_tell_program_calls_from_jvm_calls() {
        let run = run_code();
        assert!(run.invoke_enters(1, &info("f", "(I)I", 2)));
        assert!(!run.invoke_enters(1, &info("<clinit>", "()V", 2)));
        assert!(!run.invoke_enters(1, &info("f", "(J)I", 2)));
        assert!(!run.invoke_enters(0, &info("f", "(I)I", 2)));
        assert_eq!(run.block_starting_at(0), Some(0));
        assert_eq!(run.block_starting_at(1), None);
    }

    #[test]
    fn tree_keeps_call_sites_apart_and_builds_a_valid_profile() {
        let run = run_code();
        let f = MethodCode::new(1, info("f", "(I)I", 2), vec![0x1a, 0xac], &[]);
        let mut t = Tree::new(&run);
        t.count(0, 0x05, run.block_starting_at(0));
        t.count(0, 0xb8, None);
        let a = t.child(0, 1, &f, 0xb8);
        assert_eq!(t.child(0, 1, &f, 0xb8), a);
        let b = t.child(0, 4, &f, 0xb8);
        assert_ne!(a, b);
        let jvm = t.child(0, 1, &f, 0);
        assert_ne!(a, jvm);
        for _ in 0..3 {
            t.enter(a);
            t.event(Event::Invoke(a));
            t.count(a, 0x1a, f.block_starting_at(0));
            t.count(a, 0xac, None);
            t.event(Event::Return);
        }
        t.count_handler(a, 1);
        let p = t.into_profile("T", "harness", true);
        p.validate().unwrap();
        assert_eq!(p.nodes[a as usize].calls, 3);
        assert_eq!(p.nodes[a as usize].opcodes[&0x1a], 3);
        assert_eq!(p.nodes[a as usize].blocks, BTreeMap::from([(0, 3), (1, 1)]));
        assert_eq!(p.nodes[0].blocks, BTreeMap::from([(0, 1)]));
        assert_eq!(p.nodes[jvm as usize].invoke_opcode, 0);
        assert_eq!(p.events.len(), 6);
    }
}
