//! Which bytecodes a host profile routes through the tree's runtime
//! routines ([`ROUTABLE`]) or observes the operands of ([`OBSERVED`],
//! monitors, `lookupswitch`): the tables both the profile's reader
//! (the `model` module) and its splicing (the `routed` module) go by.

/// The bridge class jopcal generates (internal name).
pub const BRIDGE_CLASS: &str = "jopcal/host/JopBytecodes";
/// The tree's runtime class whose `f_<mnemonic>` methods are the routines.
pub const RUNTIME_CLASS: &str = "com/jopdesign/sys/JVM";

/// A bytecode a host profile can route through the runtime's routine: its
/// opcode, mnemonic, its operands and result as the host JVM types them
/// (the bridge method's descriptor) and as JOP's routine takes them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Routable {
    pub opcode: u8,
    pub mnemonic: &'static str,
    pub host: &'static str,
    pub jop: &'static str,
}

const fn r(opcode: u8, mnemonic: &'static str, host: &'static str, jop: &'static str) -> Routable {
    Routable {
        opcode,
        mnemonic,
        host,
        jop,
    }
}

/// Every bytecode whose JOP routine's time depends on its operands: integer
/// and long division, long multiply, floating point, and the narrowing
/// conversions (a branch on the sign). (Constants such as `fconst_1` are
/// priced well by a constant; the object bytecodes' routines reach into the
/// runtime's heap, which the host does not have.)
pub const ROUTABLE: [Routable; 33] = [
    r(0x62, "fadd", "(FF)F", "(II)I"),
    r(0x63, "dadd", "(DD)D", "(JJ)J"),
    r(0x66, "fsub", "(FF)F", "(II)I"),
    r(0x67, "dsub", "(DD)D", "(JJ)J"),
    r(0x69, "lmul", "(JJ)J", "(JJ)J"),
    r(0x6a, "fmul", "(FF)F", "(II)I"),
    r(0x6b, "dmul", "(DD)D", "(JJ)J"),
    r(0x6c, "idiv", "(II)I", "(II)I"),
    r(0x6d, "ldiv", "(JJ)J", "(JJ)J"),
    r(0x6e, "fdiv", "(FF)F", "(II)I"),
    r(0x6f, "ddiv", "(DD)D", "(JJ)J"),
    r(0x70, "irem", "(II)I", "(II)I"),
    r(0x71, "lrem", "(JJ)J", "(JJ)J"),
    r(0x72, "frem", "(FF)F", "(II)I"),
    r(0x73, "drem", "(DD)D", "(JJ)J"),
    r(0x76, "fneg", "(F)F", "(I)I"),
    r(0x77, "dneg", "(D)D", "(J)J"),
    r(0x86, "i2f", "(I)F", "(I)I"),
    r(0x87, "i2d", "(I)D", "(I)J"),
    r(0x89, "l2f", "(J)F", "(J)I"),
    r(0x8a, "l2d", "(J)D", "(J)J"),
    r(0x8b, "f2i", "(F)I", "(I)I"),
    r(0x8c, "f2l", "(F)J", "(I)J"),
    r(0x8d, "f2d", "(F)D", "(I)J"),
    r(0x8e, "d2i", "(D)I", "(J)I"),
    r(0x8f, "d2l", "(D)J", "(J)J"),
    r(0x90, "d2f", "(D)F", "(J)I"),
    r(0x91, "i2b", "(I)I", "(I)I"),
    r(0x93, "i2s", "(I)I", "(I)I"),
    r(0x95, "fcmpl", "(FF)I", "(II)I"),
    r(0x96, "fcmpg", "(FF)I", "(II)I"),
    r(0x97, "dcmpl", "(DD)I", "(JJ)I"),
    r(0x98, "dcmpg", "(DD)I", "(JJ)I"),
];

/// A bytecode JOP runs in microcode whose path (and cycles) its operands
/// decide: a long shift by its count, `lcmp` by the signs and the order of
/// its operands. The bridge runs it as the host does, in the arm of a
/// switch on that one small value (`Node::operands`): its call only lets
/// the profilers see the value (the single-step agent by the arm it steps
/// into, the instrumenting profiler from the parameters, at `slot`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observed {
    pub opcode: u8,
    pub mnemonic: &'static str,
    /// The bridge method's descriptor (the bytecode's operands and result).
    pub host: &'static str,
    pub operand: Operand,
}

