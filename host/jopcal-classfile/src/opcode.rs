//! The JVM opcode table: mnemonics as the JVM specification spells them and
//! each opcode's operand layout.

/// An opcode byte.
pub type Opcode = u8;

/// How an opcode's operands are laid out in the code array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// No operands.
    None,
    /// One unsigned byte: a local variable index (two bytes after `wide`).
    Local,
    /// `bipush`: a signed byte.
    Byte,
    /// `sipush`: a signed 16-bit value.
    Short,
    /// `ldc`: a one-byte constant-pool index.
    Cp1,
    /// A two-byte constant-pool index.
    Cp2,
    /// A signed 16-bit branch offset.
    Branch2,
    /// A signed 32-bit branch offset.
    Branch4,
    /// `iinc`: local index and signed constant (both widened after `wide`).
    Iinc,
    /// `newarray`: the array type code.
    NewArray,
    /// `multianewarray`: class index and dimensions.
    MultiANewArray,
    /// `invokeinterface`: index, count, a zero byte.
    InvokeInterface,
    /// `invokedynamic`: index, two zero bytes.
    InvokeDynamic,
    TableSwitch,
    LookupSwitch,
    /// The `wide` prefix.
    Wide,
    /// Not a valid opcode in a class file.
    Invalid,
}

const NAMES: [&str; 202] = [
    "nop",
    "aconst_null",
    "iconst_m1",
    "iconst_0",
    "iconst_1",
    "iconst_2",
    "iconst_3",
    "iconst_4",
    "iconst_5",
    "lconst_0",
    "lconst_1",
    "fconst_0",
    "fconst_1",
    "fconst_2",
    "dconst_0",
    "dconst_1",
    "bipush",
    "sipush",
    "ldc",
    "ldc_w",
    "ldc2_w",
    "iload",
    "lload",
    "fload",
    "dload",
    "aload",
    "iload_0",
    "iload_1",
    "iload_2",
    "iload_3",
    "lload_0",
    "lload_1",
    "lload_2",
    "lload_3",
    "fload_0",
    "fload_1",
    "fload_2",
    "fload_3",
    "dload_0",
    "dload_1",
    "dload_2",
    "dload_3",
    "aload_0",
    "aload_1",
    "aload_2",
    "aload_3",
    "iaload",
    "laload",
    "faload",
    "daload",
    "aaload",
    "baload",
    "caload",
    "saload",
    "istore",
    "lstore",
    "fstore",
    "dstore",
    "astore",
    "istore_0",
    "istore_1",
    "istore_2",
    "istore_3",
    "lstore_0",
    "lstore_1",
    "lstore_2",
    "lstore_3",
    "fstore_0",
    "fstore_1",
    "fstore_2",
    "fstore_3",
    "dstore_0",
    "dstore_1",
    "dstore_2",
    "dstore_3",
    "astore_0",
    "astore_1",
    "astore_2",
    "astore_3",
    "iastore",
    "lastore",
    "fastore",
    "dastore",
    "aastore",
    "bastore",
    "castore",
    "sastore",
    "pop",
    "pop2",
    "dup",
    "dup_x1",
    "dup_x2",
    "dup2",
    "dup2_x1",
    "dup2_x2",
    "swap",
    "iadd",
    "ladd",
    "fadd",
    "dadd",
    "isub",
    "lsub",
    "fsub",
    "dsub",
    "imul",
    "lmul",
    "fmul",
    "dmul",
    "idiv",
    "ldiv",
    "fdiv",
    "ddiv",
    "irem",
    "lrem",
    "frem",
    "drem",
    "ineg",
    "lneg",
    "fneg",
    "dneg",
    "ishl",
    "lshl",
    "ishr",
    "lshr",
    "iushr",
    "lushr",
    "iand",
    "land",
    "ior",
    "lor",
    "ixor",
    "lxor",
    "iinc",
    "i2l",
    "i2f",
    "i2d",
    "l2i",
    "l2f",
    "l2d",
    "f2i",
    "f2l",
    "f2d",
    "d2i",
    "d2l",
    "d2f",
    "i2b",
    "i2c",
    "i2s",
    "lcmp",
    "fcmpl",
    "fcmpg",
    "dcmpl",
    "dcmpg",
    "ifeq",
    "ifne",
    "iflt",
    "ifge",
    "ifgt",
    "ifle",
    "if_icmpeq",
    "if_icmpne",
    "if_icmplt",
    "if_icmpge",
    "if_icmpgt",
    "if_icmple",
    "if_acmpeq",
    "if_acmpne",
    "goto",
    "jsr",
    "ret",
    "tableswitch",
    "lookupswitch",
    "ireturn",
    "lreturn",
    "freturn",
    "dreturn",
    "areturn",
    "return",
    "getstatic",
    "putstatic",
    "getfield",
    "putfield",
    "invokevirtual",
    "invokespecial",
    "invokestatic",
    "invokeinterface",
    "invokedynamic",
    "new",
    "newarray",
    "anewarray",
    "arraylength",
    "athrow",
    "checkcast",
    "instanceof",
    "monitorenter",
    "monitorexit",
    "wide",
    "multianewarray",
    "ifnull",
    "ifnonnull",
    "goto_w",
    "jsr_w",
];

