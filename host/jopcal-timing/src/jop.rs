//! JOP's own bytecodes as its linker writes them into an image: their
//! opcode numbers and the names the `[native]` table prices them by, and the
//! linker's typed field accesses (a field access whose field is a reference,
//! a long or a double becomes an opcode of its own).

use jopcal_classfile::opcode::mnemonic;
use jopcal_profile::model::FIELD_OPCODES;
use jopcal_profile::FieldKind;

/// The opcode JOP's linker writes for `invokespecial` of a superclass method.
pub const INVOKESUPER: u8 = 236;

/// The name the `[native]` table prices a call of `com.jopdesign.sys.Native`'s
/// method `name` by: the bytecode JOP's linker writes for it (its
/// JOPizer's mapping; `Native.rd` is `jopsys_rd`, and the conversions that
/// only retype a stack word, `makeLong` or `toInt`, are `jopsys_nop`).
pub fn native_method_bytecode(name: &str) -> String {
    match name {
        "rdMem" => "jopsys_rdmem".into(),
        "wrMem" => "jopsys_wrmem".into(),
        "rdIntMem" => "jopsys_rdint".into(),
        "wrIntMem" => "jopsys_wrint".into(),
        "getSP" => "jopsys_getsp".into(),
        "setSP" => "jopsys_setsp".into(),
        "getVP" => "jopsys_getvp".into(),
        "setVP" => "jopsys_setvp".into(),
        "int2extMem" => "jopsys_int2ext".into(),
        "ext2intMem" => "jopsys_ext2int".into(),
        "makeLong" | "toInt" | "toFloat" | "toObject" | "toIntArray" | "toLong" | "toDouble" | "toRtThreadImpl" => {
            "jopsys_nop".into()
        }
        "invalidate" => "jopsys_inval".into(),
        "memCopy" => "jopsys_memcpy".into(),
        "condMove" | "condMoveRef" => "jopsys_cond_move".into(),
        other => format!("jopsys_{}", other.to_ascii_lowercase()),
    }
}

/// The name the `[native]` table prices JOP's opcode `op` (202 and up) by
/// (opcodes of JOP's own that JopSim and the microcode do not execute are
/// dispatched to Java as `sys_noim`).
pub fn opcode_name(op: u8) -> &'static str {
    match op {
        204 => "jopsys_inval",
        206 => "jopsys_lock",
        207 => "jopsys_unlock",
        209 => "jopsys_rd",
        210 => "jopsys_wr",
        211 => "jopsys_rdmem",
        212 => "jopsys_wrmem",
        213 => "jopsys_rdint",
        214 => "jopsys_wrint",
        215 => "jopsys_getsp",
        216 => "jopsys_setsp",
        217 => "jopsys_getvp",
        218 => "jopsys_setvp",
        219 => "jopsys_int2ext",
        220 => "jopsys_ext2int",
        221 => "jopsys_nop",
        222 => "jopsys_invoke",
        223 => "jopsys_cond_move",
        224 => "getstatic_ref",
        225 => "putstatic_ref",
        226 => "getfield_ref",
        227 => "putfield_ref",
        228 => "getstatic_long",
        229 => "putstatic_long",
        230 => "getfield_long",
        231 => "putfield_long",
        232 => "jopsys_memcpy",
        233 => "jopsys_getfield",
        234 => "jopsys_putfield",
        INVOKESUPER => "invokesuper",
        238 => "jopsys_getstatic",
        239 => "jopsys_putstatic",
        240 => "sys_int",
        241 => "sys_exc",
        _ => "sys_noim",
    }
}

/// JOP's own opcode (202 and up) that the `[native]` table prices by `name`.
pub fn native_opcode(name: &str) -> Option<u8> {
    (202..=u8::MAX).find(|&op| mnemonic(op).is_none() && opcode_name(op) == name)
}

/// The name of any opcode of an image: a JVM opcode's mnemonic, else the
/// `[native]` name of JOP's own.
pub fn any_opcode_name(op: u8) -> &'static str {
    mnemonic(op).unwrap_or_else(|| opcode_name(op))
}

/// The opcode JOP's linker writes for the field access `op` (getstatic,
/// putstatic, getfield, putfield) of a field of `kind`.
pub fn typed_field(op: u8, kind: FieldKind) -> Option<u8> {
    let base = match kind {
        FieldKind::Reference => 224,
        FieldKind::Wide => 228,
    };
    FIELD_OPCODES.contains(&op).then(|| base + (op - FIELD_OPCODES.start()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn typed_field_accesses_follow_the_linkers_numbering() {
        assert_eq!(
            typed_field(0xb5, FieldKind::Reference).map(opcode_name),
            Some("putfield_ref")
        );
        assert_eq!(
            typed_field(0xb2, FieldKind::Reference).map(opcode_name),
            Some("getstatic_ref")
        );
        assert_eq!(
            typed_field(0xb4, FieldKind::Wide).map(opcode_name),
            Some("getfield_long")
        );
        assert_eq!(
            typed_field(0xb3, FieldKind::Wide).map(opcode_name),
            Some("putstatic_long")
        );
        assert_eq!(typed_field(0x60, FieldKind::Wide), None);
    }
}