/// What the profiler records of an observed bytecode's operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operand {
    /// The int local `slot`, masked as the bytecode masks it (a shift count).
    Count { slot: u8, mask: u8 },
    /// The two long locals (slots 0 and 2): their [`long_compare_class`].
    LongCompare,
    /// The element the store replaces, of the array in slot 0 at the index
    /// in slot 1: [`REF_OLD_NULL`] or [`REF_OLD_HELD`] (JOP's write barrier
    /// reads the old reference's state only when there is one).
    OldElement,
}

impl Observed {
    /// The largest value recorded.
    pub fn max(&self) -> u8 {
        match self.operand {
            Operand::Count { mask, .. } => mask,
            Operand::LongCompare => LONG_COMPARE_CLASSES - 1,
            Operand::OldElement => REF_OLD_HELD,
        }
    }
}

/// How many values [`long_compare_class`] takes.
pub const LONG_COMPARE_CLASSES: u8 = 12;

/// The class of `lcmp`'s operands `a` and `b`: their signs and their order,
/// `6 * (a < 0) + 3 * (b < 0) + (1 + the comparison: -1, 0 or 1)`. (JOP's
/// microcode tells the signs apart before it subtracts, and then the
/// difference's zero and sign: its path is the class's.)
pub fn long_compare_class(a: i64, b: i64) -> u8 {
    let order = match a.cmp(&b) {
        std::cmp::Ordering::Less => 0,
        std::cmp::Ordering::Equal => 1,
        std::cmp::Ordering::Greater => 2,
    };
    6 * u8::from(a < 0) + 3 * u8::from(b < 0) + order
}

/// The long shifts (the count is the top operand, after the long: slot 2),
/// `lcmp`, and `aastore`, which JOP runs as a Java routine whose write
/// barrier takes longer when the slot held a reference (the store itself
/// is the host's).
pub const OBSERVED: [Observed; 5] = [
    Observed {
        opcode: 0x79,
        mnemonic: "lshl",
        host: "(JI)J",
        operand: Operand::Count { slot: 2, mask: 63 },
    },
    Observed {
        opcode: 0x7b,
        mnemonic: "lshr",
        host: "(JI)J",
        operand: Operand::Count { slot: 2, mask: 63 },
    },
    Observed {
        opcode: 0x7d,
        mnemonic: "lushr",
        host: "(JI)J",
        operand: Operand::Count { slot: 2, mask: 63 },
    },
    Observed {
        opcode: 0x94,
        mnemonic: "lcmp",
        host: "(JJ)I",
        operand: Operand::LongCompare,
    },
    Observed {
        opcode: 0x53,
        mnemonic: "aastore",
        host: "([Ljava/lang/Object;ILjava/lang/Object;)V",
        operand: Operand::OldElement,
    },
];

/// `monitorexit`: on JOP it releases the global lock (and enables
/// interrupts) only when the processor's lock count reaches 0, a longer
/// path than a nested exit's. The agent counts the monitors each thread
/// holds and records each exit, the linker's of a `synchronized` method's
/// return included, as [`MONITOR_RELEASED`] or [`MONITOR_NESTED`].
pub const MONITOREXIT: u8 = 0xc3;
/// The exit leaves no monitor held: the count reaches 0.
pub const MONITOR_RELEASED: u8 = 0;
/// The exit leaves a monitor held (nested or recursive locking).
pub const MONITOR_NESTED: u8 = 1;

/// `lookupswitch`: the profile records with each execution how many of its
/// cases JOP's Java routine compares the key with (the routine goes through
/// them in order and stops at the first match, then reads the match's
/// offset): a match after `n` comparisons as `n` (1 to
/// [`LOOKUPSWITCH_MATCH_MAX`]), the default, which follows every one of the
/// `n` cases, as [`LOOKUPSWITCH_DEFAULT`] + `n` (up to 255). Profiles before
/// format 8 record every execution as its comparisons.
pub const LOOKUPSWITCH: u8 = 0xab;
/// The most comparisons a `lookupswitch` match is recorded with.
pub const LOOKUPSWITCH_MATCH_MAX: u8 = 127;
/// A `lookupswitch` default's recorded operand: this plus its comparisons.
pub const LOOKUPSWITCH_DEFAULT: u8 = 128;