/// The specification mnemonic of `op`, or `None` for bytes that are not opcodes.
pub fn mnemonic(op: Opcode) -> Option<&'static str> {
    NAMES.get(op as usize).copied()
}

/// The opcode with mnemonic `name` (lower case, as the specification spells it).
pub fn by_mnemonic(name: &str) -> Option<Opcode> {
    NAMES.iter().position(|n| *n == name).map(|i| i as Opcode)
}

/// Every valid opcode with its mnemonic, in opcode order.
pub fn all() -> impl Iterator<Item = (Opcode, &'static str)> {
    NAMES.iter().enumerate().map(|(i, n)| (i as Opcode, *n))
}

/// The operand layout of `op`.
pub fn layout(op: Opcode) -> Layout {
    use Layout::*;
    match op {
        0..=15 => None,
        16 => Byte,
        17 => Short,
        18 => Cp1,
        19 | 20 => Cp2,
        21..=25 => Local,
        26..=53 => None,
        54..=58 => Local,
        59..=131 => None,
        132 => Iinc,
        133..=152 => None,
        153..=168 => Branch2,
        169 => Local,
        170 => TableSwitch,
        171 => LookupSwitch,
        172..=177 => None,
        178..=184 => Cp2,
        185 => InvokeInterface,
        186 => InvokeDynamic,
        187 => Cp2,
        188 => NewArray,
        189 => Cp2,
        190 | 191 => None,
        192 | 193 => Cp2,
        194 | 195 => None,
        196 => Wide,
        197 => MultiANewArray,
        198 | 199 => Branch2,
        200 | 201 => Branch4,
        _ => Invalid,
    }
}

/// True for opcodes after which execution does not fall through.
pub fn ends_flow(op: Opcode) -> bool {
    matches!(op, 167 | 200 | 169 | 170 | 171 | 172..=177 | 191)
}

/// True for conditional and unconditional branches, jsr, ret, switches, returns, athrow.
pub fn is_control(op: Opcode) -> bool {
    matches!(op, 153..=171 | 172..=177 | 191 | 198..=201)
}

/// True for invokes.
pub fn is_invoke(op: Opcode) -> bool {
    matches!(op, 182..=186)
}

/// True for the return family.
pub fn is_return(op: Opcode) -> bool {
    matches!(op, 172..=177)
}

/// True for bytecodes that may throw an exception (the precise block variant
/// ends a block after each of them): array accesses, integer division, field
/// accesses (null or class initialization), invokes, allocation, casts,
/// monitors, `ldc` of class constants, `athrow`.
pub fn may_throw(op: Opcode) -> bool {
    matches!(
        op,
        18..=20 | 46..=53 | 79..=86 | 108 | 109 | 112 | 113 | 178..=195 | 197
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_matches_the_specification_at_landmarks() {
        assert_eq!(mnemonic(0), Some("nop"));
        assert_eq!(mnemonic(0x15), Some("iload"));
        assert_eq!(mnemonic(0x1a), Some("iload_0"));
        assert_eq!(mnemonic(0x2a), Some("aload_0"));
        assert_eq!(mnemonic(0x60), Some("iadd"));
        assert_eq!(mnemonic(0x84), Some("iinc"));
        assert_eq!(mnemonic(0x94), Some("lcmp"));
        assert_eq!(mnemonic(0xa7), Some("goto"));
        assert_eq!(mnemonic(0xaa), Some("tableswitch"));
        assert_eq!(mnemonic(0xb1), Some("return"));
        assert_eq!(mnemonic(0xb6), Some("invokevirtual"));
        assert_eq!(mnemonic(0xba), Some("invokedynamic"));
        assert_eq!(mnemonic(0xc4), Some("wide"));
        assert_eq!(mnemonic(0xc9), Some("jsr_w"));
        assert_eq!(mnemonic(0xca), None);
        assert_eq!(by_mnemonic("ldc_w"), Some(0x13));
        assert_eq!(all().count(), 202);
    }
}