/// The operand a profile records for a `lookupswitch` that compared the key
/// with `compares` cases and matched the last (`matched`), or none (the
/// default).
pub fn lookupswitch_operand(compares: usize, matched: bool) -> u8 {
    if matched {
        compares.min(usize::from(LOOKUPSWITCH_MATCH_MAX)) as u8
    } else {
        (usize::from(LOOKUPSWITCH_DEFAULT) + compares).min(usize::from(u8::MAX)) as u8
    }
}

/// `checkcast` and `instanceof`: the profile records, where an `aload`
/// pushed the object tested, the path JOP's routine takes. A class named:
/// the superclass steps from the object's class up to it (0: its own
/// class), up to [`TYPE_STEPS_MAX`]; where it is none of them, the test
/// fails after walking them all, recorded as [`TYPE_FAILED`] plus their
/// number. An interface named: [`TYPE_INTERFACE`] (the routine reads the
/// class's interface table instead).
pub const TYPE_CHECKS: [u8; 2] = [0xc0, 0xc1];
/// The most superclass steps a profile records.
pub const TYPE_STEPS_MAX: u8 = 127;
/// A failed test of a class: this plus the classes walked (the object's
/// own and each superclass, `java.lang.Object` included).
pub const TYPE_FAILED: u8 = 128;
/// A test of an interface.
pub const TYPE_INTERFACE: u8 = 255;

/// The operand a profile records for a type check that walked `chain` (the
/// object's class, then its superclasses) looking for `target`, an
/// interface or not; `None` where the chain is too long to record.
pub fn type_check_operand<'a>(chain: impl IntoIterator<Item = &'a str>, target: &str, interface: bool) -> Option<u8> {
    if interface {
        return Some(TYPE_INTERFACE);
    }
    let mut walked = 0usize;
    for c in chain {
        if c == target {
            return u8::try_from(walked).ok().filter(|k| *k <= TYPE_STEPS_MAX);
        }
        walked += 1;
    }
    u8::try_from(usize::from(TYPE_FAILED) + walked)
        .ok()
        .filter(|v| *v < TYPE_INTERFACE)
}

/// `putstatic` and `putfield` of a reference: the profile records whether
/// the field held a reference before the store ([`REF_OLD_NULL`],
/// [`REF_OLD_HELD`]): JOP's write barrier (the runtime's Java routine for
/// `putstatic_ref` and `putfield_ref`) reads the old reference's state
/// only when there is one.
pub const REF_STORES: [u8; 2] = [0xb3, 0xb5];
/// The field held no reference before the store.
pub const REF_OLD_NULL: u8 = 0;
/// The field held a reference before the store.
pub const REF_OLD_HELD: u8 = 1;

/// The largest value a profile records for `op` (`Node::operands`), where
/// it records one.
pub fn operand_max(op: u8) -> Option<u8> {
    match op {
        MONITOREXIT => Some(MONITOR_NESTED),
        LOOKUPSWITCH => Some(u8::MAX),
        op if TYPE_CHECKS.contains(&op) => Some(TYPE_INTERFACE),
        op if REF_STORES.contains(&op) => Some(REF_OLD_HELD),
        _ => observed(op).map(Observed::max),
    }
}

/// The observed bytecode `op`, if it is one.
pub fn observed(op: u8) -> Option<&'static Observed> {
    OBSERVED.iter().find(|o| o.opcode == op)
}

/// The observed bytecode named `mnemonic`.
pub fn observed_named(mnemonic: &str) -> Option<&'static Observed> {
    OBSERVED.iter().find(|o| o.mnemonic == mnemonic)
}

/// The routable bytecode `op`, if it is one.
pub fn routable(op: u8) -> Option<&'static Routable> {
    ROUTABLE.iter().find(|r| r.opcode == op)
}

/// The routable bytecode named `mnemonic`.
pub fn routable_named(mnemonic: &str) -> Option<&'static Routable> {
    ROUTABLE.iter().find(|r| r.mnemonic == mnemonic)
}
